#include "halfway/codegen/spirv/capabilities.hpp"
#include "halfway/codegen/spirv/drivers.hpp"
#include "halfway/runtime/vulkan/device.hpp"

#include <algorithm>
#include <string_view>

namespace halfway::rt {

codegen::spirv::Target spirv_target(const vk::DeviceInfo& info) {
  codegen::spirv::Target t;
  t.device = info.name;
  t.driver_id = info.driver_id;
  auto width = [](const vk::FloatControlsWidth& w) {
    codegen::spirv::Target::Width out;
    out.rounding_mode_rte = w.rounding_mode_rte;
    out.denorm_preserve = w.denorm_preserve;
    out.signed_zero_inf_nan_preserve = w.signed_zero_inf_nan_preserve;
    return out;
  };
  t.f16 = width(info.float_controls.f16);
  t.f32 = width(info.float_controls.f32);
  t.f64 = width(info.float_controls.f64);
  t.loop_limit = codegen::spirv::driver_loop_limit(info.driver_id);
  return t;
}

vk::Features vulkan_features(const codegen::spirv::Needs& n) {
  // The pairs are the capability table's (codegen/spirv/capabilities.hpp), matched by Vulkan's
  // name to the runtime's feature table.
  vk::Features f;
  for (const codegen::spirv::NeedsFeature& need : codegen::spirv::needs_features()) {
    if (!(n.*need.need))
      continue;
    std::span<const vk::FeatureField> fields = vk::feature_fields();
    auto field = std::find_if(fields.begin(), fields.end(), [&](const vk::FeatureField& x) {
      return std::string_view(x.vulkan_name) == need.vulkan_name;
    });
    if (field == fields.end())
      throw Error(ErrorKind::Internal,
                  std::string("the Vulkan runtime has no feature ") + need.vulkan_name);
    f.*field->member = true;
  }
  return f;
}

num::FloatControls float_controls(const vk::DeviceInfo& info) {
  const vk::FloatControls& fc = info.float_controls;
  auto flushes = [](const vk::FloatControlsWidth& w) {
    return !w.denorm_preserve && w.denorm_flush_to_zero;
  };
  num::FloatControls c;
  c.flush_f16 = flushes(fc.f16);
  c.flush_f32 = flushes(fc.f32);
  c.flush_f64 = flushes(fc.f64);
  c.preserve_signed_zero_inf_nan = fc.f32.signed_zero_inf_nan_preserve;
  return c;
}

} // namespace halfway::rt
