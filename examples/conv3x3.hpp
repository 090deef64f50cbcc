#pragma once
#include "halfway/dsl.hpp"

#include <string>

namespace halfway::examples {

// A 3×3 convolution, stride 1, pad 1 (zeros), f32: x is [cin][height][width], w is
// [cout][cin][3][3], bias is [cout], y is [cout][height][width]; y[o][r][c] = bias[o] +
// Σ_{ci,ky,kx} w[o][ci][ky][kx]·x[ci][r+ky−1][c+kx−1]. Register-tiled: each lane computes 4
// output channels × 4 consecutive x-pixels (16 accumulators), reading per input channel a 3×6
// window of x into registers and 36 weights, so that each loaded value feeds 4 to 12
// multiply-adds. Lanes are numbered x-tile fastest, then row, then channel tile (a 1-D launch of
// ceil(width/4)·height·ceil(cout/4) lanes); edges in x and in channels are guarded, so any sizes
// work. The summation order per output is bias, then ci, ky, kx ascending.
inline Kernel conv3x3() {
  static constexpr uint32_t kOut = 4, kPix = 4;
  return kernel(
      "conv3x3", {64}, {"x", "w", "bias", "y", "cin", "cout", "height", "width"},
      [](In<float> x, In<float> w, In<float> bias, Out<float> y, Scalar<uint32_t> cin,
         Scalar<uint32_t> cout, Scalar<uint32_t> height, Scalar<uint32_t> width) {
        Var t(global_id(0), "t");
        Var xtiles((width + (kPix - 1)) / kPix, "xtiles");
        Var otiles((cout + (kOut - 1)) / kOut, "otiles");
        If(t < xtiles * height * otiles, [&] {
          Var x0((t % xtiles) * kPix, "x0");
          Var row((t / xtiles) % height, "row");
          Var o0((t / (xtiles * height)) * kOut, "o0");
          Var last_x(x.size() - 1u, "last_x");
          // The lane's output channels, clamped so that the weight and bias loads of a partial
          // channel tile stay in bounds (their results are not stored).
          // Reserved up front: growing a vector would copy its Vars, and copying a Var declares
          // a new local.
          std::vector<Var<uint32_t>> oc;
          oc.reserve(kOut);
          for (uint32_t o = 0; o < kOut; ++o)
            oc.emplace_back(min(o0 + o, cout - 1u), "oc" + std::to_string(o));
          std::vector<Var<float>> acc;
          acc.reserve(kOut * kPix);
          for (uint32_t o = 0; o < kOut; ++o)
            for (uint32_t p = 0; p < kPix; ++p)
              acc.emplace_back(bias[oc[o]], "acc" + std::to_string(o) + std::to_string(p));
          For(0u, cin, [&](Value<uint32_t> ci) {
            // The 3 x 6 input window, zero outside the image (padded coordinates are one more
            // than image coordinates, so that the left and top borders stay unsigned).
            std::vector<Var<float>> in;
            in.reserve(3 * (kPix + 2));
            for (uint32_t ky = 0; ky < 3; ++ky) {
              Var pr(row + ky, "pr" + std::to_string(ky));
              for (uint32_t j = 0; j < kPix + 2; ++j) {
                Var pc(x0 + j, "pc" + std::to_string(ky) + std::to_string(j));
                auto inside = pr >= 1u && pr <= height && pc >= 1u && pc <= width;
                auto at = (ci * height + pr - 1u) * width + pc - 1u;
                in.emplace_back(select(inside, x[min(at, last_x)], 0.0f),
                                "in" + std::to_string(ky) + std::to_string(j));
              }
            }
            for (uint32_t ky = 0; ky < 3; ++ky)
              for (uint32_t kx = 0; kx < 3; ++kx)
                for (uint32_t o = 0; o < kOut; ++o) {
                  Var wv(w[((oc[o] * cin + ci) * 3u + ky) * 3u + kx],
                         "w" + std::to_string(o) + std::to_string(ky) + std::to_string(kx));
                  for (uint32_t p = 0; p < kPix; ++p)
                    acc[o * kPix + p] = acc[o * kPix + p] + wv * in[ky * (kPix + 2) + p + kx];
                }
          });
          for (uint32_t o = 0; o < kOut; ++o)
            for (uint32_t p = 0; p < kPix; ++p)
              If(o0 + o < cout && x0 + p < width,
                 [&] { y[((o0 + o) * height + row) * width + x0 + p] = acc[o * kPix + p]; });
        });
      });
}

} // namespace halfway::examples
