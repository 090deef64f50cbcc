#pragma once
#include "halfway/dsl.hpp"

#include <string>
#include <type_traits>

namespace halfway::examples {

// y = W x with f32 accumulation, one design for every weight format. Each row of `cols` columns
// (a multiple of 4) is seen as four quarters of q = cols / 4 columns. f32 and f16 weights are
// stored one per element, row-major; fp8 (E4M3, E5M2) four per u32 word, word j of a row holding
// the row's columns j, j + q, j + 2q and j + 3q in its bytes 0 to 3 (quarter-planar packing).
// One workgroup of 64 lanes per row (group g computes y[g]): lane l takes the quarter positions
// j = l, l + 64, l + 128, ... and for each adds the four products of columns j, j + q, j + 2q,
// j + 3q in that order; then the 64 partial sums meet in a tree reduction in shared memory.
// Lane l's neighbours read the neighbouring addresses of w and x at every step, so the loads are
// contiguous across lanes: a SIMD vector of lanes on the CPU, a coalesced access on a GPU, and
// no lane ever has to gather or de-interleave (an earlier design gave each lane four adjacent
// columns, and the CPU device spent most of its time shuffling them apart). The summation order
// is the kernel's own and fixed, the same for every format, so strict results are bit-exact
// with the interpreter on every device. Rows are len(y) (a 1-D launch of rows x 64 lanes).
// Groups past the last row compute nothing but still take part in the barriers.
namespace detail_gemv {

inline constexpr uint32_t kLanes = 64;

// The weight buffer's element type: the format itself, or u32 words of four fp8 values.
template <class TW>
using WeightElem =
    std::conditional_t<std::is_same_v<TW, float> || std::is_same_v<TW, f16>, TW, uint32_t>;

template <class TW> Kernel gemv(std::string name) {
  return kernel(std::move(name), {kLanes}, {"w", "x", "y", "cols"},
                [](In<WeightElem<TW>> w, In<float> x, Out<float> y, Scalar<uint32_t> cols) {
                  Shared<float> partial("partial", kLanes);
                  Var row(group_id(0), "row");
                  Var lid(local_id(0), "lid");
                  Var quarter(cols >> 2u, "quarter");
                  // Position j of quarter e.
                  auto in_quarter = [&](Value<uint32_t> j, uint32_t e) -> Value<uint32_t> {
                    return e == 0 ? j : e == 1 ? j + quarter : j + quarter * e;
                  };
                  Var acc(0.0f, "acc");
                  If(row < y.size(), [&] {
                    For(lid, quarter, kLanes, [&](Value<uint32_t> j) {
                      if constexpr (std::is_same_v<WeightElem<TW>, uint32_t>) {
                        Var word(w[row * quarter + j], "word");
                        for (uint32_t e = 0; e < 4; ++e)
                          acc = acc + to_f32(unpack<TW>(word, e)) * x[in_quarter(j, e)];
                      } else {
                        Var base(row * cols + j, "base");
                        for (uint32_t e = 0; e < 4; ++e)
                          acc = acc + to_f32(w[in_quarter(base, e)]) * x[in_quarter(j, e)];
                      }
                    });
                  });
                  partial[lid] = acc;
                  Barrier();
                  Var stride(kLanes / 2, "stride");
                  While([&] { return stride > 0u; },
                        [&] {
                          If(lid < stride,
                             [&] { partial[lid] = partial[lid] + partial[lid + stride]; });
                          Barrier();
                          stride = stride >> 1u;
                        });
                  If(lid == 0u && row < y.size(), [&] { y[row] = partial[0u]; });
                });
}

} // namespace detail_gemv

// f32 weights: the reference design the other formats are measured against.
inline Kernel gemv_f32() {
  return detail_gemv::gemv<float>("gemv_f32");
}
// f16 weights, widened exactly to f32 before the multiply.
inline Kernel gemv_f16() {
  return detail_gemv::gemv<f16>("gemv_f16");
}
// fp8 weights (T8 = e4m3 or e5m2), four per u32 word, widened exactly to f32.
template <class T8> Kernel gemv_fp8() {
  return detail_gemv::gemv<T8>("gemv_fp8<" + type_name<T8>() + ">");
}

} // namespace halfway::examples
