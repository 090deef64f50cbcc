#pragma once
// Constructors of the devices, one per backend library, declared here below them all: each
// device library defines its own (runtime/cpu, runtime/vulkan, runtime/devices for the
// interpreter), and runtime/devices/src/devices.cpp maps device names to them; a backend left
// out of the build is simply absent from device_names().

#include "halfway/runtime/device.hpp"

#include <memory>
#include <string>

namespace halfway::rt {

std::unique_ptr<Device> make_interpreter_device(policy::Registry* registry);
std::unique_ptr<Device> make_cpu_device(policy::Registry* registry);
// `selector`: a device index or name substring; empty: HALFWAY_VK_DEVICE, else the best device.
std::unique_ptr<Device> make_vulkan_device(policy::Registry* registry, const std::string& selector);

} // namespace halfway::rt
