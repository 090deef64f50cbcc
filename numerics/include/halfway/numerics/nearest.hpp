#pragma once
// Inline conversions between binary64 and the IEEE-style formats f16, bf16 and f32, for loops that
// convert millions of values (the interpreter's shadow, the differential checker): the same
// results as to_double and from_double (convert.hpp), which call these for those formats and
// decide everything else (NaNs, infinities, fp8, other roundings) on the generic path.

#include "halfway/numerics/formats.hpp"

#include <cstdint>

namespace halfway::num::nearest {

// P significand bits (the implicit bit included), exponents [1 - kEmax, kEmax], kTotal bits.
template <Format F> struct Layout;
template <> struct Layout<Format::F16> { static constexpr int P = 11, kEmax = 15, kTotal = 16; };
template <> struct Layout<Format::BF16> { static constexpr int P = 8, kEmax = 127, kTotal = 16; };
template <> struct Layout<Format::F32> { static constexpr int P = 24, kEmax = 127, kTotal = 32; };

// The exact value of a pattern of F that is neither NaN nor infinite.
template <Format F> inline double to_double(uint64_t bits) {
  constexpr int P = Layout<F>::P, kEmax = Layout<F>::kEmax, kTotal = Layout<F>::kTotal;
  constexpr int kFrac = P - 1;
  const uint64_t sign = (bits >> (kTotal - 1)) & 1, frac = bits & ((uint64_t{1} << kFrac) - 1);
  const auto biased = static_cast<int>((bits >> kFrac) & ((uint64_t{1} << (kTotal - P)) - 1));
  // Both exact: a subnormal's fraction times a power of two, or the fields placed into binary64.
  constexpr double kSubnormalUnit = detail::pow2(1 - kEmax - kFrac);
  const double magnitude =
      biased == 0 ? static_cast<double>(frac) * kSubnormalUnit
                  : f64_from_bits((static_cast<uint64_t>(biased - kEmax + 1023) << 52) |
                                  (frac << (52 - kFrac)));
  return sign ? -magnitude : magnitude;
}

// A finite double rounded once, to nearest-even, into F (infinity on overflow).
template <Format F> inline uint64_t from_finite(double x) {
  constexpr int P = Layout<F>::P, kEmax = Layout<F>::kEmax, kTotal = Layout<F>::kTotal;
  constexpr int kEmin = 1 - kEmax;
  const uint64_t b = f64_bits(x);
  const uint64_t sign = (b >> 63) << (kTotal - 1);
  const uint64_t magnitude = b & 0x7fffffffffffffffu;
  const int e = static_cast<int>(magnitude >> 52) - 1023; // -1023: zero or a binary64 subnormal
  if (e > kEmax) // at least 2^(kEmax + 1): overflows to infinity under nearest-even
    return sign | (((uint64_t{1} << (kTotal - P)) - 1) << (P - 1));
  const uint64_t m = (magnitude & 0xfffffffffffffu) | (e == -1023 ? 0 : uint64_t{1} << 52);
  // Bits of m below the result's last bit: 53 - P for normal results, more below kEmin.
  const int shift = 53 - P + (e < kEmin ? kEmin - e : 0);
  if (shift > 54) // below a quarter of the smallest subnormal: rounds to a zero of x's sign
    return sign;
  uint64_t q = m >> shift;
  const uint64_t rem = m & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
  // Without a branch: on values near ties (what the checker's inputs are made of) it would be a
  // coin toss.
  q += static_cast<uint64_t>((rem > half) | ((rem == half) & ((q & 1) != 0)));
  // A normal result's significand carries into the exponent field by itself (up to infinity);
  // a subnormal's q is its fraction (q == 2^(P-1) being the smallest normal).
  if (e < kEmin)
    return sign | q;
  return sign | ((static_cast<uint64_t>(e + kEmax) << (P - 1)) + q - (uint64_t{1} << (P - 1)));
}

} // namespace halfway::num::nearest
