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
//  - exp and exp2 in f32, f16 and bf16 first try a table-and-polynomial evaluation in double with
//    a proven error bound (fast_math.hpp), cheaper than the glibc bracket (no libm call, no
//    re-rounding of the bracket ends through from_double for f32); where
//    its result lies too close to a rounding boundary, the bracket and MPFR decide as above.
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
#include <iterator>

namespace halfway::num {

// The one list of elementary functions: enumerator, name, arity, the glibc double call that
// brackets the value (x, y are the exactly widened operands) and the MPFR call that decides it
// (out, in_x, in_y, rnd are math.cpp's scratch). Adding a function is one row. MathFn crosses the
// JIT ABI as its integer, which both sides take from this list.
#define HALFWAY_MATH_FNS(X)                                                                        \
  X(Exp, "exp", 1, std::exp(x), mpfr_exp(out, in_x, rnd))                                          \
  X(Exp2, "exp2", 1, std::exp2(x), mpfr_exp2(out, in_x, rnd))                                      \
  X(Log, "log", 1, std::log(x), mpfr_log(out, in_x, rnd))                                          \
  X(Log2, "log2", 1, std::log2(x), mpfr_log2(out, in_x, rnd))                                      \
  X(Sin, "sin", 1, std::sin(x), mpfr_sin(out, in_x, rnd))                                          \
  X(Cos, "cos", 1, std::cos(x), mpfr_cos(out, in_x, rnd))                                          \
  X(Tan, "tan", 1, std::tan(x), mpfr_tan(out, in_x, rnd))                                          \
  X(Tanh, "tanh", 1, std::tanh(x), mpfr_tanh(out, in_x, rnd))                                      \
  X(Sqrt, "sqrt", 1, std::sqrt(x), mpfr_sqrt(out, in_x, rnd))                                      \
  X(Rsqrt, "rsqrt", 1, 1.0 / std::sqrt(x), mpfr_rec_sqrt(out, in_x, rnd))                          \
  X(Erf, "erf", 1, std::erf(x), mpfr_erf(out, in_x, rnd))                                          \
  /* pow(x, y) = x^y */                                                                            \
  X(Pow, "pow", 2, std::pow(x, y), mpfr_pow(out, in_x, in_y, rnd))                                 \
  /* atan2(y, x): the first operand is y, as in C */                                               \
  X(Atan2, "atan2", 2, std::atan2(x, y), mpfr_atan2(out, in_x, in_y, rnd))                         \
  X(Atan, "atan", 1, std::atan(x), mpfr_atan(out, in_x, rnd))

enum class MathFn : uint8_t {
#define HALFWAY_X(fn, text, arity, libm, mpfr) fn,
  HALFWAY_MATH_FNS(HALFWAY_X)
#undef HALFWAY_X
};

struct MathFnInfo {
  const char* name;
  int arity;
};
inline constexpr MathFnInfo kMathFns[] = {
#define HALFWAY_X(fn, text, arity, libm, mpfr) {text, arity},
    HALFWAY_MATH_FNS(HALFWAY_X)
#undef HALFWAY_X
};
inline constexpr int kMathFnCount = static_cast<int>(std::size(kMathFns));
constexpr const MathFnInfo& math_info(MathFn fn) {
  return kMathFns[static_cast<int>(fn)];
}

// fn applied to x (and y for the binary functions; ignored otherwise), all patterns of format f.
uint64_t math(MathFn fn, Format f, uint64_t x, uint64_t y = 0);
// The same value without the double fast path of exp and exp2 (fast_math.hpp): the glibc bracket
// and MPFR only. The tests compare the two; math() falls back to it.
uint64_t math_without_fast_path(MathFn fn, Format f, uint64_t x, uint64_t y = 0);

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
