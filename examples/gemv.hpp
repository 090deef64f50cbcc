#pragma once
#include "halfway/dsl.hpp"

#include <string>
#include <type_traits>

namespace halfway::examples {

// y = W x with f32 accumulation, one design for every weight format: f32 and f16 weights are
// stored one per element, fp8 (E4M3, E5M2) four per u32 word (element 0 in the low byte);
// row-major either way. One workgroup of 64 lanes per row (group g computes y[g]): lane l sums the
// 4-column chunks l, l + 64, l + 128, ... of its row (split-k, so that a row's weights stream
// through all 64 lanes at once instead of one lane walking the row), then the 64 partial sums
// meet in a tree reduction in shared memory. The summation order is the kernel's own and fixed,
// so strict results are bit-exact with the interpreter on every device. `cols` must be a multiple
// of 4; rows are len(y) (a 1-D launch of rows x 64 lanes). Groups past the last row compute
// nothing but still take part in the barriers.
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
                  Var chunks(cols >> 2u, "chunks");
                  Var acc(0.0f, "acc");
                  If(row < y.size(), [&] {
                    For(lid, chunks, kLanes, [&](Value<uint32_t> j) {
                      if constexpr (std::is_same_v<WeightElem<TW>, uint32_t>) {
                        Var word(w[row * chunks + j], "word");
                        for (uint32_t e = 0; e < 4; ++e)
                          acc = acc + to_f32(unpack<TW>(word, e)) * x[j * 4u + e];
                      } else {
                        Var base(row * cols + j * 4u, "base");
                        for (uint32_t e = 0; e < 4; ++e)
                          acc = acc + to_f32(w[base + e]) * x[j * 4u + e];
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
