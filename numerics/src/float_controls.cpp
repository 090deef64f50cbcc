#include "halfway/numerics/float_controls.hpp"

namespace halfway::num {

bool flushes(Format f, const FloatControls& c) {
  switch (f) {
  case Format::F16:
    return c.flush_f16;
  case Format::BF16:
  case Format::F32:
    return c.flush_f32;
  case Format::F64:
    return c.flush_f64;
  case Format::E4M3:
  case Format::E5M2:
    return false;
  }
  return false;
}

uint64_t apply_flush(Format f, uint64_t bits, const FloatControls& c) {
  if (!flushes(f, c) || !is_subnormal(f, bits))
    return bits;
  return bits & info(f).sign_mask;
}

bool same_result(Format f, uint64_t want, uint64_t got, const FloatControls& c) {
  want = apply_flush(f, want, c);
  got = apply_flush(f, got, c);
  if (is_nan(f, want) && is_nan(f, got))
    return true;
  if (want == got)
    return true;
  if (c.preserve_signed_zero_inf_nan)
    return false;
  if (is_zero(f, want) && is_zero(f, got))
    return true;
  return !is_finite(f, want) || !is_finite(f, got);
}

} // namespace halfway::num
