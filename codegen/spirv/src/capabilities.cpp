#include "halfway/codegen/spirv/capabilities.hpp"

#include <array>

namespace halfway::codegen::spirv {

namespace {

using C = spv::Capability;
constexpr std::array<CapabilityRow, 12> kCapabilities{{
    {C::Shader, "Shader", nullptr, nullptr},
    {C::Float16, "Float16", nullptr, &Needs::shader_float16},
    {C::Float64, "Float64", nullptr, &Needs::shader_float64},
    {C::Int8, "Int8", nullptr, &Needs::shader_int8},
    {C::Int16, "Int16", nullptr, &Needs::shader_int16},
    {C::Int64, "Int64", nullptr, &Needs::shader_int64},
    {C::Int64Atomics, "Int64Atomics", nullptr, nullptr},
    {C::StorageBuffer16BitAccess, "StorageBuffer16BitAccess", "SPV_KHR_16bit_storage",
     &Needs::storage_buffer_16bit_access},
    {C::StorageBuffer8BitAccess, "StorageBuffer8BitAccess", "SPV_KHR_8bit_storage",
     &Needs::storage_buffer_8bit_access},
    {C::RoundingModeRTE, "RoundingModeRTE", "SPV_KHR_float_controls", nullptr},
    {C::DenormPreserve, "DenormPreserve", "SPV_KHR_float_controls", nullptr},
    {C::SignedZeroInfNanPreserve, "SignedZeroInfNanPreserve", "SPV_KHR_float_controls", nullptr},
}};

constexpr std::array<NeedsFeature, 9> kNeeds{{
    {&Needs::shader_float16, "shaderFloat16"},
    {&Needs::shader_int8, "shaderInt8"},
    {&Needs::shader_int16, "shaderInt16"},
    {&Needs::shader_int64, "shaderInt64"},
    {&Needs::shader_float64, "shaderFloat64"},
    {&Needs::storage_buffer_16bit_access, "storageBuffer16BitAccess"},
    {&Needs::storage_buffer_8bit_access, "storageBuffer8BitAccess"},
    {&Needs::shader_buffer_int64_atomics, "shaderBufferInt64Atomics"},
    {&Needs::shader_shared_int64_atomics, "shaderSharedInt64Atomics"},
}};
static_assert(sizeof(Needs) == kNeeds.size(), "every Needs field needs a row");

} // namespace

std::span<const CapabilityRow> capability_table() {
  return kCapabilities;
}

std::span<const NeedsFeature> needs_features() {
  return kNeeds;
}

} // namespace halfway::codegen::spirv
