#pragma once
// The device interface every backend implements: the reference interpreter, the CPU JIT and
// Vulkan. A launch takes a verified kernel, a grid and one Arg per parameter, and either
// completes or throws a halfway::Error.
//
// Failed launches: a device that throws leaves every buffer argument exactly as it was before the
// launch (a device either computes into its own storage and copies results back only on success,
// or saves what it may overwrite and restores it before throwing), so output is never
// half-written.

#include "halfway/ir/verifier.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "halfway/policy/budget.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/runtime/cancel.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace halfway::policy {
class Registry;
}

namespace halfway::rt {

struct LaunchOptions {
  // The checks that are not free (the interpreter always makes them): integer division by zero
  // and shift overflow on the CPU and Vulkan devices. Races are never checked there.
  // Out-of-bounds accesses are an error on every device whatever this says.
  bool check_bounds = false;
  bool deterministic = false; // one thread, workgroups in order: for reproducing a failure
  unsigned threads = 0;       // 0: all cores
  // Wall-clock limit of the launch (0: none). Past it the launch ends with ErrorKind::Timeout.
  std::chrono::milliseconds timeout{0};
  // Raised by another thread or a signal handler to end the launch with ErrorKind::Interrupted.
  const std::atomic<bool>* cancel = nullptr;

  // The Cancel of a launch starting now.
  Cancel make_cancel() const;
};

struct LaunchResult {
  double wall_ms = 0;    // host time of the whole launch, copies included
  double device_ms = 0;  // time of the dispatch itself, where the device can measure it
  double compile_ms = 0; // code generation and compilation, 0 on a memo hit
  bool memo_hit = false;
  policy::Budget budget; // the budget the code was generated under
};

// What a device is and what it can run.
struct DeviceInfo {
  std::string name;        // "interp", "cpu", "vulkan:llvmpipe (LLVM 15.0.6, 256 bits)"
  std::string description; // multi-line: features, float controls, limits
  num::FloatControls controls;
  std::array<uint64_t, 3> max_groups{0xffffffffull, 0xffffffffull, 0xffffffffull};
  // Limits checked before every launch (check_limits): bytes of shared memory per workgroup,
  // workgroup size per dimension and in total, and bytes of one buffer binding.
  uint64_t max_shared_bytes = uint64_t{1} << 30;
  std::array<uint32_t, 3> max_workgroup_size{1024, 1024, 64};
  uint32_t max_workgroup_invocations = 1024;
  uint64_t max_buffer_bytes = ~uint64_t{0};
  // Whether this device may fuse an unbarriered multiply(-add) into a narrowing (so single
  // rounding is observable on it). Lavapipe never fuses; the CPU JIT does under `contract`.
  bool may_fuse = false;
  // How precisely the device computes math (ir::MathProfile): the checker holds a Vulkan device
  // to the op table's device precision column through the interpreter's interval shadow
  // (specs/device-precision.md), a correctly rounded one to the reference bit for bit.
  ir::MathProfile math = ir::MathProfile::CorrectlyRounded;
};

// Throws ErrorKind::Limit, naming the kernel, the limit and the device, when the kernel's shared
// memory, its workgroup size, the grid or a buffer argument exceeds what `device` allows. Sizes
// are summed with checked arithmetic. Every device calls it at the start of launch().
void check_limits(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args,
                  const DeviceInfo& device);

// The bytes of shared memory `k` declares, each array starting at its element's alignment;
// nullopt when the sum does not fit 64 bits.
std::optional<uint64_t> shared_bytes(const ir::Kernel& k);

class Device {
public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  const std::string& name() const { return info().name; }

  // Runs the kernel. Reads the kernel's budget from the policy registry the device was made with
  // (the process-wide one by default) and compiles under it, memoised by (structural hash,
  // device, budget).
  virtual LaunchResult launch(const ir::VerifiedKernel& kernel, const Grid& grid,
                              std::span<const Arg> args, const LaunchOptions& options = {}) = 0;
};

// Names of the devices this build can make: "interp", "cpu", "vulkan" (when a Vulkan device
// exists). make_device throws a Device error with a clear message for one that cannot be made.
std::vector<std::string> device_names();
std::unique_ptr<Device> make_device(const std::string& name, policy::Registry* registry = nullptr);

} // namespace halfway::rt
