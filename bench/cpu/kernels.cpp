#include "kernels.hpp"

namespace halfway::bench {

namespace {
constexpr uint32_t kLanes = 256;
}

Kernel reduce_chunks() {
  return kernel("reduce_chunks", {kLanes}, {"x", "out", "per_lane"},
                [](In<float> x, Out<float> out, Scalar<uint32_t> per_lane) {
                  Shared<float> tile("tile", kLanes);
                  Var lid(local_id(0), "lid");
                  Var base((group_id(0) * kLanes + lid) * per_lane, "base");
                  Var acc(0.0f, "acc");
                  For(0u, per_lane, [&](Value<uint32_t> j) { acc = acc + x[base + j]; });
                  tile[lid] = acc;
                  Barrier();
                  Var stride(kLanes / 2, "stride");
                  While([&] { return stride > 0u; },
                        [&] {
                          If(lid < stride, [&] { tile[lid] = tile[lid] + tile[lid + stride]; });
                          Barrier();
                          stride = stride >> 1u;
                        });
                  If(lid == 0u, [&] { out[group_id(0)] = tile[0u]; });
                });
}

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
