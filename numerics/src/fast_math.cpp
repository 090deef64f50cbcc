#include "halfway/numerics/fast_math.hpp"

#include "halfway/numerics/convert.hpp"

#include <array>
#include <cmath>
#include <mpfr.h>

namespace halfway::num::fast {

namespace {

std::array<double, kTableSize> make_table() {
  std::array<double, kTableSize> t{};
  mpfr_t v;
  mpfr_init2(v, 128);
  for (int j = 0; j < kTableSize; ++j) {
    mpfr_set_si(v, j, MPFR_RNDN);
    mpfr_div_2ui(v, v, kTableBits, MPFR_RNDN); // exact: j / 64
    mpfr_exp2(v, v, MPFR_RNDN);
    t[static_cast<size_t>(j)] = mpfr_get_d(v, MPFR_RNDN); // the one rounding to double
  }
  mpfr_clear(v);
  // mpfr_exp2 caches log 2 per thread. The first caller may be a worker thread that exits
  // without running eval_mpfr's thread_local clean-up, and its cache would then be lost.
  mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
  return t;
}

} // namespace

std::span<const double, kTableSize> exp2_table() {
  static const std::array<double, kTableSize> table = make_table();
  return table;
}

double approx(MathFn fn, double x) {
  // k = the integer nearest z: adding 1.5 * 2^52 leaves z's integer part in the low mantissa bits.
  double r;
  double kd;
  if (fn == MathFn::Exp) {
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
  return exp2_table()[static_cast<size_t>(k & (kTableSize - 1))] * p * scale;
}

std::optional<uint64_t> decide(MathFn fn, Format f, double x) {
  if (std::isnan(x))
    return quiet_nan(f);
  const Range range = fast::range(fn);
  if (x < range.zero_below)
    return uint64_t{0};
  if (x > range.inf_above)
    return info(f).inf_bits;
  const double y = approx(fn, x);
  const double d = y * kTestWidth;
  // The host's double -> float conversion rounds to nearest even (default MXCSR), like
  // from_double, at a fraction of its cost.
  const auto narrow = [f](double v) {
    return f == Format::F32 ? uint64_t{f32_bits(static_cast<float>(v))} : from_double(f, v);
  };
  const uint64_t lo = narrow(y - d);
  if (lo != narrow(y + d))
    return std::nullopt;
  return lo;
}

} // namespace halfway::num::fast
