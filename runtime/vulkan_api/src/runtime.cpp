#include "halfway/runtime/vulkan_api/runtime.hpp"

#include "halfway/runtime/vulkan_api/selection.hpp"

namespace halfway::vk {

Runtime::Runtime(RuntimeOptions options)
    : options_(std::move(options)), instance_(std::make_unique<Instance>(options_.instance)) {
  const auto& devices = instance_->devices();
  info_ = devices[select_device(devices, effective_selector(options_.device))];
}

Runtime::~Runtime() {
  // Destroying the instance under a device that still runs a dispatch is undefined (the
  // validation layer crashed in a later vkCreateDevice): leak it with the device.
  for (const auto& [key, device] : devices_)
    if (device->abandoned()) {
      static_cast<void>(instance_.release());
      break;
    }
}

Device& Runtime::device(const Features& needs, const std::string& kernel) {
  require_features(info_, needs, kernel);
  uint64_t key = feature_bits(needs);
  if (auto it = devices_.find(key); it != devices_.end())
    return *it->second;
  auto created =
      std::make_unique<Device>(*instance_, info_, needs, options_.device_options, kernel);
  return *devices_.emplace(key, std::move(created)).first->second;
}

std::vector<ValidationMessage> Runtime::validation_messages() const {
  return instance_->validation_messages();
}

} // namespace halfway::vk
