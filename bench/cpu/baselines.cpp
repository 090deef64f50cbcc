#include "baselines.hpp"

#include <bit>
#include <immintrin.h>

namespace halfway::bench {

void saxpy(float a, const float* x, float* y, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i)
    y[i] = a * x[i] + y[i];
}

void narrow_f16(const float* a, const float* b, const float* c, uint16_t* out, size_t begin,
                size_t end) {
  for (size_t i = begin; i < end; ++i)
    out[i] = std::bit_cast<uint16_t>(static_cast<_Float16>(a[i] * b[i] + c[i]));
}

void narrow_f16_intrinsics(const float* a, const float* b, const float* c, uint16_t* out,
                           size_t begin, size_t end) {
  size_t i = begin;
#ifdef __AVX512F__
  for (; i + 16 <= end; i += 16) {
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)),
                             _mm512_loadu_ps(c + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
#endif
  for (; i < end; ++i)
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

} // namespace halfway::bench
