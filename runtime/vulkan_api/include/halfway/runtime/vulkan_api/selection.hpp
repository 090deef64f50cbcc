#pragma once
// Which physical device runs kernels. A pure function over DeviceInfo, so tests can check the
// policy on device lists this machine does not have.
//
// Without a selector the best usable device wins: discrete, then integrated, then virtual, then
// CPU (lavapipe), ties broken by enumeration order. A selector, from the caller or from
// HALFWAY_VK_DEVICE, is either a decimal index into the enumeration or a case-insensitive
// substring of the device name ("llvmpipe", "nvidia"). A selector that matches nothing, or only
// unusable devices, is an error listing what there is: silently falling back would benchmark the
// wrong device.

#include "halfway/runtime/vulkan_api/device_info.hpp"
#include "halfway/support/error.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace halfway::vk {

inline constexpr const char* kDeviceEnv = "HALFWAY_VK_DEVICE";

// Lower is better.
int type_rank(DeviceType type);

// Returns a position in `devices`. Throws Error(Device) for an empty list and Error(Usage) for a
// selector that matches no usable device.
std::size_t select_device(const std::vector<DeviceInfo>& devices, const std::string& selector);

// The explicit selector if non-empty, else HALFWAY_VK_DEVICE, else "".
std::string effective_selector(const std::string& explicit_selector);

} // namespace halfway::vk
