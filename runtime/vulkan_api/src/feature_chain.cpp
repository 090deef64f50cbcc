#include "feature_chain.hpp"

namespace halfway::vk::detail {

namespace {

// Each Features member next to the VkBool32 it maps to; read() and write() walk this list. X and C
// are Features and FeatureChain, either of them const.
template <class X, class C, class F> void each_field(X& x, C& c, F&& f) {
  f(x.shader_float16, c.v12.shaderFloat16);
  f(x.shader_int8, c.v12.shaderInt8);
  f(x.shader_int16, c.head.features.shaderInt16);
  f(x.shader_int64, c.head.features.shaderInt64);
  f(x.shader_float64, c.head.features.shaderFloat64);
  f(x.storage_buffer_16bit_access, c.v11.storageBuffer16BitAccess);
  f(x.uniform_and_storage_buffer_16bit_access, c.v11.uniformAndStorageBuffer16BitAccess);
  f(x.storage_buffer_8bit_access, c.v12.storageBuffer8BitAccess);
  f(x.uniform_and_storage_buffer_8bit_access, c.v12.uniformAndStorageBuffer8BitAccess);
  f(x.shader_buffer_int64_atomics, c.v12.shaderBufferInt64Atomics);
  f(x.shader_shared_int64_atomics, c.v12.shaderSharedInt64Atomics);
  if (!c.has_atomic_float)
    return;
  f(x.shader_buffer_float32_atomic_add, c.atomic_float.shaderBufferFloat32AtomicAdd);
  f(x.shader_shared_float32_atomic_add, c.atomic_float.shaderSharedFloat32AtomicAdd);
  f(x.shader_buffer_float64_atomic_add, c.atomic_float.shaderBufferFloat64AtomicAdd);
}

} // namespace

FeatureChain::FeatureChain(bool atomic_float_) : has_atomic_float(atomic_float_) {
  head.pNext = &v11;
  v11.pNext = &v12;
  if (has_atomic_float)
    v12.pNext = &atomic_float;
}

Features FeatureChain::read() const {
  Features out;
  each_field(out, *this, [](bool& dst, const VkBool32& src) { dst = src == VK_TRUE; });
  return out;
}

void FeatureChain::write(const Features& features) {
  each_field(features, *this,
             [](const bool& src, VkBool32& dst) { dst = src ? VK_TRUE : VK_FALSE; });
}

} // namespace halfway::vk::detail
