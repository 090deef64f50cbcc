#pragma once
// Private: the one mapping between Features and Vulkan's feature structs, used both to query a
// physical device and to enable exactly the requested set on a logical device.

#include "halfway/runtime/vulkan_api/features.hpp"
#include "structs.hpp"

#include <volk.h>

namespace halfway::vk::detail {

// VkPhysicalDeviceFeatures2 -> Vulkan11Features -> Vulkan12Features [-> ShaderAtomicFloat].
// The atomic-float struct is chained only when the device has the extension (and, for device
// creation, only when a float atomic is requested, since chaining it requires enabling it).
// Self-referential: neither copyable nor movable.
struct FeatureChain {
  explicit FeatureChain(bool atomic_float);
  FeatureChain(const FeatureChain&) = delete;
  FeatureChain& operator=(const FeatureChain&) = delete;

  Features read() const;
  void write(const Features& features);

  VkPhysicalDeviceFeatures2 head =
      make<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  VkPhysicalDeviceVulkan11Features v11 =
      make<VkPhysicalDeviceVulkan11Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES);
  VkPhysicalDeviceVulkan12Features v12 =
      make<VkPhysicalDeviceVulkan12Features>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT atomic_float =
      make<VkPhysicalDeviceShaderAtomicFloatFeaturesEXT>(
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT);
  bool has_atomic_float;
};

} // namespace halfway::vk::detail
