#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// Row softmax with f32 math and f16 output: y[r][c] = exp(x[r][c] − max_r) / Σ_c exp(x[r][c] −
// max_r). One workgroup of 64 lanes per row (group g computes row g; rows = len(y) / cols), each
// lane striding over the row's columns; the row maximum and then the row sum meet in tree
// reductions in shared memory. The output is written as exp(x − max) · (1 / sum), stored into the
// f16 buffer: that store is the kernel's narrowing site (an f32 product rounded to f32 and then
// to f16 by the interpreter; a device that keeps the exact product rounds once). Under the strict
// default the site is barriered and every device matches the interpreter bit for bit where its
// exp is correctly rounded; accept_single_rounding(kernel "softmax_f16out", reason) lifts the
// barrier and the checker then bounds the element and matches it against the rounding models.
inline Kernel softmax_f16out() {
  static constexpr uint32_t kLanes = 64;
  return kernel(
      "softmax_f16out", {kLanes}, {"x", "y", "cols"},
      [](In<float> x, Out<f16> y, Scalar<uint32_t> cols) {
        Shared<float> red("red", kLanes);
        Var lid(local_id(0), "lid");
        Var rows(select(cols > 0u, y.size() / max(cols, 1u), 0u), "rows");
        Var row(group_id(0), "row");
        Var live(row < rows, "live");
        Var base(row * cols, "base");
        // 1. the row maximum (each lane over its columns, then a tree)
        Var m(-std::numeric_limits<float>::infinity(), "m");
        If(live,
           [&] { For(lid, cols, kLanes, [&](Value<uint32_t> c) { m = max(m, x[base + c]); }); });
        red[lid] = m;
        Barrier();
        Var stride(kLanes / 2, "stride");
        While([&] { return stride > 0u; },
              [&] {
                If(lid < stride, [&] { red[lid] = max(red[lid], red[lid + stride]); });
                Barrier();
                stride = stride >> 1u;
              });
        Var row_max(red[0u], "row_max");
        Barrier(); // every lane has read the maximum before the sums overwrite it
        // 2. the row sum of exp(x - max)
        Var s(0.0f, "s");
        If(live, [&] {
          For(lid, cols, kLanes, [&](Value<uint32_t> c) { s = s + exp(x[base + c] - row_max); });
        });
        red[lid] = s;
        Barrier();
        stride = kLanes / 2;
        While([&] { return stride > 0u; },
              [&] {
                If(lid < stride, [&] { red[lid] = red[lid] + red[lid + stride]; });
                Barrier();
                stride = stride >> 1u;
              });
        Var inv(1.0f / red[0u], "inv");
        // 3. the f16 output: the narrowing site
        If(live, [&] {
          For(lid, cols, kLanes,
              [&](Value<uint32_t> c) { y[base + c] = exp(x[base + c] - row_max) * inv; });
        });
      });
}

} // namespace halfway::examples
