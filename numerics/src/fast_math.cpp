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
  const double* table = exp2_table().data();
  return fn == MathFn::Exp ? evaluate<MathFn::Exp>(x, table) : evaluate<MathFn::Exp2>(x, table);
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
