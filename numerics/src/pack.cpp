#include "pack.hpp"

#include <algorithm>
#include <bit>

namespace halfway::num::detail {

Unpacked unpack(Format f, uint64_t bits) {
  const FormatInfo& i = info(f);
  const bool sign = (bits & i.sign_mask) != 0;
  const uint64_t mag = bits & ~i.sign_mask;
  if (is_nan(f, bits))
    return {Kind::Nan, sign, 0, 0};
  if (i.has_inf && mag == i.inf_bits)
    return {Kind::Inf, sign, 0, 0};
  if (mag == 0)
    return {Kind::Zero, sign, 0, 0};
  const int biased = static_cast<int>(mag >> i.man_bits);
  const uint64_t frac = mag & i.man_mask;
  if (biased == 0)
    return {Kind::Finite, sign, i.emin - i.man_bits, frac};
  return {Kind::Finite, sign, biased - i.bias - i.man_bits, frac | (uint64_t{1} << i.man_bits)};
}

uint64_t overflow_result(Format to, bool sign, Rounding r, Fp8Overflow ov) {
  const FormatInfo& i = info(to);
  const uint64_t s = sign ? i.sign_mask : 0;
  const bool away =
      r == Rounding::NearestEven || (r == Rounding::Up && !sign) || (r == Rounding::Down && sign);
  if (!away)
    return s | i.max_finite;
  return infinity_result(to, sign, ov);
}

uint64_t infinity_result(Format to, bool sign, Fp8Overflow ov) {
  const FormatInfo& i = info(to);
  const uint64_t s = sign ? i.sign_mask : 0;
  if (is_fp8(to) && ov == Fp8Overflow::Saturate)
    return s | i.max_finite;
  return s | (i.has_inf ? i.inf_bits : i.quiet_nan);
}

uint64_t round_pack(Format to, bool sign, int exp, uint64_t mant, bool sticky, Rounding r,
                    Fp8Overflow ov) {
  const FormatInfo& i = info(to);
  const uint64_t s = sign ? i.sign_mask : 0;
  const int top = exp + 63 - std::countl_zero(mant); // value in [2^top, 2^(top+1))
  if (top > i.emax)
    return overflow_result(to, sign, r, ov);
  const int quantum = std::max(top, i.emin) - i.man_bits; // exponent of the last kept bit
  const int shift = quantum - exp;
  uint64_t kept;
  bool half = false;  // the first dropped bit
  bool rest = sticky; // any dropped bit after it
  if (shift <= 0) {
    kept = mant << -shift; // cannot overflow: kept < 2^(man_bits+1)
  } else if (shift > 64) {
    kept = 0;
    rest = true;
  } else {
    kept = shift == 64 ? 0 : mant >> shift;
    half = (mant >> (shift - 1)) & 1;
    rest = rest || (mant & low_bits(shift - 1)) != 0;
  }
  bool up = false;
  switch (r) {
  case Rounding::NearestEven:
    up = half && (rest || (kept & 1));
    break;
  case Rounding::TowardZero:
    break;
  case Rounding::Up:
    up = !sign && (half || rest);
    break;
  case Rounding::Down:
    up = sign && (half || rest);
    break;
  }
  kept += up;
  // Normal or subnormal, the encoding is (quantum - smallest quantum) << man_bits plus the
  // integer significand: the hidden bit lands in the exponent field, and a carry out of the
  // significand moves to the next binade on its own.
  const uint64_t enc = (static_cast<uint64_t>(quantum + i.man_bits - i.emin) << i.man_bits) + kept;
  if (enc > i.max_finite)
    return overflow_result(to, sign, r, ov);
  return s | enc;
}

} // namespace halfway::num::detail
