#include "halfway/runtime/vulkan_api/features.hpp"

#include <array>

namespace halfway::vk {

namespace {
constexpr std::array<FeatureField, 14> kFields{{
    {"shaderFloat16", &Features::shader_float16, false},
    {"shaderInt8", &Features::shader_int8, false},
    {"shaderInt16", &Features::shader_int16, false},
    {"shaderInt64", &Features::shader_int64, false},
    {"shaderFloat64", &Features::shader_float64, false},
    {"storageBuffer16BitAccess", &Features::storage_buffer_16bit_access, false},
    {"uniformAndStorageBuffer16BitAccess", &Features::uniform_and_storage_buffer_16bit_access,
     false},
    {"storageBuffer8BitAccess", &Features::storage_buffer_8bit_access, false},
    {"uniformAndStorageBuffer8BitAccess", &Features::uniform_and_storage_buffer_8bit_access, false},
    {"shaderBufferInt64Atomics", &Features::shader_buffer_int64_atomics, false},
    {"shaderSharedInt64Atomics", &Features::shader_shared_int64_atomics, false},
    {"shaderBufferFloat32AtomicAdd", &Features::shader_buffer_float32_atomic_add, true},
    {"shaderSharedFloat32AtomicAdd", &Features::shader_shared_float32_atomic_add, true},
    {"shaderBufferFloat64AtomicAdd", &Features::shader_buffer_float64_atomic_add, true},
}};
static_assert(sizeof(Features) == kFields.size(), "every Features member needs a table row");
} // namespace

std::span<const FeatureField> feature_fields() {
  return kFields;
}

Features feature_union(const Features& a, const Features& b) {
  Features out;
  for (const auto& f : kFields)
    out.*f.member = a.*f.member || b.*f.member;
  return out;
}

std::vector<std::string> missing_features(const Features& have, const Features& need) {
  std::vector<std::string> out;
  for (const auto& f : kFields)
    if (need.*f.member && !(have.*f.member))
      out.push_back(f.vulkan_name);
  return out;
}

bool covers(const Features& have, const Features& need) {
  return missing_features(have, need).empty();
}

bool needs_atomic_float_extension(const Features& features) {
  for (const auto& f : kFields)
    if (f.atomic_float_extension && features.*f.member)
      return true;
  return false;
}

std::string describe_features(const Features& features) {
  std::string out;
  for (const auto& f : kFields) {
    if (!(features.*f.member))
      continue;
    if (!out.empty())
      out += ' ';
    out += f.vulkan_name;
  }
  return out.empty() ? "none" : out;
}

uint64_t feature_bits(const Features& features) {
  uint64_t bits = 0;
  for (std::size_t i = 0; i < kFields.size(); ++i)
    if (features.*kFields[i].member)
      bits |= uint64_t{1} << i;
  return bits;
}

} // namespace halfway::vk
