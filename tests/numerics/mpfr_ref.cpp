#include "mpfr_ref.hpp"

#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>
#include <string>

namespace halfway::num::test {

namespace {
// Frees the main thread's MPFR caches at exit, so LeakSanitizer builds stay quiet.
struct FreeMpfrCaches {
  ~FreeMpfrCaches() { mpfr_free_cache(); }
} free_mpfr_caches;
} // namespace

mpfr_rnd_t to_mpfr(Rounding r) {
  switch (r) {
  case Rounding::NearestEven:
    return MPFR_RNDN;
  case Rounding::TowardZero:
    return MPFR_RNDZ;
  case Rounding::Up:
    return MPFR_RNDU;
  case Rounding::Down:
    return MPFR_RNDD;
  }
  return MPFR_RNDN;
}

const char* rounding_name(Rounding r) {
  switch (r) {
  case Rounding::NearestEven:
    return "rne";
  case Rounding::TowardZero:
    return "rtz";
  case Rounding::Up:
    return "rup";
  case Rounding::Down:
    return "rdn";
  }
  return "?";
}

std::string hex(uint64_t bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(bits));
  return buf;
}

void set_exact(mpfr_ptr out, Format f, uint64_t bits) {
  const FormatInfo& i = info(f);
  const bool neg = (bits & i.sign_mask) != 0;
  const uint64_t biased = (bits & i.exp_mask) >> i.man_bits;
  const uint64_t frac = bits & i.man_mask;
  const uint64_t top_exp = i.exp_mask >> i.man_bits;
  if (i.has_inf && biased == top_exp) {
    if (frac == 0)
      mpfr_set_inf(out, neg ? -1 : 1);
    else
      mpfr_set_nan(out);
  } else if (!i.has_inf && biased == top_exp && frac == i.man_mask) {
    mpfr_set_nan(out);
  } else if (biased == 0) {
    mpfr_set_ui_2exp(out, frac, i.emin - i.man_bits, MPFR_RNDN);
  } else {
    mpfr_set_ui_2exp(out, frac | (uint64_t{1} << i.man_bits),
                     static_cast<int>(biased) - i.bias - i.man_bits, MPFR_RNDN);
  }
  if (neg)
    mpfr_setsign(out, out, 1, MPFR_RNDN);
}

uint64_t encode_double(Format f, double d) {
  const FormatInfo& i = info(f);
  const uint64_t sign = std::signbit(d) ? i.sign_mask : 0;
  if (std::isnan(d))
    return sign | i.quiet_nan;
  if (d == 0)
    return sign;
  if (std::isinf(d)) {
    EXPECT_TRUE(i.has_inf) << "infinity in " << i.name;
    return sign | i.inf_bits;
  }
  int e = 0;
  const double m = std::frexp(std::fabs(d), &e); // |d| = m * 2^e, m in [0.5, 1)
  const int top = e - 1;
  const auto sig = static_cast<uint64_t>(std::ldexp(m, 53)); // |d| = sig * 2^(e - 53)
  const int quantum = std::max(top, i.emin) - i.man_bits;
  const int shift = quantum - (e - 53);
  EXPECT_GE(shift, 0) << d << " not representable in " << i.name;
  EXPECT_LE(top, i.emax) << d << " too large for " << i.name;
  if (shift < 0 || shift >= 64)
    return 0;
  EXPECT_EQ(sig & ((uint64_t{1} << shift) - 1), 0u) << d << " not representable in " << i.name;
  const uint64_t kept = sig >> shift;
  const uint64_t biased = top >= i.emin ? static_cast<uint64_t>(top + i.bias) : 0;
  return sign | (biased << i.man_bits) | (kept & i.man_mask);
}

uint64_t finish(Format f, mpfr_ptr y, int t, Rounding r, Fp8Overflow ov) {
  const FormatInfo& i = info(f);
  if (mpfr_nan_p(y))
    return i.quiet_nan; // MPFR's NaNs have no meaningful sign
  const mpfr_rnd_t rnd = to_mpfr(r);
  const mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
  mpfr_set_emin(i.emin - i.man_bits + 1); // smallest subnormal 2^(emin-man_bits) = 0.1b*2^this
  mpfr_set_emax(i.emax + 1);
  t = mpfr_check_range(y, t, rnd);
  mpfr_subnormalize(y, t, rnd);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  const double d = mpfr_get_d(y, MPFR_RNDN);
  const bool neg = std::signbit(d);
  const uint64_t sign = neg ? i.sign_mask : 0;
  if (std::isnan(d))
    return sign | i.quiet_nan;
  if (std::fabs(d) > i.max_finite_value) {
    // Overflowed (E4M3: also a finite 480, which MPFR's range still holds).
    const bool away =
        r == Rounding::NearestEven || (r == Rounding::Up && !neg) || (r == Rounding::Down && neg);
    if (!away)
      return sign | i.max_finite;
    if (is_fp8(f) && ov == Fp8Overflow::Saturate)
      return sign | i.max_finite;
    return sign | (i.has_inf ? i.inf_bits : i.quiet_nan);
  }
  return encode_double(f, d);
}

uint64_t round_ref(Format f, mpfr_srcptr x, Rounding r, Fp8Overflow ov) {
  const FormatInfo& i = info(f);
  if (mpfr_inf_p(x)) {
    const uint64_t sign = mpfr_signbit(x) ? i.sign_mask : 0;
    if (is_fp8(f) && ov == Fp8Overflow::Saturate)
      return sign | i.max_finite;
    return sign | (i.has_inf ? i.inf_bits : i.quiet_nan);
  }
  return eval_ref(
      f, r, [&](mpfr_ptr y, mpfr_rnd_t rnd) { return mpfr_set(y, x, rnd); }, ov);
}

uint64_t convert_ref(Format from, uint64_t bits, Format to, Rounding r, Fp8Overflow ov) {
  thread_local Mp x(64);
  if (is_nan(from, bits))
    return quiet_nan(to, sign_bit(from, bits)); // NaNs keep their sign
  set_exact(x, from, bits);
  return round_ref(to, x, r, ov);
}

bool same_or_both_nan(Format f, uint64_t a, uint64_t b) {
  return a == b || (is_nan(f, a) && is_nan(f, b));
}

uint64_t random_pattern(std::mt19937_64& rng, Format f, int lo_exp, int hi_exp) {
  const FormatInfo& i = info(f);
  const uint64_t all = i.total_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << i.total_bits) - 1;
  uint64_t b = rng() & all;
  if (rng() & 1) {
    std::uniform_int_distribution<int> e(lo_exp, hi_exp);
    const int biased = std::clamp(e(rng) + i.bias, 0, static_cast<int>(i.exp_mask >> i.man_bits));
    b = (b & ~i.exp_mask) | (static_cast<uint64_t>(biased) << i.man_bits);
  }
  return b;
}

} // namespace halfway::num::test
