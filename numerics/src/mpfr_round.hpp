#pragma once
// Private: evaluate with MPFR at a format's precision and exponent range, subnormals included.

#include "halfway/numerics/formats.hpp"

#include <mpfr.h>

namespace halfway::num::detail {

// Sets the thread's MPFR exponent range to that of `f` (with subnormals emulated by
// mpfr_subnormalize) for the lifetime of the object, restoring the previous range after.
// MPFR's exponent convention is x = 0.1b... * 2^e, so a format whose smallest subnormal is
// 2^(emin - man_bits) gets mpfr emin = emin - man_bits + 1, and emax = emax + 1.
class FormatRange {
public:
  explicit FormatRange(Format f) : old_emin_(mpfr_get_emin()), old_emax_(mpfr_get_emax()) {
    const FormatInfo& i = info(f);
    mpfr_set_emin(i.emin - i.man_bits + 1);
    mpfr_set_emax(i.emax + 1);
  }
  ~FormatRange() {
    mpfr_set_emin(old_emin_);
    mpfr_set_emax(old_emax_);
  }
  FormatRange(const FormatRange&) = delete;
  FormatRange& operator=(const FormatRange&) = delete;

private:
  mpfr_exp_t old_emin_, old_emax_;
};

// `rop` was computed at f's precision in the wide default range with ternary value `t`; fits it
// into f's range with correct overflow, underflow and subnormal rounding. Returns the new ternary.
inline int fit_to_format(Format f, mpfr_ptr rop, int t, mpfr_rnd_t rnd) {
  FormatRange range(f);
  t = mpfr_check_range(rop, t, rnd);
  return mpfr_subnormalize(rop, t, rnd);
}

} // namespace halfway::num::detail
