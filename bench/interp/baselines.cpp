#include "baselines.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
// g++ 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports as a false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#include <thread>
#include <vector>

namespace halfway::bench {

namespace {

template <class F> void split(size_t n, unsigned threads, size_t align, F f) {
  const size_t chunk = (n / threads + align - 1) / align * align;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
    size_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
    pool.emplace_back([=] { f(b, e); });
  }
  f(0, std::min(n, chunk));
  for (auto& t : pool)
    t.join();
}

} // namespace

void saxpy_f32(const float* x, float* y, float a, size_t n, unsigned threads) {
  split(n, threads, 16, [=](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i)
      y[i] = a * x[i] + y[i];
  });
}

void saxpy_f16(const uint16_t* x, uint16_t* y, float a, size_t n, unsigned threads) {
  split(n, threads, 16, [=](size_t b, size_t e) {
    size_t i = b;
#if defined(__AVX512F__)
    const __m512 va = _mm512_set1_ps(a);
    for (; i + 16 <= e; i += 16) {
      __m512 vx = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
      __m512 vy = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i)));
      __m512 r = _mm512_add_ps(_mm512_mul_ps(va, vx), vy);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                          _mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
#endif
    for (; i < e; ++i) {
      float r = a * static_cast<float>(std::bit_cast<_Float16>(x[i])) +
                static_cast<float>(std::bit_cast<_Float16>(y[i]));
      y[i] = std::bit_cast<uint16_t>(static_cast<_Float16>(r));
    }
  });
}

void reduce_sum(const float* x, float* out, size_t n, unsigned threads) {
  const size_t groups = (n + 255) / 256;
  split(groups, threads, 1, [=](size_t b, size_t e) {
    for (size_t g = b; g < e; ++g) {
      float tile[256];
      for (size_t l = 0; l < 256; ++l)
        tile[l] = g * 256 + l < n ? x[g * 256 + l] : 0.0f;
      for (size_t stride = 128; stride > 0; stride >>= 1)
        for (size_t l = 0; l < stride; ++l)
          tile[l] = tile[l] + tile[l + stride];
      out[g] = tile[0];
    }
  });
}

} // namespace halfway::bench
