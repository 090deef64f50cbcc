#pragma once
// The site judge's fast path (sites.cpp): the §4 bound's verdict on one element, for the common
// site, with inline arithmetic instead of the generic bound functions (bound.hpp).

#include "exact.hpp"
#include "halfway/interp/shadow.hpp"
#include "halfway/numerics/formats.hpp"
#include "halfway/numerics/nearest.hpp"
#include "halfway/numerics/nearest_avx2.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace halfway::diff::detail {

// The §4 bound's verdict on a device value that differs from the reference, for the common site
// (an f32 producer rounded to nearest into T = f16, bf16 or f32, nothing flushed): the ends
// single_rounding_bound computes, and what accepts and bound_ratio make of them, with inline
// arithmetic (the judge bounds millions of elements). Nothing when a case falls outside it (a
// value or an end that is not finite, a sum the error-free path cannot decide): the generic
// functions decide those.
// A site qualifies when its producer is f32 and its convert rounds to nearest; the caller passes
// the site's skipped error E (skipped_error) and makes sure nothing is flushed.
struct FastVerdict {
  bool inside = false;
  double ratio = 0;
};

template <num::Format T>
std::optional<FastVerdict> fast_verdict(double exact_hi, double exact_lo, double error,
                                        uint64_t ref, uint64_t device) {
  namespace nearest = num::nearest;
  constexpr int kTotal = nearest::Layout<T>::kTotal, kFrac = nearest::Layout<T>::P - 1;
  constexpr uint64_t kExp = ((uint64_t{1} << (kTotal - 1)) - 1) & ~((uint64_t{1} << kFrac) - 1);
  auto finite = [](uint64_t bits) { return (bits & kExp) != kExp; };
  if (!std::isfinite(exact_hi) || !finite(ref) || !finite(device))
    return std::nullopt;
  // Only the end on the device's side decides (the device differs from the reference, and the
  // reference lies inside the bound): the upper end (+error) above it, the lower one below.
  const double rv = nearest::to_double<T>(ref), dv = nearest::to_double<T>(device);
  const bool up = dv > rv;
  const std::optional<double> odd = fast_sum_odd(exact_hi, exact_lo, up ? error : -error);
  if (!odd)
    return std::nullopt;
  // Rounded once from the exact value, and through the f32 source first.
  const uint64_t once = nearest::from_finite<T>(*odd);
  const uint64_t source = nearest::from_finite<num::Format::F32>(*odd);
  if (!finite(once) || (source & 0x7f800000u) == 0x7f800000u)
    return std::nullopt;
  const double via = nearest::to_double<num::Format::F32>(source);
  const uint64_t twice = T == num::Format::F32 ? source : nearest::from_finite<T>(via);
  if (!finite(twice))
    return std::nullopt;
  const double a = nearest::to_double<T>(once), b = nearest::to_double<T>(twice);
  const double end = up ? std::max(a, b) : std::min(a, b);
  FastVerdict v;
  v.inside = up ? dv <= end : end <= dv;
  const double width = std::fabs(end - rv), diff = std::fabs(dv - rv);
  v.ratio = diff == 0 ? 0 : width == 0 ? std::numeric_limits<double>::infinity() : diff / width;
  return v;
}

#if defined(__AVX2__) && defined(__F16C__)
// fast_verdict<T> on four elements at once (T = f16 or bf16), on AVX2 vectors of four doubles,
// with the same results bit for bit: the judge decides every element that differs from the
// reference this way, about a tenth of them on tie-stressing inputs, and the scalar function's
// chain of TwoSums and its branches (up or down, odd or even: coin tosses on such inputs) were
// the judge's largest cost. Returns the lanes it decided (bit j for lane j), their verdicts in
// `inside` (bits) and `ratio`; the others are exactly those where the scalar function returns
// nothing, and the generic bound decides them.

