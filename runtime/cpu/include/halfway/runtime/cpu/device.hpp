#pragma once
// The CPU device: kernels lowered to LLVM IR (halfway::codegen_llvm), compiled by ORC LLJIT for
// the host CPU, workgroups run in parallel on a thread pool. It implements rt::Device exactly as
// the interpreter does: same buffers, same errors, and, without opt-ins, the same bits.
//
// Launch memo: compiled code is keyed by (structural hash, "cpu", budget key, code variant); the
// variant covers check_bounds, the single-rounding mode and whether the launch's buffers overlap.
// A hit costs a map lookup; a miss lowers, optimises and compiles (logged at debug level).
//
// Failed launches leave buffers untouched: only checked launches can fail once the kernel runs,
// and those compute into copies of the written buffers and copy back on success.

#include "halfway/codegen/llvm/options.hpp"
#include "halfway/runtime/device.hpp"

#include <memory>

namespace halfway::rt {

struct CpuDeviceOptions {
  // How an accepted single-rounding opt-in is realised (codegen/llvm/options.hpp).
  codegen::SingleRoundingMode single_rounding = codegen::SingleRoundingMode::Contract;
  // Threads of the pool, the launching thread included; 0: all cores.
  unsigned threads = 0;
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

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// make_cpu_device(registry) (runtime/factories.hpp) makes one with the default options.
std::unique_ptr<Device> make_cpu_device(policy::Registry* registry, CpuDeviceOptions options);

} // namespace halfway::rt
