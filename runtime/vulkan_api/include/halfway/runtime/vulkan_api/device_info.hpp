#pragma once
// What one physical device is and can do, gathered once when the Instance enumerates devices.
//
// Everything the codegen and the comparison need to decide about a device lives here as plain
// data: feature availability (to refuse a kernel with a clear message before Vulkan is touched),
// float controls (DenormPreserve is emitted only where supported; otherwise the comparison is
// handed this profile), and the limits that shape a dispatch. Plain data also means tests can
// build a fake DeviceInfo for devices this machine does not have.

#include "halfway/runtime/vulkan_api/features.hpp"
#include "halfway/support/error.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace halfway::vk {

// Ordered by preference for automatic selection (see selection.hpp); Other is last.
enum class DeviceType { Discrete, Integrated, Virtual, Cpu, Other };
const char* device_type_name(DeviceType type);

// VkShaderFloatControlsIndependence: which widths may set denormal or rounding modes separately.
enum class Independence { Only32Bit, All, None };
const char* independence_name(Independence independence);

// VK_KHR_shader_float_controls properties for one float width.
struct FloatControlsWidth {
  bool denorm_preserve = false;
  bool denorm_flush_to_zero = false;
  bool rounding_mode_rte = false;
  bool rounding_mode_rtz = false;
  bool signed_zero_inf_nan_preserve = false;
};

struct FloatControls {
  FloatControlsWidth f16, f32, f64;
  Independence denorm_behavior_independence = Independence::None;
  Independence rounding_mode_independence = Independence::None;
};

struct Limits {
  std::array<uint32_t, 3> max_compute_work_group_count{};
  std::array<uint32_t, 3> max_compute_work_group_size{};
  uint32_t max_compute_work_group_invocations = 0;
  uint32_t max_compute_shared_memory_size = 0;
  uint32_t max_storage_buffer_range = 0;
  uint32_t max_push_constants_size = 0;
  uint32_t max_per_stage_descriptor_storage_buffers = 0;
  uint64_t max_memory_allocation_size = 0;
  uint32_t subgroup_size = 0;
  float timestamp_period = 0; // nanoseconds per timestamp tick
  bool timestamp_compute_and_graphics = false;
  uint32_t timestamp_valid_bits = 0; // of the compute queue family; 0: no timestamps there
};

struct MemoryHeap {
  uint64_t size = 0;
  bool device_local = false;
  bool host_visible = false; // some memory type in this heap can be mapped
};

struct DeviceInfo {
  uint32_t index = 0; // position in vkEnumeratePhysicalDevices' order
  std::string name;
  DeviceType type = DeviceType::Other;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  uint32_t driver_id = 0; // VkDriverId; 0 where unknown
  std::string driver_name;
  std::string driver_info;
  uint32_t api_version = 0; // VK_MAKE_API_VERSION packing
  Features features;
  FloatControls float_controls;
  Limits limits;
  std::vector<MemoryHeap> heaps;
  // One heap, or an integrated/CPU device with host-visible device-local memory: buffers are
  // mapped directly and never staged.
  bool unified_memory = false;
  uint32_t compute_queue_family = 0;
  // Empty when halfway can run kernels here; otherwise why not (e.g. "Vulkan 1.1 < 1.2").
  std::string unusable_reason;

  bool usable() const { return unusable_reason.empty(); }
};

std::string api_version_string(uint32_t packed);
// "0: llvmpipe (LLVM 15.0.6, 256 bits) [cpu, llvmpipe, Vulkan 1.3.230]"
std::string summary(const DeviceInfo& info);
// The multi-line report behind `halfway devices`.
std::string describe(const DeviceInfo& info);

// Throws Error(Unsupported) "needs storageBuffer16BitAccess; device llvmpipe lacks it" with the
// kernel in the context when `info` lacks any of `needs`; also when the device is unusable.
void require_features(const DeviceInfo& info, const Features& needs, const std::string& kernel);

} // namespace halfway::vk
