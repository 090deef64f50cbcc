#pragma once
// The tests' judge: MPFR, used independently of the library's own code paths.
//
// Patterns are decoded from their bit fields straight into MPFR, results are encoded from the
// exact double MPFR returns, and rounding to a format is MPFR's own (precision p, the format's
// exponent range, mpfr_check_range + mpfr_subnormalize), so a bug in halfway::num's integer
// rounding cannot hide in the reference.

#include "halfway/numerics/formats.hpp"

#include <cstdint>
#include <mpfr.h>
#include <random>

namespace halfway::num::test {

mpfr_rnd_t to_mpfr(Rounding r);
const char* rounding_name(Rounding r);
inline constexpr Rounding kAllRoundings[] = {Rounding::NearestEven, Rounding::TowardZero,
                                             Rounding::Up, Rounding::Down};

// A self-freeing mpfr_t.
struct Mp {
  mpfr_t v;
  explicit Mp(mpfr_prec_t prec = 64) { mpfr_init2(v, prec); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  operator mpfr_ptr() { return v; }
  operator mpfr_srcptr() const { return v; }
};

// The exact value of a pattern, from its fields (out needs >= 53 bits). NaN keeps its sign.
void set_exact(mpfr_ptr out, Format f, uint64_t bits);

// The pattern of a double that is exactly representable in f (infinities and NaN included; NaN
// gives the canonical quiet NaN with the double's sign). Fails the current test when it is not.
uint64_t encode_double(Format f, double d);

// Fits `y`, already rounded to f's precision with ternary t, into f's exponent range and encodes
// it, applying E4M3's missing infinity and the FP8 saturation policy. A NaN y gives the positive
// canonical NaN; an E4M3 overflow gives NaN with the value's sign.
uint64_t finish(Format f, mpfr_ptr y, int t, Rounding r, Fp8Overflow ov = Fp8Overflow::Nan);

// Rounds the exact value x to f (a conversion): infinities follow the infinity rules of
// convert.hpp, everything else rounds once under r.
uint64_t round_ref(Format f, mpfr_srcptr x, Rounding r, Fp8Overflow ov = Fp8Overflow::Nan);

// Reference for a conversion of a pattern (NaN sources keep their sign).
uint64_t convert_ref(Format from, uint64_t bits, Format to, Rounding r,
                     Fp8Overflow ov = Fp8Overflow::Nan);

// op(rop, rnd) computes into rop (set to f's precision) and returns MPFR's ternary value.
template <class Op>
uint64_t eval_ref(Format f, Rounding r, Op op, Fp8Overflow ov = Fp8Overflow::Nan) {
  thread_local Mp y(53);
  mpfr_set_prec(y, info(f).precision());
  const int t = op(static_cast<mpfr_ptr>(y), to_mpfr(r));
  return finish(f, y, t, r, ov);
}

// Bits equal, or both NaN.
bool same_or_both_nan(Format f, uint64_t a, uint64_t b);

// Random patterns of a format: half uniformly random bits, half with the exponent drawn from
// [lo_exp, hi_exp] (unbiased), so that the interesting range is dense.
uint64_t random_pattern(std::mt19937_64& rng, Format f, int lo_exp, int hi_exp);

// "0x1234" for failure messages.
std::string hex(uint64_t bits);

} // namespace halfway::num::test
