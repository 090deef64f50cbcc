#pragma once
// Exact arithmetic for bounds and generators. A few doubles are summed exactly in MPFR (at 2400
// bits every sum of three doubles, and every product of two, is exact), then rounded to odd into a
// double, and from there once into the target format. Round-to-odd at 53 bits >= p + 2 makes the
// last rounding exactly one rounding of the exact value, in any direction (Boldo and Melquiond,
// "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd", 2008).

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

namespace halfway::diff::detail {

// TwoSum (Knuth): a + b == sum + err exactly, for finite a, b whose sum does not overflow.
inline void two_sum(double a, double b, double& sum, double& err) {
  sum = a + b;
  const double bb = sum - a;
  err = (a - (sum - bb)) + (b - bb);
}

// a + b + c rounded to odd without MPFR, for the common case (the checker bounds millions of
// elements): the sum is the expansion u + g + f (three TwoSums, exact), and when the remainder
// g + f is below u's smaller spacing, u and its neighbour towards the remainder enclose the
// sum strictly, so the odd one of the two is the result. The remainder's sign is exact: a rounded
// sum of two doubles is zero only when the exact sum is. Nothing when a case falls outside this
// (non-finite values, a remainder too large, u zero or subnormal): MPFR decides those.
inline std::optional<double> fast_sum_odd(double a, double b, double c) {
  double s1, e1, s2, e2, t, f, u, g;
  two_sum(a, b, s1, e1);
  two_sum(s1, c, s2, e2);
  two_sum(e2, e1, t, f);
  two_sum(s2, t, u, g);
  const double rest = g + f;
  if (!std::isfinite(u) || !std::isfinite(rest) || !std::isfinite(s1) || !std::isfinite(s2))
    return std::nullopt;
  if (rest == 0)
    return u;
  // The smaller of u's two spacings is at least 2^(ilogb(u) - 53) (the one below a power of two):
  // a remainder under that keeps the sum strictly between u and its neighbour on that side. The
  // power of two is built from u's exponent field (normal here, so that field minus 53 is too
  // when it exceeds 53; smaller u are left to MPFR).
  uint64_t bits = std::bit_cast<uint64_t>(u);
  const uint64_t field = (bits >> 52) & 0x7ff;
  if (field <= 53)
    return std::nullopt;
  const double gap = std::bit_cast<double>((field - 53) << 52);
  if (!(std::fabs(rest) < gap))
    return std::nullopt;
  if (bits & 1)
    return u;
  bits = (std::signbit(rest) == std::signbit(u)) ? bits + 1 : bits - 1;
  return std::bit_cast<double>(bits);
}

// The exact value of a + b + c rounded to odd into a double (NaN if any is NaN or the sum is
// inf - inf; an infinity when one is infinite).
double sum_odd(double a, double b, double c = 0);
// The same, always through MPFR (sum_odd takes an error-free path where it can; tests compare).
double sum_odd_mpfr(double a, double b, double c = 0);
// The exact value of a + b + c rounded to nearest-even into a double.
double sum_nearest(double a, double b, double c = 0);
// The exact value of a * b + c rounded to odd into a double (exact for f32 operands; at 2400
// bits, for any doubles whose exponents are not too far apart). Error-free arithmetic decides the
// common case, MPFR the rest.
double mul_add_odd(double a, double b, double c);
// The same, always through MPFR (tests compare).
double mul_add_odd_mpfr(double a, double b, double c);

// Sign of (a * b + c) - m, exactly: -1, 0 or +1. All four must be finite. Error-free when a * b
// is exact in a double (f32 operands), else MPFR.
int compare_mul_add(double a, double b, double c, double m);
int compare_mul_add_mpfr(double a, double b, double c, double m);

} // namespace halfway::diff::detail
