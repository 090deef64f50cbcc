#include "kernels.hpp"

namespace halfway::bench {

Kernel gemv_f32() {
  return kernel("gemv_f32", {64}, {"w", "x", "y", "cols"},
                [](In<float> w, In<float> x, Out<float> y, Scalar<uint32_t> cols) {
                  Var row(global_id(0), "row");
                  If(row < y.size(), [&] {
                    Var acc(0.0f, "acc");
                    Var base(row * cols, "base");
                    For(0u, cols, [&](Value<uint32_t> j) { acc = acc + w[base + j] * x[j]; });
                    y[row] = acc;
                  });
                });
}

Kernel tiny() {
  return kernel("tiny", {1}, {"y"}, [](Out<uint32_t> y) { y[0u] = global_id(0) + 1u; });
}

} // namespace halfway::bench
