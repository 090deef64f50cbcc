#include "workload_baselines.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <immintrin.h>
#include <limits>
#include <vector>

namespace halfway::bench::workloads {

namespace {

// The halving-tree sum (or max) of 2^p partial values, as the kernels' shared-memory reductions
// compute it: at each stride s, lanes l < s combine l and l + s.
template <uint32_t N, class F> float tree(float (&red)[N], F&& combine) {
  for (uint32_t stride = N / 2; stride > 0; stride >>= 1)
    for (uint32_t l = 0; l < stride; ++l)
      red[l] = combine(red[l], red[l + stride]);
  return red[0];
}

float add(float a, float b) {
  return a + b;
}
// The IR's max for the values these kernels see (no NaN): the larger.
float larger(float a, float b) {
  return a < b ? b : a;
}

// f32 <-> binary16 with F16C (vcvtps2ph rounding to nearest even, vcvtph2ps exact).
uint16_t to_f16(float v) {
  return _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
float from_f16(uint16_t h) {
  return _cvtsh_ss(h);
}
float f16_round(float v) {
  return from_f16(to_f16(v));
}

} // namespace

void exp_f32(const float* x, float* y, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i)
    y[i] = std::exp(x[i]);
}

void act_f32(const float* w, float* o, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    const float v = w[i];
    o[i] = std::fabs(v * v - 1.0f) + std::min(std::max(v, 0.0f), 1.0f);
  }
}

void act_f16(const uint16_t* w, uint16_t* o, size_t begin, size_t end) {
  size_t i = begin;
#ifdef __AVX512F__
  // 16 lanes at a time: widen, one f32 op, round to f16 and back, for each op of the kernel.
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const auto round = [](__m512 x) { return _mm512_cvtph_ps(_mm512_cvtps_ph(x, kNearest)); };
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  for (; i + 16 <= end; i += 16) {
    const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i)));
    const __m512 a = _mm512_abs_ps(round(_mm512_sub_ps(round(_mm512_mul_ps(v, v)), one)));
    const __m512 c = _mm512_min_ps(_mm512_max_ps(v, zero), one);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + i),
                        _mm512_cvtps_ph(_mm512_add_ps(a, c), kNearest));
  }
#elif defined(__AVX2__) && defined(__F16C__)
  // The same 8 lanes at a time: without it an AVX2 host measured halfway against the scalar loop
  // below (256 ms over 2^24 elements on a Zen AVX2 host, where halfway took 54 ms).
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  const auto round = [](__m256 x) { return _mm256_cvtph_ps(_mm256_cvtps_ph(x, kNearest)); };
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (; i + 8 <= end; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));
    const __m256 a = _mm256_andnot_ps(sign, round(_mm256_sub_ps(round(_mm256_mul_ps(v, v)), one)));
    const __m256 c = _mm256_min_ps(_mm256_max_ps(v, zero), one);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm256_cvtps_ph(_mm256_add_ps(a, c), kNearest));
  }
#endif
  for (; i < end; ++i) {
    const float v = from_f16(w[i]);
    const float a = std::fabs(f16_round(f16_round(v * v) - 1.0f));
    const float c = std::min(std::max(v, 0.0f), 1.0f);
    o[i] = to_f16(a + c);
  }
}

void group_norm_silu(const float* x, const float* gamma, const float* beta, float* y,
                     uint32_t channels, uint32_t groups, uint32_t hw, float eps, size_t begin,
                     size_t end) {
  constexpr uint32_t kLanes = 256;
  const uint32_t per_group = channels / groups, count = per_group * hw;
  const float n = static_cast<float>(count);
  for (size_t gi = begin; gi < end; ++gi) {
    const float* xi = x + gi * count;
    float* yi = y + gi * count;
    const uint32_t first_channel = static_cast<uint32_t>(gi % groups) * per_group;
    // Lane l sums elements l, l + 256, ...: block by block keeps each lane's order.
    float red[kLanes] = {};
    for (uint32_t i0 = 0; i0 < count; i0 += kLanes)
      for (uint32_t l = 0; l < kLanes && i0 + l < count; ++l)
        red[l] = red[l] + xi[i0 + l];
    const float mean = tree(red, add) / n;
    std::fill(std::begin(red), std::end(red), 0.0f);
    for (uint32_t i0 = 0; i0 < count; i0 += kLanes)
      for (uint32_t l = 0; l < kLanes && i0 + l < count; ++l) {
        const float d = xi[i0 + l] - mean;
        red[l] = red[l] + d * d;
      }
    // rsqrt in double, rounded once: almost always halfway's correctly rounded rsqrt.
    const float inv_std =
        static_cast<float>(1.0 / std::sqrt(static_cast<double>(tree(red, add) / n + eps)));
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t c = first_channel + i / hw;
      const float v = (xi[i] - mean) * inv_std * gamma[c] + beta[c];
      yi[i] = v / (1.0f + std::exp(-v));
    }
  }
}

void attention(const float* q, const float* k, const float* v, float* o, uint32_t seq, float scale,
               size_t begin, size_t end) {
  constexpr uint32_t kDim = 64;
  for (size_t lane = begin; lane < end; ++lane) {
    const size_t head = lane / seq;
    const float* ql = q + lane * kDim;
    const size_t kv0 = head * seq * kDim;
    float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
    float acc[kDim] = {};
    for (uint32_t j = 0; j < seq; ++j) {
      const float* kj = k + kv0 + size_t{j} * kDim;
      const float* vj = v + kv0 + size_t{j} * kDim;
      float dot = 0.0f;
      for (uint32_t d = 0; d < kDim; ++d)
        dot = dot + ql[d] * kj[d];
      const float s = dot * scale;
      const float m_new = larger(m, s);
      const float corr = std::exp(m - m_new);
      const float p = std::exp(s - m_new);
      l = l * corr + p;
      for (uint32_t d = 0; d < kDim; ++d)
        acc[d] = acc[d] * corr + p * vj[d];
      m = m_new;
    }
    for (uint32_t d = 0; d < kDim; ++d)
      o[lane * kDim + d] = acc[d] / l;
  }
}

