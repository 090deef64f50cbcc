#pragma once
// Private: filling a DeviceInfo from a VkPhysicalDevice.

#include "halfway/runtime/vulkan_api/device_info.hpp"

#include <volk.h>

namespace halfway::vk::detail {

DeviceInfo query_device(VkPhysicalDevice physical, uint32_t index);

} // namespace halfway::vk::detail
