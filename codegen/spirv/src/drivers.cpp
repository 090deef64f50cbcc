#include "halfway/codegen/spirv/drivers.hpp"

namespace halfway::codegen::spirv {

namespace {
// VkDriverId values (vulkan_core.h), spelled out so that the code generator needs no Vulkan header.
constexpr DriverFusion kTable[] = {
    {1, "AMD proprietary", true,
     "same GCN/RDNA v_fma_mix instructions as RADV; not measured, barriered as a precaution"},
    {2, "AMDVLK (AMD open source)", true,
     "same GCN/RDNA v_fma_mix instructions as RADV; not measured, barriered as a precaution"},
    {3, "RADV (Mesa, ACO)", true,
     "Sarek project: f16(x*1.1) disagreed on 2,912 of 63,488 binary16 inputs with or without "
     "precise (v_fma_mixlo_f16)"},
    {13, "llvmpipe / lavapipe (Mesa)", false,
     "measured here: never fuses, not even GLSL fma() (docs/measured.md)"},
};
} // namespace

std::span<const DriverFusion> driver_fusion_table() {
  return kTable;
}

const DriverFusion* find_driver(uint32_t driver_id) {
  for (const DriverFusion& row : kTable)
    if (row.driver_id == driver_id)
      return &row;
  return nullptr;
}

bool driver_needs_opaque_identity(uint32_t driver_id) {
  const DriverFusion* row = find_driver(driver_id);
  return row != nullptr && row->opaque_identity;
}

uint32_t driver_loop_limit(uint32_t driver_id) {
  return driver_id == 13 ? 65535 : 0;
}

} // namespace halfway::codegen::spirv