template <num::Format T>
unsigned fast_verdict4(const double* exact_hi, const double* exact_lo, const double* error,
                       const uint32_t* ref, const uint32_t* device, unsigned& inside,
                       double* ratio) {
  static_assert(T == num::Format::F16 || T == num::Format::BF16);
  using num::avx2::finite_mask, num::avx2::from_f32, num::avx2::narrow, num::avx2::round_to_odd,
      num::avx2::to_double, num::avx2::two_sum;
  const __m128i kExp = _mm_set1_epi32(T == num::Format::F16 ? 0x7c00 : 0x7f80);
  auto finite_bits = [&](__m128i bits) { // all ones where the pattern is finite
    return _mm_xor_si128(_mm_cmpeq_epi32(_mm_and_si128(bits, kExp), kExp), _mm_set1_epi32(-1));
  };
  auto widen = [](__m128i m) { return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(m)); };
  const __m128i r_bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ref));
  const __m128i d_bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(device));
  const __m256d hi = _mm256_loadu_pd(exact_hi), lo = _mm256_loadu_pd(exact_lo);
  __m256d ok = _mm256_and_pd(finite_mask(hi),
                             widen(_mm_and_si128(finite_bits(r_bits), finite_bits(d_bits))));
  const __m256d rv = to_double<T>(r_bits), dv = to_double<T>(d_bits);
  // Only the end on the device's side decides: +error above the reference, -error below.
  const __m256d up = _mm256_cmp_pd(dv, rv, _CMP_GT_OQ);
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d c = _mm256_xor_pd(_mm256_loadu_pd(error), _mm256_andnot_pd(up, sign));
  // fast_sum_odd(hi, lo, c).
  __m256d s1, e1, s2, e2, t, f, u, g;
  two_sum(hi, lo, s1, e1);
  two_sum(s1, c, s2, e2);
  two_sum(e2, e1, t, f);
  two_sum(s2, t, u, g);
  const __m256d rest = _mm256_add_pd(g, f);
  ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_and_pd(finite_mask(u), finite_mask(rest)),
                                       _mm256_and_pd(finite_mask(s1), finite_mask(s2))));
  const __m256i u_bits = _mm256_castpd_si256(u);
  const __m256i field = _mm256_and_si256(_mm256_srli_epi64(u_bits, 52), _mm256_set1_epi64x(0x7ff));
  const __m256d gap =
      _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_sub_epi64(field, _mm256_set1_epi64x(53)), 52));
  const __m256d abs = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff));
  const __m256d rest_zero = _mm256_cmp_pd(rest, _mm256_setzero_pd(), _CMP_EQ_OQ);
  const __m256d close =
      _mm256_and_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(field, _mm256_set1_epi64x(53))),
                    _mm256_cmp_pd(_mm256_and_pd(rest, abs), gap, _CMP_LT_OQ));
  ok = _mm256_and_pd(ok, _mm256_or_pd(rest_zero, close));
  // An even u steps one ulp towards the remainder when there is one. Lanes not ok may hold
  // anything from here on: they are not reported.
  const __m256d odd = _mm256_blendv_pd(_mm256_setzero_pd(), round_to_odd(u, rest), ok);
  // Rounded once from the exact value, and through the f32 source first.
  const __m128i once = narrow<T>(odd);
  const __m128i source = _mm_castps_si128(_mm256_cvtpd_ps(odd));
  const __m128i f32_exp = _mm_set1_epi32(0x7f800000);
  const __m128i source_finite =
      _mm_xor_si128(_mm_cmpeq_epi32(_mm_and_si128(source, f32_exp), f32_exp), _mm_set1_epi32(-1));
  const __m128i twice = from_f32<T>(source);
  ok = _mm256_and_pd(ok, widen(_mm_and_si128(_mm_and_si128(finite_bits(once), finite_bits(twice)),
                                             source_finite)));
  const __m256d a = to_double<T>(once), b = to_double<T>(twice);
  const __m256d end = _mm256_blendv_pd(_mm256_min_pd(a, b), _mm256_max_pd(a, b), up);
  const __m256d in =
      _mm256_blendv_pd(_mm256_cmp_pd(end, dv, _CMP_LE_OQ), _mm256_cmp_pd(dv, end, _CMP_LE_OQ), up);
  const __m256d width = _mm256_and_pd(_mm256_sub_pd(end, rv), abs);
  const __m256d diff = _mm256_and_pd(_mm256_sub_pd(dv, rv), abs);
  const __m256d zero = _mm256_setzero_pd();
  const __m256d r =
      _mm256_blendv_pd(_mm256_blendv_pd(_mm256_div_pd(diff, width),
                                        _mm256_set1_pd(std::numeric_limits<double>::infinity()),
                                        _mm256_cmp_pd(width, zero, _CMP_EQ_OQ)),
                       zero, _mm256_cmp_pd(diff, zero, _CMP_EQ_OQ));
  _mm256_storeu_pd(ratio, r);
  const auto decided = static_cast<unsigned>(_mm256_movemask_pd(ok));
  inside = static_cast<unsigned>(_mm256_movemask_pd(in)) & decided;
  return decided;
}
#endif

// The shadow record's exact value exact_hi + exact_lo.
inline std::optional<FastVerdict> fast_verdict(num::Format t, double exact_hi, double exact_lo,
                                               double error, uint64_t ref, uint64_t device) {
  switch (t) {
  case num::Format::F16:
    return fast_verdict<num::Format::F16>(exact_hi, exact_lo, error, ref, device);
  case num::Format::BF16:
    return fast_verdict<num::Format::BF16>(exact_hi, exact_lo, error, ref, device);
  case num::Format::F32:
    return fast_verdict<num::Format::F32>(exact_hi, exact_lo, error, ref, device);
  default:
    return std::nullopt;
  }
}

} // namespace halfway::diff::detail
