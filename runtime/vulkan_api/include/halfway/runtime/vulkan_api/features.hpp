#pragma once
// What a kernel needs from a device beyond core Vulkan 1.2 compute.
//
// The codegen fills one Features per kernel from the capabilities it declares, and the runtime
// enables exactly these on the logical device (see runtime.hpp for the per-feature-set device
// cache). Exactness is the point: lavapipe runs 16-bit storage shaders even when the feature is
// off and only the validation layer notices, so a device that enabled everything it has would
// hide a kernel whose declared needs disagree with its SPIR-V capabilities.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace halfway::vk {

// One flag per Vulkan feature, named after it. The SPIR-V capability that needs each is noted.
struct Features {
  bool shader_float16 = false;                          // Float16 arithmetic
  bool shader_int8 = false;                             // Int8
  bool shader_int16 = false;                            // Int16
  bool shader_int64 = false;                            // Int64
  bool shader_float64 = false;                          // Float64
  bool storage_buffer_16bit_access = false;             // StorageBuffer16BitAccess
  bool uniform_and_storage_buffer_16bit_access = false; // UniformAndStorageBuffer16BitAccess
  bool storage_buffer_8bit_access = false;              // StorageBuffer8BitAccess
  bool uniform_and_storage_buffer_8bit_access = false;  // UniformAndStorageBuffer8BitAccess
  bool shader_buffer_int64_atomics = false;             // Int64Atomics on storage buffers
  bool shader_shared_int64_atomics = false;             // Int64Atomics on Workgroup memory
  bool shader_buffer_float32_atomic_add = false;        // AtomicFloat32AddEXT (extension)
  bool shader_shared_float32_atomic_add = false;        // AtomicFloat32AddEXT on Workgroup memory
  bool shader_buffer_float64_atomic_add = false;        // AtomicFloat64AddEXT (extension)

  bool operator==(const Features&) const = default;
};

// The table that every loop over features uses: the Vulkan spelling (for messages and for
// `halfway devices`), the member, and whether it lives in VK_EXT_shader_atomic_float rather than
// in core 1.2.
struct FeatureField {
  const char* vulkan_name;
  bool Features::*member;
  bool atomic_float_extension;
};
std::span<const FeatureField> feature_fields();

Features feature_union(const Features& a, const Features& b);
// The Vulkan names of the features in `need` that `have` lacks, in table order.
std::vector<std::string> missing_features(const Features& have, const Features& need);
bool covers(const Features& have, const Features& need);
bool needs_atomic_float_extension(const Features& f);
// Space-separated Vulkan names, or "none".
std::string describe_features(const Features& f);
// A bit per table entry: a compact key for caches.
uint64_t feature_bits(const Features& f);

} // namespace halfway::vk
