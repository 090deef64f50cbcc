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

#include "baseline_loops.inc"

} // namespace halfway::bench
