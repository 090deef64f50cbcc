#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// y = W x with W stored as fp8 (E4M3 or E5M2), four weights packed per u32 word, row-major, and
// f32 accumulation. One lane per row, one sequential sum per row; `cols` must be a multiple of 4.
// Not the bundled GEMV (gemv.hpp splits each row across a workgroup): this shape stores its
// accumulator directly (`y[row] = acc`), so under the relaxed-accumulation opt-in every element
// has the interpreter's accumulation record and the checker bounds it (specs/
// f16-narrowing-barrier.md §5); the relaxed-accumulation tests and the Vulkan bench use it.
template <class T8> Kernel gemv_fp8_rows() {
  return kernel("gemv_fp8_rows<" + type_name<T8>() + ">", {64}, {"w", "x", "y", "cols"},
                [](In<uint32_t> w, In<float> x, Out<float> y, Scalar<uint32_t> cols) {
                  Var row(global_id(0), "row");
                  If(row < y.size(), [&] {
                    Var acc(0.0f, "acc");
                    Var words(cols >> 2u, "words");
                    For(0u, words, [&](Value<uint32_t> j) {
                      Var word(w[row * words + j], "word");
                      for (uint32_t lane = 0; lane < 4; ++lane)
                        acc = acc + to_f32(unpack<T8>(word, lane)) * x[j * 4u + lane];
                    });
                    y[row] = acc;
                  });
                });
}

} // namespace halfway::examples
