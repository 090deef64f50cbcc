#pragma once
// Private: what an Instance holds.

#include "halfway/runtime/vulkan_api/instance.hpp"

#include <mutex>
#include <vector>
#include <volk.h>

namespace halfway::vk::detail {

struct InstanceState {
  VkInstance instance = VK_NULL_HANDLE;
  uint32_t api_version = 0;
  bool validation = false;
  // Fetched for this instance, not taken from volk's globals: those follow the newest Instance,
  // which may not have debug utils enabled, and this one must still destroy its messenger.
  PFN_vkCreateDebugUtilsMessengerEXT create_messenger = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger = nullptr;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  std::vector<VkPhysicalDevice> physical_devices;
  std::vector<DeviceInfo> devices;

  mutable std::mutex messages_mutex;
  std::vector<ValidationMessage> messages;
};

} // namespace halfway::vk::detail
