// Compiled with -ffp-contract=fast -fassociative-math -fno-signed-zeros -fno-trapping-math:
// the freedom the single-rounding and relaxed-accumulation opt-ins give the device.
#include "baselines.hpp"

#include <bit>

namespace halfway::bench::relaxed {

void narrow_f16(const float* a, const float* b, const float* c, uint16_t* out, size_t begin,
                size_t end) {
  for (size_t i = begin; i < end; ++i)
    out[i] = std::bit_cast<uint16_t>(static_cast<_Float16>(a[i] * b[i] + c[i]));
}

void reduce_chunks(const float* x, float* out, uint32_t per_lane, size_t begin, size_t end) {
  for (size_t g = begin; g < end; ++g) {
    float tile[256];
    for (uint32_t l = 0; l < 256; ++l) {
      const float* p = x + (g * 256 + l) * per_lane;
      float acc = 0;
      for (uint32_t j = 0; j < per_lane; ++j)
        acc = acc + p[j];
      tile[l] = acc;
    }
    for (uint32_t stride = 128; stride > 0; stride >>= 1)
      for (uint32_t l = 0; l < stride; ++l)
        tile[l] = tile[l] + tile[l + stride];
    out[g] = tile[0];
  }
}

void gemv(const float* w, const float* x, float* y, uint32_t cols, size_t begin, size_t end) {
  for (size_t r = begin; r < end; ++r) {
    const float* row = w + r * cols;
    float acc = 0;
    for (uint32_t j = 0; j < cols; ++j)
      acc = acc + row[j] * x[j];
    y[r] = acc;
  }
}

} // namespace halfway::bench::relaxed
