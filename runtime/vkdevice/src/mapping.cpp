#include "halfway/codegen/spirv/drivers.hpp"
#include "halfway/runtime/vkdevice/vulkan_device.hpp"

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
  vk::Features f;
  f.shader_float16 = n.shader_float16;
  f.shader_int8 = n.shader_int8;
  f.shader_int16 = n.shader_int16;
  f.shader_int64 = n.shader_int64;
  f.shader_float64 = n.shader_float64;
  f.storage_buffer_16bit_access = n.storage_buffer_16bit_access;
  f.storage_buffer_8bit_access = n.storage_buffer_8bit_access;
  f.shader_buffer_int64_atomics = n.shader_buffer_int64_atomics;
  f.shader_shared_int64_atomics = n.shader_shared_int64_atomics;
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
