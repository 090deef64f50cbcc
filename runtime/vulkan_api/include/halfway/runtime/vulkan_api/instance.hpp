#pragma once
// The Vulkan instance: loader, optional validation, and the list of physical devices.
//
// Validation is the runtime's test oracle for things lavapipe does not enforce (a kernel using
// 16-bit storage without the feature runs fine there; only VK_LAYER_KHRONOS_validation reports
// it). So when validation is on, every message of severity warning or error is recorded, and
// tests fail on any. Requesting validation where the layer is not installed is an error, never a
// silent run without it.
//
// volk's instance-level function pointers are process-global. They are loaded from whichever
// Instance was created last; that is harmless because for instance-level functions the loader
// hands out its trampolines, which dispatch on the handle. Several Instances may coexist (tests
// create fresh ones). Device-level functions never use volk's globals: each Device loads its own
// table (see device.hpp).

#include "halfway/runtime/vulkan_api/device_info.hpp"
#include "halfway/support/error.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace halfway::vk {

namespace detail {
struct InstanceState;
}

inline constexpr const char* kValidationEnv = "HALFWAY_VK_VALIDATION";
// True when HALFWAY_VK_VALIDATION is 1, true, on or yes.
bool validation_requested_by_env();

struct ValidationMessage {
  enum class Severity { Verbose, Info, Warning, Error };
  Severity severity = Severity::Error;
  std::string type; // "validation", "performance", "general"
  std::string
      id; // VUID or message id name, e.g. "VUID-RuntimeSpirv-storageBuffer16BitAccess-06331"
  std::string text;
};
std::string format(const ValidationMessage& message);

struct InstanceOptions {
  // nullopt: follow HALFWAY_VK_VALIDATION.
  std::optional<bool> validation;
  // With validation on, also run the layer's synchronization validation: the runtime's barriers
  // between uploads, dispatches and downloads are exactly what it checks.
  bool synchronization_validation = true;
};

class Instance {
public:
  // Throws Error(Device) when there is no loader or no driver (with the package to install and
  // any VK_ICD_FILENAMES/VK_DRIVER_FILES override named), Error(Unsupported) when the loader is
  // older than Vulkan 1.2 or validation is requested without the layer.
  explicit Instance(InstanceOptions options = {});
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  bool validation_enabled() const;
  uint32_t api_version() const; // what the instance was created with
  // Every physical device, usable or not, in enumeration order (DeviceInfo::index).
  const std::vector<DeviceInfo>& devices() const;

  // Messages recorded since creation or the last clear; empty when validation is off.
  std::vector<ValidationMessage> validation_messages() const;
  void clear_validation_messages();

  // For the runtime's own sources (Device needs the VkPhysicalDevice handles).
  detail::InstanceState& state() { return *state_; }

private:
  std::unique_ptr<detail::InstanceState> state_;
};

} // namespace halfway::vk
