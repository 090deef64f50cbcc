#include "halfway/numerics/int_convert.hpp"

#include "pack.hpp"

#include <bit>

namespace halfway::num {

namespace {
uint64_t width_mask(int width) {
  return detail::low_bits(width);
}
} // namespace

uint64_t float_to_int(Format from, uint64_t bits, int width, bool is_signed) {
  const uint64_t mask = width_mask(width);
  // Limits as magnitudes: the largest positive value and the magnitude of the most negative one.
  const uint64_t max_pos = is_signed ? mask >> 1 : mask;
  const uint64_t max_neg = is_signed ? (mask >> 1) + 1 : 0;
  const detail::Unpacked u = detail::unpack(from, bits);
  uint64_t mag = 0; // |trunc(x)|, saturated to 2^64 - 1
  switch (u.kind) {
  case detail::Kind::Nan:
  case detail::Kind::Zero:
    return 0;
  case detail::Kind::Inf:
    mag = ~uint64_t{0};
    break;
  case detail::Kind::Finite: {
    const int top = u.exp + 63 - std::countl_zero(u.mant);
    if (top >= 64)
      mag = ~uint64_t{0};
    else if (u.exp >= 0)
      mag = u.mant << u.exp;
    else if (u.exp > -64)
      mag = u.mant >> -u.exp;
    break;
  }
  }
  if (!u.sign)
    return (mag > max_pos ? max_pos : mag) & mask;
  const uint64_t neg = mag > max_neg ? max_neg : mag;
  return (0 - neg) & mask;
}

uint64_t int_to_float(uint64_t value, int width, bool is_signed, Format to, Rounding r,
                      Fp8Overflow ov) {
  value &= width_mask(width);
  const bool negative = is_signed && ((value >> (width - 1)) & 1);
  if (negative)
    value = (0 - value) & width_mask(width); // the magnitude, also for the minimum
  if (value == 0)
    return 0;
  return detail::round_pack(to, negative, 0, value, false, r, ov);
}

} // namespace halfway::num
