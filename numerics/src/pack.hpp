#pragma once
// Private core of every conversion: split a bit pattern into sign * mant * 2^exp, and round an
// exact (or sticky-marked) sign * mant * 2^exp into any Format. All conversions, integer
// conversions and the final step of the arithmetic go through round_pack, so there is one place
// where rounding, subnormals, overflow and signed zero are decided.

#include "halfway/numerics/formats.hpp"

#include <cstdint>

namespace halfway::num::detail {

enum class Kind : uint8_t { Zero, Finite, Inf, Nan };

// value = (-1)^sign * mant * 2^exp; mant != 0 exactly when kind == Finite.
struct Unpacked {
  Kind kind;
  bool sign;
  int exp;
  uint64_t mant;
};

Unpacked unpack(Format f, uint64_t bits);

// Rounds (-1)^sign * (mant + sticky*epsilon) * 2^exp to `to`. `sticky` says that nonzero bits lie
// below mant's last bit (the value is strictly greater in magnitude than mant * 2^exp, by less
// than 2^exp). Requires mant != 0.
uint64_t round_pack(Format to, bool sign, int exp, uint64_t mant, bool sticky, Rounding r,
                    Fp8Overflow ov);

// The result of an overflow (a value beyond max finite) under rounding r.
uint64_t overflow_result(Format to, bool sign, Rounding r, Fp8Overflow ov);

// The result for an infinite source value (only differs from an overflow for E4M3).
uint64_t infinity_result(Format to, bool sign, Fp8Overflow ov);

} // namespace halfway::num::detail
