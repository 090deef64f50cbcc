#pragma once
// Exact arithmetic for bounds and generators. A few doubles are summed exactly in MPFR (at 2400
// bits every sum of three doubles, and every product of two, is exact), then rounded to odd into a
// double, and from there once into the target format. Round-to-odd at 53 bits >= p + 2 makes the
// last rounding exactly one rounding of the exact value, in any direction (Boldo and Melquiond,
// "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd", 2008).

namespace halfway::diff::detail {

// The exact value of a + b + c rounded to odd into a double (NaN if any is NaN or the sum is
// inf - inf; an infinity when one is infinite).
double sum_odd(double a, double b, double c = 0);
// The same, always through MPFR (sum_odd takes an error-free path where it can; tests compare).
double sum_odd_mpfr(double a, double b, double c = 0);
// The exact value of a + b + c rounded to nearest-even into a double.
double sum_nearest(double a, double b, double c = 0);
// The exact value of a * b + c rounded to odd into a double (exact for f32 operands; at 2400
// bits, for any doubles whose exponents are not too far apart).
double mul_add_odd(double a, double b, double c);

// Sign of (a * b + c) - m, exactly: -1, 0 or +1. All four must be finite.
int compare_mul_add(double a, double b, double c, double m);

} // namespace halfway::diff::detail
