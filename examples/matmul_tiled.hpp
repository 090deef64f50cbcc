#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// C = A·B, f32, A [m][k], B [k][n], C [m][n], row-major. 16×16 workgroups, each computing a 16×16
// block of C: lane (tx, ty) = (local_id(0), local_id(1)) owns C[16·group_id(1) + ty][16·group_id(0)
// + tx] (a 2-D launch of ceil(n/16) × ceil(m/16) workgroups). The k dimension is walked in
// 16-wide steps: the workgroup loads a 16×16 tile of A and one of B into shared memory (zeros
// past the matrices' edges, so any m, n and k work), a barrier, 16 multiply-adds per lane out of
// shared memory, a barrier before the next tiles overwrite these. The shared tiles are 16 rows of
// stride 17 (flat arrays of 16·17): the padding column puts a tile's column walk on distinct
// banks. The summation order per element is k ascending, the padded terms adding 0·0.
inline Kernel matmul_tiled() {
  static constexpr uint32_t kTile = 16, kStride = 17;
  return kernel("matmul_tiled", {kTile, kTile}, {"a", "b", "c", "m", "n", "k"},
                [](In<float> a, In<float> b, Out<float> c, Scalar<uint32_t> m, Scalar<uint32_t> n,
                   Scalar<uint32_t> k) {
                  Shared<float> ta("ta", kTile * kStride);
                  Shared<float> tb("tb", kTile * kStride);
                  Var tx(local_id(0), "tx");
                  Var ty(local_id(1), "ty");
                  Var col(group_id(0) * kTile + tx, "col");
                  Var row(group_id(1) * kTile + ty, "row");
                  Var acc(0.0f, "acc");
                  Var steps((k + (kTile - 1)) / kTile, "steps");
                  For(0u, steps, [&](Value<uint32_t> s) {
                    Var ka(s * kTile + tx, "ka"); // the column of A this lane loads
                    Var kb(s * kTile + ty, "kb"); // the row of B this lane loads
                    If(row < m && ka < k, [&] {
                      ta[ty * kStride + tx] = a[row * k + ka];
                    }).Else([&] { ta[ty * kStride + tx] = 0.0f; });
                    If(kb < k && col < n, [&] {
                      tb[ty * kStride + tx] = b[kb * n + col];
                    }).Else([&] { tb[ty * kStride + tx] = 0.0f; });
                    Barrier();
                    For(Value<uint32_t>(0u), kTile, [&](Value<uint32_t> j) {
                      acc = acc + ta[ty * kStride + j] * tb[j * kStride + tx];
                    });
                    Barrier();
                  });
                  If(row < m && col < n, [&] { c[row * n + col] = acc; });
                });
}

} // namespace halfway::examples
