#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// y[i] = x[i] * w[i] + b with weights stored as TW (f32, f16, bf16, f64) and f32 math: one
// source, one kernel per weight type, each named after its type.
template <class TW> Kernel linear() {
  return kernel("linear<" + type_name<TW>() + ">", {64}, {"x", "w", "y", "b"},
                [](In<float> x, In<TW> w, Out<float> y, Scalar<float> b) {
                  Var i(global_id(0), "i");
                  If(i < x.size(), [&] {
                    if constexpr (std::is_same_v<TW, double>)
                      y[i] = narrow<float>(to_f64(x[i]) * w[i] + to_f64(b));
                    else
                      y[i] = x[i] * to_f32(w[i]) + b;
                  });
                });
}

} // namespace halfway::examples
