#pragma once
// The CPU device: kernels lowered to LLVM IR (halfway::codegen_llvm), compiled by ORC LLJIT for
// the host CPU, workgroups run in parallel on a thread pool. It implements rt::Device exactly as
// the interpreter does: same buffers, same errors, and, without opt-ins, the same bits.
//
// Launch memo: compiled code is keyed by (structural hash, "cpu", budget key, code variant); the
// variant covers the memory checks, check_bounds, cancellability, the single-rounding mode and
// whether the launch's buffers overlap.
// A hit costs a map lookup; a miss lowers, optimises and compiles (logged at debug level).
//
// Memory safety without check_bounds: an out-of-bounds load, store or atomic (global or shared,
// any index type) ends the launch with the interpreter's OutOfBounds error, never a crash or a
// stray read or write. Buffer accesses at 32-bit indices are caught by guard pages for free
// (rt::HostBuffer, runtime/cpu/src/guard.hpp); 64-bit indices and shared arrays are compared.
// check_bounds adds what is not free: division by zero and shift overflow.
//
// Failed launches leave buffers untouched: the buffers bound to written parameters are saved
// before the kernel runs and put back on any failure (out of bounds, timeout, interruption).
//
// Timeouts and cancellation (LaunchOptions::timeout, cancel): such launches run code that polls a
// cancel word at every loop back edge, the runtime checks it between chunks of workgroups, and a
// watchdog thread raises it at the deadline or when the flag goes up.

#include "halfway/codegen/llvm/options.hpp"
#include "halfway/runtime/device.hpp"

#include <memory>

namespace halfway::rt {

// How launches without check_bounds keep accesses in bounds (codegen/llvm/README.md).
enum class MemoryMode : uint8_t {
  Guarded,           // guard faults for buffers, explicit checks for shared memory (the default)
  Explicit,          // explicit checks everywhere, as for unguarded buffers (tests, comparisons)
  UncheckedBaseline, // no checks: the code of earlier versions, for benchmarks' baselines only.
                     // An out-of-bounds access is undefined; never use it for real work.
};

struct CpuDeviceOptions {
  // How an accepted single-rounding opt-in is realised (codegen/llvm/options.hpp).
  codegen::llvm::SingleRoundingMode single_rounding = codegen::llvm::SingleRoundingMode::Contract;
  // Threads of the pool, the launching thread included; 0: all cores.
  unsigned threads = 0;
  MemoryMode memory = MemoryMode::Guarded;
};

class CpuDevice final : public Device {
public:
  // Reads budgets from `registry`, or from policy::global_registry() when it is null. The
  // registry must outlive the device.
  explicit CpuDevice(policy::Registry* registry = nullptr, CpuDeviceOptions options = {});
  ~CpuDevice() override;

  const DeviceInfo& info() const override;
  LaunchResult launch(const ir::VerifiedKernel& kernel, const Grid& grid, std::span<const Arg> args,
                      const LaunchOptions& options = {}) override;

  // Entries in the launch memo (tests). clear_memo() makes every later launch compile afresh
  // (benchmarks of compile time); the old code stays allocated until the device is destroyed.
  size_t memo_size() const;
  void clear_memo();
  // Counts since construction (tests: which path a launch took).
  struct Stats {
    uint64_t guard_faults = 0;     // launches that ended in a guard fault
    uint64_t snapshots = 0;        // launches that saved their written buffers first
    uint64_t proven_in_bounds = 0; // launches that did not need to (runtime/cpu/src/bounds.hpp)
  };
  Stats stats() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// make_cpu_device(registry) (runtime/factories.hpp) makes one with the default options.
std::unique_ptr<Device> make_cpu_device(policy::Registry* registry, CpuDeviceOptions options);

} // namespace halfway::rt
