#include "halfway/numerics/math.hpp"

#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/fast_math.hpp"
#include "mpfr_round.hpp"

#include <cmath>

namespace halfway::num {

namespace {

thread_local uint64_t fallbacks = 0;

// Bracket half-width in double ulps. glibc 2.36 documents at most 2 ulps for these functions in
// double (tanh, erf); 1/sqrt adds 1.5. 1024 leaves room for any of that and still decides all but
// about 2^-18 of f32 results, fewer for narrower formats.
constexpr int64_t kBracketUlps = 1024;

double eval_double(MathFn fn, double x, double y) {
  switch (fn) {
#define HALFWAY_X(fn, text, arity, libm, mpfr)                                                     \
  case MathFn::fn:                                                                                 \
    return libm;
    HALFWAY_MATH_FNS(HALFWAY_X)
#undef HALFWAY_X
  }
  return NAN;
}

// MPFR's value for fn at the format's precision, with the format's range; x and y are exact.
uint64_t eval_mpfr(MathFn fn, Format f, double x, double y) {
  struct Scratch {
    mpfr_t in_x, in_y, out;
    Scratch() { mpfr_inits2(53, in_x, in_y, out, static_cast<mpfr_ptr>(nullptr)); }
    ~Scratch() {
      mpfr_clears(in_x, in_y, out, static_cast<mpfr_ptr>(nullptr));
      mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); // this thread's constant caches (pi, log 2...)
    }
  };
  thread_local Scratch s;
  ++fallbacks;
  mpfr_set_d(s.in_x, x, MPFR_RNDN);
  mpfr_set_d(s.in_y, y, MPFR_RNDN);
  mpfr_set_prec(s.out, info(f).precision());
  const mpfr_rnd_t rnd = MPFR_RNDN;
  int t = 0;
  {
    // The table's MPFR calls name their operands as below.
    mpfr_ptr out = s.out;
    mpfr_srcptr in_x = s.in_x, in_y = s.in_y;
    switch (fn) {
#define HALFWAY_X(fn, text, arity, libm, mpfr)                                                     \
  case MathFn::fn:                                                                                 \
    t = mpfr;                                                                                      \
    break;
      HALFWAY_MATH_FNS(HALFWAY_X)
#undef HALFWAY_X
    }
  }
  detail::fit_to_format(f, s.out, t, rnd);
  const double r = mpfr_get_d(s.out, MPFR_RNDN); // exact: precision <= 53, range inside f64
  if (std::isnan(r))
    return quiet_nan(f);
  return from_double(f, r);
}

// Doubles in the order of their values as integers, +-0 both 0, so that stepping by n moves n
// ulps; clamped at the infinities.
int64_t ordered(double d) {
  const uint64_t b = f64_bits(d);
  const auto mag = static_cast<int64_t>(b & 0x7fffffffffffffffu);
  return (b >> 63) ? -mag : mag;
}
double from_ordered(int64_t o) {
  constexpr int64_t kInf = 0x7ff0000000000000;
  if (o > kInf)
    o = kInf;
  if (o < -kInf)
    o = -kInf;
  return o < 0 ? f64_from_bits(static_cast<uint64_t>(-o) | (uint64_t{1} << 63))
               : f64_from_bits(static_cast<uint64_t>(o));
}

uint64_t eval_narrow(MathFn fn, Format f, double x, double y) {
  const double v = eval_double(fn, x, y);
  if (std::isnan(v))
    return quiet_nan(f);
  const uint64_t r = from_double(f, v);
  const int64_t o = ordered(v);
  const uint64_t lo = from_double(f, from_ordered(o - kBracketUlps));
  const uint64_t hi = from_double(f, from_ordered(o + kBracketUlps));
  if (lo == hi)
    return r;
  // Both ends round to zero (of either sign): the value is far below the smallest subnormal, and
  // glibc's zero or tiny result carries the true sign.
  if (is_zero(f, lo) && is_zero(f, hi))
    return r;
  return eval_mpfr(fn, f, x, y);
}

} // namespace

uint64_t math(MathFn fn, Format f, uint64_t x, uint64_t y) {
  if (fast::has_fast_path(fn, f)) {
    if (const std::optional<uint64_t> r = fast::decide(fn, f, to_double(f, x)))
      return *r;
  }
  return math_without_fast_path(fn, f, x, y);
}

uint64_t math_without_fast_path(MathFn fn, Format f, uint64_t x, uint64_t y) {
  if (fn == MathFn::Sqrt)
    return sqrt(f, x);
  const bool binary = math_info(fn).arity == 2;
  if (!binary)
    y = 0;
  const double xd = to_double(f, x);
  const double yd = to_double(f, y);
  if (f != Format::F64)
    return eval_narrow(fn, f, xd, yd);
  // f64: MPFR decides, special values included (its C99 special values are ours), except
  // rsqrt(-0), where MPFR gives +inf and IEEE 1/sqrt(-0) = -inf.
  if (fn == MathFn::Rsqrt && xd == 0)
    return f64_bits(1.0 / xd);
  return eval_mpfr(fn, f, xd, yd);
}

uint64_t math_mpfr_fallbacks() {
  return fallbacks;
}

} // namespace halfway::num
