#pragma once
// Private: what a Device holds, shared with its Buffers and Pipelines.

#include "halfway/runtime/vulkan_api/device.hpp"
#include "halfway/support/error.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <volk.h>

namespace halfway::vk::detail {

// A VkBuffer with its own memory; `mapped` is null unless the memory is host-visible.
struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  std::byte* mapped = nullptr;
};

enum class MemoryUse { Mapped, DeviceLocal, Staging };

struct DeviceState {
  DeviceInfo info;
  Features features;
  DeviceOptions options;
  bool staged = false;
  uint32_t api_version = 0; // what this device may use: the lower of instance and device versions
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory{};

  VkDevice device = VK_NULL_HANDLE;
  VolkDeviceTable vk{}; // this device's functions: never volk's globals
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkQueryPool timestamps = VK_NULL_HANDLE; // two queries; null without timestamp support
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  uint32_t descriptor_capacity = 0; // storage-buffer descriptors in the pool
  Allocation staging;
  uint64_t staging_size = 0;

  std::map<uint64_t, std::unique_ptr<Pipeline>> pipelines;
  std::string lost; // the call that lost the device; empty while it works
  // A dispatch was given up on while it may still run (its fence timed out): nothing it may touch
  // is freed or destroyed from then on, the device itself included, since a shader still running
  // would write into freed memory (a crash or heap corruption much later). Deliberately leaked;
  // the device runs nothing more.
  bool abandoned = false;

  DeviceState() = default;
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;
  ~DeviceState();

  // check() from result.hpp with this device's name, remembering device loss.
  void check(VkResult result, std::string_view call, const ErrorContext& context);
  // Throws Error(Device) once the device has been lost.
  void ensure_alive(const ErrorContext& context) const;
  // "Vulkan device NAME, driver INFO": what a crash report names.
  std::string describe() const;

  Allocation allocate(uint64_t bytes, MemoryUse use, const ErrorContext& context);
  void release(Allocation& allocation) noexcept;
  // The staging buffer, grown to at least `bytes`.
  Allocation& staging_buffer(uint64_t bytes, const ErrorContext& context);

  // Starts recording into the device's one command buffer.
  VkCommandBuffer begin(const ErrorContext& context);
  // Ends recording, submits, waits for the fence (DeviceOptions::fence_timeout_ns) and resets.
  // With `wait`, waits in slices and may stop the work (DispatchWait); returns whether it did.
  bool submit_and_wait(const ErrorContext& context, const DispatchWait* wait = nullptr);
  void barrier(VkPipelineStageFlags src_stages, VkAccessFlags src_access,
               VkPipelineStageFlags dst_stages, VkAccessFlags dst_access);
};

} // namespace halfway::vk::detail
