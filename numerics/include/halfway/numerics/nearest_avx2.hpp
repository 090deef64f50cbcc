#pragma once
// nearest.hpp's conversions and the error-free sums they feed, four doubles per AVX2 vector, for
// the loops that evaluate rounding models over millions of lanes (the interpreter's dense shadow
// path, the checker's four-at-a-time verdicts). Only where the build has AVX2 and F16C; the
// results are those of the scalar code bit for bit, under the default MXCSR (round to nearest,
// no FTZ or DAZ), which every halfway worker thread runs with (support/thread_pool.hpp).

#if defined(__AVX2__) && defined(__F16C__)
#include "halfway/numerics/formats.hpp"

#include <immintrin.h>

namespace halfway::num::avx2 {

// All ones where v is finite: v - v is 0, else NaN.
inline __m256d finite_mask(__m256d v) {
  return _mm256_cmp_pd(_mm256_sub_pd(v, v), _mm256_setzero_pd(), _CMP_EQ_OQ);
}

// TwoSum (Knuth): a + b == sum + err exactly when the sum is finite.
inline void two_sum(__m256d a, __m256d b, __m256d& sum, __m256d& err) {
  sum = _mm256_add_pd(a, b);
  const __m256d bb = _mm256_sub_pd(sum, a);
  err = _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(sum, bb)), _mm256_sub_pd(b, bb));
}

// hi + lo rounded to odd, for finite hi whose spacing exceeds |lo|: an even last bit steps one
// ulp towards lo when lo != 0.
inline __m256d round_to_odd(__m256d hi, __m256d lo) {
  const __m256i bits = _mm256_castpd_si256(hi);
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256i step =
      _mm256_and_si256(_mm256_castpd_si256(_mm256_cmp_pd(lo, _mm256_setzero_pd(), _CMP_NEQ_OQ)),
                       _mm256_cmpeq_epi64(_mm256_and_si256(bits, one), _mm256_setzero_si256()));
  // -1 (all ones) where the signs differ (down in magnitude), else +1.
  const __m256i differ =
      _mm256_cmpgt_epi64(_mm256_setzero_si256(), _mm256_xor_si256(bits, _mm256_castpd_si256(lo)));
  const __m256i toward = _mm256_or_si256(differ, one);
  return _mm256_castsi256_pd(_mm256_add_epi64(bits, _mm256_and_si256(step, toward)));
}

// Doubles rounded to nearest-even binary32, back in doubles.
inline __m256d round_f32(__m256d v) {
  return _mm256_cvtps_pd(_mm256_cvtpd_ps(v));
}

// The low 32 bits of each 64-bit lane.
inline __m128i low_halves(__m256i v) {
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

// Finite doubles rounded to odd into binary32 (24 >= 11 + 2 and 8 + 2 bits: a nearest-even
// rounding of the result into f16 or bf16 is one rounding of the double), as bit patterns.
inline __m128i odd_f32(__m256d v) {
  const __m128 f = _mm256_cvtpd_ps(v); // nearest-even under the default MXCSR
  const __m256d back = _mm256_cvtps_pd(f);
  const __m256d abs = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff));
  const __m128i over = low_halves(_mm256_castpd_si256(
      _mm256_cmp_pd(_mm256_and_pd(back, abs), _mm256_and_pd(v, abs), _CMP_GT_OQ)));
  const __m128i inexact = low_halves(_mm256_castpd_si256(_mm256_cmp_pd(back, v, _CMP_NEQ_OQ)));
  // Rounded up in magnitude: one step back (towards zero), then the last bit set when inexact.
  const __m128i truncated = _mm_add_epi32(_mm_castps_si128(f), over); // over is -1 or 0
  return _mm_or_si128(truncated, _mm_and_si128(inexact, _mm_set1_epi32(1)));
}

// Binary32 patterns (finite or infinite) rounded to nearest-even into To (f16 or bf16), as
// patterns in 32-bit lanes.
template <Format To> inline __m128i from_f32(__m128i f) {
  static_assert(To == Format::F16 || To == Format::BF16);
  if constexpr (To == Format::F16)
    return _mm_cvtepu16_epi32(_mm_cvtps_ph(_mm_castsi128_ps(f), _MM_FROUND_TO_NEAREST_INT));
  else
    return _mm_srli_epi32(_mm_add_epi32(_mm_add_epi32(f, _mm_set1_epi32(0x7fff)),
                                        _mm_and_si128(_mm_srli_epi32(f, 16), _mm_set1_epi32(1))),
                          16);
}

// Finite doubles rounded once, to nearest-even, into To (f16 or bf16).
template <Format To> inline __m128i narrow(__m256d v) {
  return from_f32<To>(odd_f32(v));
}

// Finite patterns of T (f16 or bf16) in 32-bit lanes, as exact doubles.
template <Format T> inline __m256d to_double(__m128i bits) {
  static_assert(T == Format::F16 || T == Format::BF16);
  if constexpr (T == Format::F16)
    return _mm256_cvtps_pd(_mm_cvtph_ps(_mm_packus_epi32(bits, bits)));
  else
    return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(bits, 16)));
}

} // namespace halfway::num::avx2
#endif
