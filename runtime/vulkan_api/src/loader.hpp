#pragma once
// Private: the one place that touches volk's process-global state, and the shared wording of
// "no Vulkan here" errors.

#include "halfway/support/error.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <volk.h>

namespace halfway::vk::detail {

// volkInitialize() once per process; throws Error(Device) every time when it failed, so a
// machine without libvulkan.so.1 gets the same clear message from each attempt.
void ensure_loader();
// volkLoadInstanceOnly under a lock. Device-level functions use per-device tables instead.
void load_instance_functions(VkInstance instance);

// Error(Device) "no Vulkan device: <what>" with the package to install, naming any
// VK_ICD_FILENAMES / VK_DRIVER_FILES override that may be the cause.
Error no_device_error(const std::string& what);

inline uint64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

} // namespace halfway::vk::detail
