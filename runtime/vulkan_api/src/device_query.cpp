#include "device_query.hpp"

#include "feature_chain.hpp"
#include "halfway/runtime/vulkan_api/result.hpp"
#include "structs.hpp"

#include <algorithm>
#include <cstring>

namespace halfway::vk::detail {

namespace {

DeviceType to_type(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return DeviceType::Discrete;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return DeviceType::Integrated;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return DeviceType::Virtual;
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return DeviceType::Cpu;
  default:
    return DeviceType::Other;
  }
}

Independence to_independence(VkShaderFloatControlsIndependence value) {
  switch (value) {
  case VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_32_BIT_ONLY:
    return Independence::Only32Bit;
  case VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL:
    return Independence::All;
  default:
    return Independence::None;
  }
}

bool has_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  check(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr),
        "vkEnumerateDeviceExtensionProperties");
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data());
  return std::any_of(
      extensions.begin(), extensions.begin() + count,
      [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

void fill_float_controls(const VkPhysicalDeviceVulkan12Properties& p, FloatControls& fc) {
  fc.f16 = {bool(p.shaderDenormPreserveFloat16), bool(p.shaderDenormFlushToZeroFloat16),
            bool(p.shaderRoundingModeRTEFloat16), bool(p.shaderRoundingModeRTZFloat16),
            bool(p.shaderSignedZeroInfNanPreserveFloat16)};
  fc.f32 = {bool(p.shaderDenormPreserveFloat32), bool(p.shaderDenormFlushToZeroFloat32),
            bool(p.shaderRoundingModeRTEFloat32), bool(p.shaderRoundingModeRTZFloat32),
            bool(p.shaderSignedZeroInfNanPreserveFloat32)};
  fc.f64 = {bool(p.shaderDenormPreserveFloat64), bool(p.shaderDenormFlushToZeroFloat64),
            bool(p.shaderRoundingModeRTEFloat64), bool(p.shaderRoundingModeRTZFloat64),
            bool(p.shaderSignedZeroInfNanPreserveFloat64)};
  fc.denorm_behavior_independence = to_independence(p.denormBehaviorIndependence);
  fc.rounding_mode_independence = to_independence(p.roundingModeIndependence);
}

void fill_limits(const VkPhysicalDeviceLimits& l, Limits& out) {
  std::copy_n(l.maxComputeWorkGroupCount, 3, out.max_compute_work_group_count.begin());
  std::copy_n(l.maxComputeWorkGroupSize, 3, out.max_compute_work_group_size.begin());
  out.max_compute_work_group_invocations = l.maxComputeWorkGroupInvocations;
  out.max_compute_shared_memory_size = l.maxComputeSharedMemorySize;
  out.max_storage_buffer_range = l.maxStorageBufferRange;
  out.max_push_constants_size = l.maxPushConstantsSize;
  out.max_per_stage_descriptor_storage_buffers = l.maxPerStageDescriptorStorageBuffers;
  out.timestamp_period = l.timestampPeriod;
  out.timestamp_compute_and_graphics = l.timestampComputeAndGraphics;
}

// A compute-capable family, preferring one with timestamps, then one without graphics (a
// dedicated compute queue on discrete GPUs). UINT32_MAX when there is none.
uint32_t choose_queue_family(VkPhysicalDevice physical, uint32_t& timestamp_bits) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  uint32_t best = UINT32_MAX;
  int best_score = -1;
  for (uint32_t i = 0; i < count; ++i) {
    const auto& f = families[i];
    if (!(f.queueFlags & VK_QUEUE_COMPUTE_BIT) || f.queueCount == 0)
      continue;
    int score = (f.timestampValidBits > 0 ? 2 : 0) + (f.queueFlags & VK_QUEUE_GRAPHICS_BIT ? 0 : 1);
    if (score > best_score) {
      best = i;
      best_score = score;
      timestamp_bits = f.timestampValidBits;
    }
  }
  return best;
}

void fill_memory(VkPhysicalDevice physical, DeviceInfo& info) {
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  info.heaps.resize(memory.memoryHeapCount);
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    info.heaps[i].size = memory.memoryHeaps[i].size;
    info.heaps[i].device_local = memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
  }
  bool mappable_device_local = false;
  constexpr VkMemoryPropertyFlags unified = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const auto& type = memory.memoryTypes[i];
    if (type.propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
      info.heaps[type.heapIndex].host_visible = true;
    if ((type.propertyFlags & unified) == unified)
      mappable_device_local = true;
  }
  bool shares_host_memory =
      info.heaps.size() == 1 || info.type == DeviceType::Integrated || info.type == DeviceType::Cpu;
  info.unified_memory = shares_host_memory && mappable_device_local;
}

} // namespace

DeviceInfo query_device(VkPhysicalDevice physical, uint32_t index) {
  DeviceInfo info;
  info.index = index;
  VkPhysicalDeviceProperties basic;
  vkGetPhysicalDeviceProperties(physical, &basic);
  info.name = basic.deviceName;
  info.type = to_type(basic.deviceType);
  info.vendor_id = basic.vendorID;
  info.device_id = basic.deviceID;
  info.api_version = basic.apiVersion;
  fill_limits(basic.limits, info.limits);
  fill_memory(physical, info);
  info.compute_queue_family = choose_queue_family(physical, info.limits.timestamp_valid_bits);
  if (VK_API_VERSION_MAJOR(basic.apiVersion) == 1 && VK_API_VERSION_MINOR(basic.apiVersion) < 2) {
    info.unusable_reason = "Vulkan " + api_version_string(basic.apiVersion) + " < 1.2";
    return info;
  }
  if (info.compute_queue_family == UINT32_MAX) {
    info.unusable_reason = "no compute queue";
    return info;
  }

  // Properties and features of 1.1 and 1.2 come in chained structs; the 1.1/1.2 aggregate
  // structs may only be chained on devices that report 1.2, checked above.
  auto p11 = detail::make<VkPhysicalDeviceVulkan11Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES);
  auto p12 = detail::make<VkPhysicalDeviceVulkan12Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES);
  auto m3 = detail::make<VkPhysicalDeviceMaintenance3Properties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
  p11.pNext = &p12;
  p12.pNext = &m3;
  auto props =
      detail::make<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  props.pNext = &p11;
  vkGetPhysicalDeviceProperties2(physical, &props);
  info.driver_id = p12.driverID;
  info.driver_name = p12.driverName;
  info.driver_info = p12.driverInfo;
  info.limits.subgroup_size = p11.subgroupSize;
  info.limits.max_memory_allocation_size = m3.maxMemoryAllocationSize;
  fill_float_controls(p12, info.float_controls);

  FeatureChain chain(has_extension(physical, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME));
  vkGetPhysicalDeviceFeatures2(physical, &chain.head);
  info.features = chain.read();
  return info;
}

} // namespace halfway::vk::detail
