#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// out16[i] = a[i]*b[i] + c[i]: f32 math stored into an f16 buffer. The store is a narrowing site:
// the interpreter rounds the product and the sum to f32 and then the sum to f16; a device that
// fuses the multiply-add into the narrowing rounds once. See specs/f16-narrowing-barrier.md.
inline Kernel narrow_f16() {
  return kernel("narrow_f16", {64}, {"a", "b", "c", "out16"},
                [](In<float> a, In<float> b, In<float> c, Out<f16> out16) {
                  Var i(global_id(0), "i");
                  If(i < out16.size(), [&] { out16[i] = a[i] * b[i] + c[i]; });
                });
}

} // namespace halfway::examples
