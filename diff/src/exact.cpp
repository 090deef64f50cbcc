#include "exact.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mpfr.h>
#include <optional>
#include <utility>

namespace halfway::diff::detail {

namespace {

// Per-thread MPFR registers, wide enough that every sum of three doubles is exact.
struct Scratch {
  static constexpr mpfr_prec_t kBits = 2400;
  mpfr_t x, y;
  Scratch() {
    mpfr_init2(x, kBits);
    mpfr_init2(y, kBits);
  }
  ~Scratch() {
    mpfr_clear(x);
    mpfr_clear(y);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

double to_double_odd(const mpfr_t v) {
  if (mpfr_nan_p(v))
    return std::nan("");
  if (mpfr_inf_p(v) || mpfr_zero_p(v))
    return mpfr_get_d(v, MPFR_RNDN);
  double z = mpfr_get_d(v, MPFR_RNDZ);
  if (mpfr_cmp_d(v, z) == 0)
    return z;
  uint64_t bits = std::bit_cast<uint64_t>(z);
  if ((bits & 1) == 0)
    ++bits; // the odd neighbour is the next one away from zero
  return std::bit_cast<double>(bits);
}

} // namespace

// Zero terms are skipped rather than added, so that a -0 stays -0 (MPFR, like IEEE, makes
// -0 + +0 = +0).
// The precision is just enough for the exact sum (every term's lowest bit is at or above its
// exponent - 52, the sum's highest at most two above the largest exponent): far below kBits for
// the usual operands, which keeps bounds cheap when millions of elements need one.
static void set_sum(mpfr_t x, double a, double b, double c) {
  int high = std::numeric_limits<int>::min(), low = std::numeric_limits<int>::max();
  for (double v : {a, b, c})
    if (std::isfinite(v) && v != 0) {
      high = std::max(high, std::ilogb(v));
      low = std::min(low, std::ilogb(v) - 52);
    }
  const mpfr_prec_t prec = high < low ? 64 : static_cast<mpfr_prec_t>(high + 3 - low);
  mpfr_set_prec(x, std::clamp<mpfr_prec_t>(prec, 64, Scratch::kBits));
  mpfr_set_d(x, a, MPFR_RNDN);
  if (b != 0 || std::isnan(b))
    mpfr_add_d(x, x, b, MPFR_RNDN);
  if (c != 0 || std::isnan(c))
    mpfr_add_d(x, x, c, MPFR_RNDN);
}

double sum_odd(double a, double b, double c) {
  if (const std::optional<double> fast = fast_sum_odd(a, b, c))
    return *fast;
  return sum_odd_mpfr(a, b, c);
}

double sum_odd_mpfr(double a, double b, double c) {
  Scratch& s = scratch();
  set_sum(s.x, a, b, c);
  return to_double_odd(s.x);
}

double sum_nearest(double a, double b, double c) {
  Scratch& s = scratch();
  set_sum(s.x, a, b, c);
  return mpfr_get_d(s.x, MPFR_RNDN);
}

namespace {

// a * b as p + e exactly (TwoProd with an FMA), when the product is finite and far enough from
// the subnormal range that its error term is exact; nothing otherwise.
std::optional<std::pair<double, double>> exact_product(double a, double b) {
  const double p = a * b;
  if (!std::isfinite(p) || std::fabs(p) < 0x1p-960)
    return std::nullopt;
  return std::pair{p, std::fma(a, b, -p)};
}

} // namespace

double mul_add_odd(double a, double b, double c) {
  // The error-free path first: the input generators test millions of candidates.
  if (const auto pe = exact_product(a, b))
    if (const std::optional<double> fast = fast_sum_odd(pe->first, pe->second, c))
      return *fast;
  return mul_add_odd_mpfr(a, b, c);
}

double mul_add_odd_mpfr(double a, double b, double c) {
  Scratch& s = scratch();
  mpfr_set_prec(s.x, Scratch::kBits); // set_sum may have narrowed it
  mpfr_set_d(s.x, a, MPFR_RNDN);
  mpfr_mul_d(s.x, s.x, b, MPFR_RNDN);
  mpfr_add_d(s.x, s.x, c, MPFR_RNDN);
  return to_double_odd(s.x);
}

int compare_mul_add(double a, double b, double c, double m) {
  // An exact product (f32 operands) leaves three terms, whose sum rounded to odd has the exact
  // sum's sign, and is zero only when it is.
  if (const auto pe = exact_product(a, b); pe && pe->second == 0)
    if (const std::optional<double> fast = fast_sum_odd(pe->first, c, -m))
      return *fast < 0 ? -1 : *fast > 0 ? 1 : 0;
  return compare_mul_add_mpfr(a, b, c, m);
}

int compare_mul_add_mpfr(double a, double b, double c, double m) {
  Scratch& s = scratch();
  mpfr_set_prec(s.x, Scratch::kBits); // set_sum may have narrowed it
  mpfr_set_d(s.x, a, MPFR_RNDN);
  mpfr_mul_d(s.x, s.x, b, MPFR_RNDN);
  mpfr_add_d(s.x, s.x, c, MPFR_RNDN);
  int cmp = mpfr_cmp_d(s.x, m);
  return cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
}

} // namespace halfway::diff::detail