void conv3x3(const float* x, const float* w, const float* bias, float* y, uint32_t cin,
             uint32_t height, uint32_t width, size_t begin, size_t end) {
  std::vector<float> acc(width);
  for (size_t t = begin; t < end; ++t) {
    const size_t o = t / height;
    const uint32_t r = static_cast<uint32_t>(t % height);
    std::fill(acc.begin(), acc.end(), bias[o]);
    for (uint32_t ci = 0; ci < cin; ++ci)
      for (uint32_t ky = 0; ky < 3; ++ky) {
        // Padded coordinates, as in the kernel: image row pr - 1, inside when 1 <= pr <= height.
        const uint32_t pr = r + ky;
        const bool row_inside = pr >= 1 && pr <= height;
        const float* xr = row_inside ? x + (size_t{ci} * height + pr - 1) * width : nullptr;
        for (uint32_t kx = 0; kx < 3; ++kx) {
          const float wv = w[((o * cin + ci) * 3 + ky) * 3 + kx];
          for (uint32_t c = 0; c < width; ++c) {
            const uint32_t pc = c + kx;
            const float xv = row_inside && pc >= 1 && pc <= width ? xr[pc - 1] : 0.0f;
            acc[c] = acc[c] + wv * xv;
          }
        }
      }
    std::copy(acc.begin(), acc.end(), y + t * width);
  }
}

void softmax_f16out(const float* x, uint16_t* y, uint32_t cols, size_t begin, size_t end) {
  constexpr uint32_t kLanes = 64;
  for (size_t r = begin; r < end; ++r) {
    const float* xr = x + r * cols;
    uint16_t* yr = y + r * cols;
    float red[kLanes];
    std::fill(std::begin(red), std::end(red), -std::numeric_limits<float>::infinity());
    for (uint32_t c0 = 0; c0 < cols; c0 += kLanes)
      for (uint32_t l = 0; l < kLanes && c0 + l < cols; ++l)
        red[l] = larger(red[l], xr[c0 + l]);
    const float row_max = tree(red, larger);
    std::fill(std::begin(red), std::end(red), 0.0f);
    for (uint32_t c0 = 0; c0 < cols; c0 += kLanes)
      for (uint32_t l = 0; l < kLanes && c0 + l < cols; ++l)
        red[l] = red[l] + std::exp(xr[c0 + l] - row_max);
    const float inv = 1.0f / tree(red, add);
    for (uint32_t c = 0; c < cols; ++c) {
      const float p = std::exp(xr[c] - row_max) * inv; // rounded to f32, then to f16
      yr[c] = to_f16(p);
    }
  }
}

#include "workload_loops.inc"

void matmul(const float* a, const float* b, float* c, uint32_t n, uint32_t k, size_t begin,
            size_t end) {
#ifdef __AVX512F__
  // Register tiles of 4 rows x 64 columns (16 accumulators): for each k, the 4 rows' a[i][k]
  // broadcast times one 64-wide row of b, multiply then add (no FMA), k ascending per element as
  // in the kernel. Rows and columns left over go through the loop.
  size_t i = begin;
  const uint32_t n64 = n / 64 * 64;
  for (; i + 4 <= end; i += 4) {
    for (uint32_t j = 0; j < n64; j += 64) {
      __m512 acc[4][4];
      for (auto& row : acc)
        for (__m512& v : row)
          v = _mm512_setzero_ps();
      for (uint32_t kk = 0; kk < k; ++kk) {
        const float* bk = b + size_t{kk} * n + j;
        const __m512 b0 = _mm512_loadu_ps(bk), b1 = _mm512_loadu_ps(bk + 16),
                     b2 = _mm512_loadu_ps(bk + 32), b3 = _mm512_loadu_ps(bk + 48);
        for (int r = 0; r < 4; ++r) {
          const __m512 air = _mm512_set1_ps(a[(i + r) * k + kk]);
          acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_mul_ps(air, b0));
          acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_mul_ps(air, b1));
          acc[r][2] = _mm512_add_ps(acc[r][2], _mm512_mul_ps(air, b2));
          acc[r][3] = _mm512_add_ps(acc[r][3], _mm512_mul_ps(air, b3));
        }
      }
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; ++q)
          _mm512_storeu_ps(c + (i + r) * n + j + 16 * q, acc[r][q]);
    }
    for (uint32_t j = n64; j < n; ++j)
      for (int r = 0; r < 4; ++r) {
        float acc = 0.0f;
        for (uint32_t kk = 0; kk < k; ++kk)
          acc = acc + a[(i + r) * k + kk] * b[size_t{kk} * n + j];
        c[(i + r) * n + j] = acc;
      }
  }
  matmul_loop(a, b, c, n, k, i, end);
#else
  matmul_loop(a, b, c, n, k, begin, end);
#endif
}

void gemv_split(const float* w, const float* x, float* y, uint32_t cols, size_t begin, size_t end) {
  gemv_split_loop(w, x, y, cols, begin, end);
}

} // namespace halfway::bench::workloads
