#pragma once
// Correctly rounded elementary functions (round to nearest even, 0 ulp from the exact value) for
// every Format.
//
// A device's sin or exp is only accurate to a few ulps; the interpreter's is exact, so that its
// answer is unique and tests can state device error bounds against it.
//
// Strategy, per call:
//  - f64: MPFR at 53 bits, with the target's exponent range and mpfr_subnormalize (slow, exact).
//  - other formats: the exactly widened inputs go through glibc's double function, whose error is
//    a few double ulps. If the true value's bracket (the double result +- 1024 double ulps,
//    generous against glibc's documented <= 2 ulp bounds) rounds to one target value, that is the
//    answer; otherwise (near a rounding boundary, about 2^-18 of f32 inputs, or an exact midpoint
//    such as pow(257, 3) in f32) MPFR decides at the target precision.
//  - sqrt is the correctly rounded arithmetic of arith.hpp.
//
// Special values follow C99 Annex F (IEEE 754 recommended operations), as glibc and MPFR do:
// exp(-inf) = +0, log(+-0) = -inf, log(x<0) = NaN, sin(+-inf) = NaN, tanh(+-inf) = +-1,
// erf(+-inf) = +-1, pow(x, +-0) = 1 even for NaN x, pow(+1, y) = 1 even for NaN y,
// pow(-1, +-inf) = 1, pow(+-0, y<0 odd integer) = +-inf, pow(x<0, non-integer) = NaN, and the
// signed-zero and infinity cases of atan2 (atan2(+-0, -0) = +-pi, atan2(+-inf, +inf) = +-pi/4...).
// rsqrt is 1/sqrt: rsqrt(+0) = +inf, rsqrt(-0) = -inf (IEEE 754-2019 9.2.1; MPFR's mpfr_rec_sqrt
// gives +inf there), rsqrt(+inf) = +0, rsqrt(x<0) = NaN.
// Overflow and underflow round as IEEE (to +-inf or +-0 under nearest-even; E4M3: NaN for
// overflow, with the value's sign). Other NaN results are the canonical quiet NaN with the sign
// bit clear (see arith.hpp).
//
// Thread-safe (MPFR state is thread-local); relies on the default MXCSR like arith.hpp.

#include "halfway/numerics/formats.hpp"

#include <cstdint>

namespace halfway::num {

enum class MathFn : uint8_t {
  Exp,
  Exp2,
  Log,
  Log2,
  Sin,
  Cos,
  Tan,
  Tanh,
  Sqrt,
  Rsqrt,
  Erf,
  Pow,   // pow(x, y) = x^y
  Atan2, // atan2(y, x): the first operand is y, as in C
};
inline constexpr int kMathFnCount = 13;

struct MathFnInfo {
  const char* name;
  int arity;
};
inline constexpr MathFnInfo kMathFns[kMathFnCount] = {
    {"exp", 1},  {"exp2", 1}, {"log", 1},   {"log2", 1}, {"sin", 1}, {"cos", 1},   {"tan", 1},
    {"tanh", 1}, {"sqrt", 1}, {"rsqrt", 1}, {"erf", 1},  {"pow", 2}, {"atan2", 2},
};
constexpr const MathFnInfo& math_info(MathFn fn) {
  return kMathFns[static_cast<int>(fn)];
}

// fn applied to x (and y for the binary functions; ignored otherwise), all patterns of format f.
uint64_t math(MathFn fn, Format f, uint64_t x, uint64_t y = 0);

// How many calls on this thread MPFR had to decide (for tests and benchmarks).
uint64_t math_mpfr_fallbacks();

inline uint64_t exp(Format f, uint64_t x) {
  return math(MathFn::Exp, f, x);
}
inline uint64_t exp2(Format f, uint64_t x) {
  return math(MathFn::Exp2, f, x);
}
inline uint64_t log(Format f, uint64_t x) {
  return math(MathFn::Log, f, x);
}
inline uint64_t log2(Format f, uint64_t x) {
  return math(MathFn::Log2, f, x);
}
inline uint64_t sin(Format f, uint64_t x) {
  return math(MathFn::Sin, f, x);
}
inline uint64_t cos(Format f, uint64_t x) {
  return math(MathFn::Cos, f, x);
}
inline uint64_t tan(Format f, uint64_t x) {
  return math(MathFn::Tan, f, x);
}
inline uint64_t tanh(Format f, uint64_t x) {
  return math(MathFn::Tanh, f, x);
}
inline uint64_t rsqrt(Format f, uint64_t x) {
  return math(MathFn::Rsqrt, f, x);
}
inline uint64_t erf(Format f, uint64_t x) {
  return math(MathFn::Erf, f, x);
}
inline uint64_t pow(Format f, uint64_t x, uint64_t y) {
  return math(MathFn::Pow, f, x, y);
}
inline uint64_t atan2(Format f, uint64_t y, uint64_t x) {
  return math(MathFn::Atan2, f, y, x);
}

} // namespace halfway::num
