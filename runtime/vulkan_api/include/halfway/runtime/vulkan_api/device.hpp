#pragma once
// A logical device with exactly one feature set: buffers, cached pipelines and dispatch.
//
// Each Device enables exactly the Features it was created with (Vulkan 1.1/1.2 feature structs,
// plus VK_EXT_shader_atomic_float when a float atomic is asked for) and accepts any Program whose
// needs those cover. Runtime keeps one Device per distinct feature set, so each kernel runs with
// exactly what it declared and the validation layer can catch a mismatch; callers that must share
// buffers between kernels with different needs create one Device for the union.
//
// Device-level Vulkan calls go through a per-device volk table rather than volk's globals, so
// several Devices (and Instances) can coexist in a process.
//
// Everything is synchronous: dispatch() and transfers submit, wait on a fence and return. A
// Device is not thread-safe; use one per thread or lock around it. After the device is lost,
// every call throws.

#include "halfway/runtime/vulkan_api/buffer.hpp"
#include "halfway/runtime/vulkan_api/device_info.hpp"
#include "halfway/runtime/vulkan_api/dispatch.hpp"
#include "halfway/runtime/vulkan_api/features.hpp"
#include "halfway/runtime/vulkan_api/program.hpp"
#include "halfway/support/error.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace halfway::vk {

class Instance;

enum class MemoryMode {
  Auto,        // host-visible on unified-memory devices, staged on the others
  HostVisible, // always map (slow on discrete GPUs, but no copies)
  Staged,      // always stage: lets lavapipe exercise the discrete-GPU path
};

struct DeviceOptions {
  MemoryMode memory = MemoryMode::Auto;
  // How long dispatch() waits for the fence before reporting a hung kernel.
  uint64_t fence_timeout_ns = 120'000'000'000;
};

class Device {
public:
  // Throws Error(Unsupported), naming `kernel`, when the device lacks one of `features`.
  Device(Instance& instance, const DeviceInfo& info, const Features& features,
         DeviceOptions options = {}, const std::string& kernel = {});
  ~Device();
  Device(Device&&) noexcept;
  Device& operator=(Device&&) noexcept;

  const DeviceInfo& info() const;
  const Features& features() const;
  bool staged() const;

  Buffer create_buffer(uint64_t bytes, std::string name = {});
  // A buffer that is host-visible and coherent whatever the memory mode.
  Buffer create_mapped_buffer(uint64_t bytes, std::string name = {});

  // The pipeline cached under `key` (the launch-memo key: structural hash, device, budget),
  // created from `program` on a miss. Throws Error(Internal) when `key` was cached for different
  // SPIR-V, and Error(Unsupported) when this Device lacks what the program needs.
  Pipeline& pipeline(uint64_t key, const Program& program);
  Pipeline* find_pipeline(uint64_t key);
  std::size_t pipeline_count() const;

  // Binds `buffers` to bindings 0..n-1, pushes `push_constants` (exactly the program's
  // push_constant_bytes), dispatches `groups` and waits. Errors name the kernel.
  // With `wait`, the fence is waited on in slices and the dispatch may be stopped early
  // (DispatchWait; LaunchTiming::stopped says it was).
  LaunchTiming dispatch(Pipeline& pipeline, const std::vector<Buffer*>& buffers,
                        std::span<const std::byte> push_constants, GroupGrid groups,
                        const DispatchWait* wait = nullptr);

  // For the runtime's own sources.
  detail::DeviceState& state() { return *state_; }
  // A dispatch was given up on while it may still run (DeviceState::abandoned): the device's
  // objects are leaked, and its instance must be too.
  bool abandoned() const;

private:
  std::unique_ptr<detail::DeviceState> state_;
};

// The bytes of a trivially copyable push-constant block.
template <class T> std::span<const std::byte> push_bytes(const T& block) {
  return std::as_bytes(std::span<const T>(&block, 1));
}

} // namespace halfway::vk
