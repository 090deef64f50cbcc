#pragma once
// The double-precision fast path of the correctly rounded exp and exp2 (math.hpp) for f32, f16
// and bf16: a table and a short polynomial in double, and a test whether that double decides the
// rounding to the target format. Where it does not (near a rounding boundary of the format, about
// 2^-24 of f32 inputs), the caller's general routine decides (glibc bracket, then MPFR).
//
// The CPU JIT emits the same evaluation as LLVM IR (codegen/llvm/src/lower_math.cpp) from the
// constants below, so that it vectorises; num::math uses `decide` directly, and the interpreter
// runs `evaluate` and the same test over whole batches (interp/src/eval_float.cpp). Both must give
// math()'s bits exactly, which tests/numerics/fast_math_test.cpp and tests/cpu/math_test.cpp
// check on every f16 and bf16 input and on 10^7 random f32 inputs.
//
// Evaluation, for x in range(fn) (x is a binary32 value or narrower, exact in double):
//   exp:  z = x * 64/ln2, k = nearest integer to z (the 1.5 * 2^52 trick, so no rounding
//         instruction is needed), r = (x - k * kLn2Hi) - k * kLn2Lo
//   exp2: k = nearest integer to 64x, r = (64x - k) * ln2/64
//   both: y = 2^(k >> 6) * T[k & 63] * P(r), T[j] = 2^(j/64), P the degree-5 Taylor polynomial
//         of e^r in Horner form.
//
// Error bound (u = 2^-53, the unit roundoff of double). |k| < 2^14 in range, so k * kLn2Hi is
// exact (kLn2Hi has 29 significant bits) and so is x - k * kLn2Hi (Sterbenz: for k != 0 the two
// are within a factor 2 of each other; for k = 0 it is x). |r| <= (1/2 + 2^-40) ln2/64 < 0.00542,
// computed with an absolute error below 0.006u (one rounding of r, one of k * kLn2Lo, and
// kLn2Hi + kLn2Lo within 2^-88 of ln2/64); for exp2, 64x - k is exact and the product with ln2/64
// adds at most 2u |r|. The Taylor remainder is at most |r|^6 e^|r| / 720 < 2^-54.6 < 0.33u
// relative. Horner's rounding errors in double, with every term after the first two below
// 0.00542^2, add at most 1.04u; T[j] is correctly rounded (u); the product T[j] * P(r) is one
// more rounding (u); the power of two is exact (the result is a normal double). In all the
// relative error of y is below 3.4u < 2^-51. The JIT fuses each Horner step into one
// multiply-add where the host has FMA: one rounding in place of two per step can only lower the
// error, so the bound holds for both evaluations; and it scales T[j] by the power of two before
// multiplying by P(r), which is the same single rounding of the product.
//
// Rounding test: with lo = y - y * 2^-49 and hi = y + y * 2^-49 (y * 2^-49 is exact; each sum's
// rounding moves it by at most u y, so [lo, hi] still contains [y (1 - 2^-50), y (1 + 2^-50)],
// which contains the true value), if lo and hi round to the same value of the target format, so
// does every number between them (rounding is monotonic), the true value included. The test
// fails on about 2 * 2^-49 / 2^-24 = 2^-24 of f32 results; exp and exp2 of a binary32 value are
// never exact midpoints (Lindemann: e^x is transcendental for x != 0; 2^x has at most 24
// significant bits for integer x and is irrational otherwise), so the general routine is needed
// only near the boundaries, never to break an exact tie. Overflow and underflow need no special
// case: the nearest-even conversion of lo and hi to the format rounds to infinity, to subnormals
// and to zero as IEEE does.

#include "halfway/numerics/formats.hpp"
#include "halfway/numerics/math.hpp"

#include <cstdint>
#include <optional>
#include <span>

namespace halfway::num::fast {

inline constexpr int kTableBits = 6;
inline constexpr int kTableSize = 1 << kTableBits;

// 2^(j/64) for j in [0, 64), each the double nearest to it (computed once with MPFR).
std::span<const double, kTableSize> exp2_table();

inline constexpr double kExpScale = 0x1.71547652b82fep+6; // 64/ln2, rounded: only picks k
inline constexpr double kLn2Hi = 0x1.62e42ffp-7;          // ln2/64 = kLn2Hi + kLn2Lo + 2^-88
inline constexpr double kLn2Lo = -0x1.718432a1b0e26p-41;
inline constexpr double kLn2 = 0x1.62e42fefa39efp-7; // ln2/64, rounded: exp2's r = t * kLn2
inline constexpr double kRoundShift = 0x1.8p52;      // z + 1.5*2^52: z rounded to an integer
// Taylor coefficients 1/n! of e^r for n = 2..5 (those of r^0 and r^1 are 1).
inline constexpr double kC2 = 0.5;
inline constexpr double kC3 = 1.0 / 6;
inline constexpr double kC4 = 1.0 / 24;
inline constexpr double kC5 = 1.0 / 120;
// Half-width of the rounding test, relative: twice the proven error bound 2^-50 (see above).
inline constexpr double kTestWidth = 0x1p-49;

// Outside (zero_below, inf_above) fn's value rounds to +0 or +inf in every format up to f32
// (e^-104 and 2^-151 lie below half of f32's smallest subnormal 2^-149; e^89 and 2^129 lie above
// its largest finite value); inside, the evaluation above is valid (|k| < 2^14).
struct Range {
  double zero_below;
  double inf_above;
};
constexpr Range range(MathFn fn) {
  return fn == MathFn::Exp ? Range{-104.0, 89.0} : Range{-151.0, 129.0};
}

// Whether fn in format f has this fast path: exp and exp2 in f32, f16 and bf16.
constexpr bool has_fast_path(MathFn fn, Format f) {
  return (fn == MathFn::Exp || fn == MathFn::Exp2) &&
         (f == Format::F32 || f == Format::F16 || f == Format::BF16);
}

// The evaluation above of fn(x) (exp or exp2) for x inside range(fn), relative error below
// 2^-51; `table` is exp2_table(). Inline and without branches, so that loops over it vectorise
// (the interpreter's batches).
template <MathFn Fn> inline double evaluate(double x, const double* table) {
  static_assert(Fn == MathFn::Exp || Fn == MathFn::Exp2);
  // k = the integer nearest z: adding 1.5 * 2^52 leaves z's integer part in the low mantissa bits.
  double r;
  double kd;
  if constexpr (Fn == MathFn::Exp) {
    kd = x * kExpScale + kRoundShift;
    kd -= kRoundShift;
    r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  } else {
    const double t = x * kTableSize; // exact
    kd = t + kRoundShift;
    kd -= kRoundShift;
    r = (t - kd) * kLn2; // t - kd is exact
  }
  const auto k = static_cast<int64_t>(kd); // |k| < 2^14 in range
  const double p = 1.0 + r * (1.0 + r * (kC2 + r * (kC3 + r * (kC4 + r * kC5))));
  const double scale = f64_from_bits(static_cast<uint64_t>((k >> kTableBits) + 1023) << 52);
  return table[static_cast<size_t>(k & (kTableSize - 1))] * p * scale;
}

// The same for a run-time fn.
double approx(MathFn fn, double x);

// fn(x) rounded to f (has_fast_path(fn, f), x exact in f) when the fast path decides it, NaN,
// infinities and the ranges beyond range(fn) included; nullopt when the general routine must.
std::optional<uint64_t> decide(MathFn fn, Format f, double x);

} // namespace halfway::num::fast
