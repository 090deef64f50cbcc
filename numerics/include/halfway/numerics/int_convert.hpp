#pragma once
// Conversions between floats and integers of width 8, 16, 32 or 64, signed or unsigned.
//
// Float to integer truncates toward zero (C, SPIR-V OpConvertFToS/U, LLVM fptosi). Where C and
// SPIR-V leave the result undefined (NaN, infinities, values outside the integer's range) halfway
// chooses saturation, as LLVM's llvm.fptosi.sat / fptoui.sat and what SPIR-V drivers commonly do:
// NaN gives 0, values above the range give the integer maximum (+inf included), values below it
// the minimum (-inf included; 0 for unsigned, so -0.5 and -7 both give 0u). A kernel whose result
// depends on this choice is non-portable; the interpreter's answer is the saturated one.
//
// Integer to float rounds per Rounding exactly once (an int64 -> f16 conversion never goes through
// f32); overflow follows convert.hpp (e.g. 70000 -> f16 is +inf under NearestEven).

#include "halfway/numerics/formats.hpp"

#include <cstdint>

namespace halfway::num {

// `width` is 8, 16, 32 or 64. The result is the integer's two's-complement pattern, zero-extended
// from `width` bits.
uint64_t float_to_int(Format from, uint64_t bits, int width, bool is_signed);

// `value` holds a `width`-bit integer pattern (bits above `width` are ignored); it is read as
// signed or unsigned per is_signed.
uint64_t int_to_float(uint64_t value, int width, bool is_signed, Format to,
                      Rounding r = Rounding::NearestEven, Fp8Overflow ov = Fp8Overflow::Nan);

inline int64_t float_to_i64(Format from, uint64_t bits) {
  return static_cast<int64_t>(float_to_int(from, bits, 64, true));
}
inline uint64_t float_to_u64(Format from, uint64_t bits) {
  return float_to_int(from, bits, 64, false);
}
inline int32_t float_to_i32(Format from, uint64_t bits) {
  return static_cast<int32_t>(static_cast<uint32_t>(float_to_int(from, bits, 32, true)));
}
inline uint32_t float_to_u32(Format from, uint64_t bits) {
  return static_cast<uint32_t>(float_to_int(from, bits, 32, false));
}
inline uint64_t i64_to_float(int64_t v, Format to, Rounding r = Rounding::NearestEven) {
  return int_to_float(static_cast<uint64_t>(v), 64, true, to, r);
}
inline uint64_t u64_to_float(uint64_t v, Format to, Rounding r = Rounding::NearestEven) {
  return int_to_float(v, 64, false, to, r);
}

} // namespace halfway::num
