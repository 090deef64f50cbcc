#pragma once
// The Vulkan backend's entry point: one Instance, one selected physical device, and one logical
// Device per distinct feature set.
//
// Why a device per feature set rather than one device with the union enabled lazily: a VkDevice
// cannot gain features after creation, so "lazily" would mean recreating it and invalidating
// every buffer and pipeline; and enabling more than a kernel declared would let the validation
// layer miss a kernel whose capabilities outrun its declared needs. Logical devices are cheap
// (one queue, a command buffer, a query pool each); in practice a program uses two or three
// feature sets.
//
// The rest of halfway keeps working without Vulkan: nothing here aborts, and a missing loader,
// driver or device is an Error from the constructor.

#include "halfway/runtime/vulkan_api/device.hpp"
#include "halfway/runtime/vulkan_api/instance.hpp"
#include "halfway/support/error.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace halfway::vk {

struct RuntimeOptions {
  InstanceOptions instance;
  // Index or name substring; empty: HALFWAY_VK_DEVICE, then the preference order.
  std::string device;
  DeviceOptions device_options;
};

class Runtime {
public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Instance& instance() { return *instance_; }
  const DeviceInfo& info() const { return info_; }

  // The Device with exactly `needs` enabled, created on first use. Throws Error(Unsupported)
  // "needs X; device D lacks it" naming `kernel` when the device cannot.
  Device& device(const Features& needs, const std::string& kernel = {});
  std::size_t device_count() const { return devices_.size(); }

  // Forwarded from the Instance: tests fail on any.
  std::vector<ValidationMessage> validation_messages() const;

private:
  RuntimeOptions options_;
  std::unique_ptr<Instance> instance_; // declared first: destroyed after the devices
  DeviceInfo info_;
  std::map<uint64_t, std::unique_ptr<Device>> devices_; // by feature_bits()
};

} // namespace halfway::vk
