#pragma once
// Bit-exact conversions between the float formats, in every rounding direction.
//
// Why not the host's casts: they round only to nearest (or per MXCSR), the host has no bf16 or
// fp8, and `(_Float16)(float)d` rounds twice. Every narrowing here rounds exactly once, from the
// exact source value: an f64 source is never passed through f32 on its way to f16, bf16 or fp8.
//
// Semantics shared by every function in this header:
//  - Subnormal sources and results are exact IEEE gradual underflow (no flushing; see
//    float_controls.hpp for emulating a flushing device).
//  - Zeros keep their sign; a nonzero value that rounds to zero gets the sign of the value.
//  - Overflow follows IEEE 754 per rounding direction: NearestEven gives +-inf, TowardZero gives
//    +-max finite, Up gives +inf for positive and -max finite for negative values, Down the mirror
//    image. E4M3 has no infinity: where IEEE would give +-inf it gives NaN (Fp8Overflow::Nan, the
//    ml_dtypes behaviour) or +-448 (Fp8Overflow::Saturate); see formats.hpp.
//  - Infinite sources give infinities of the same sign (E4M3: NaN or +-448 as above).
//  - NaN canonicalisation: any NaN source gives the target's canonical quiet NaN with the source's
//    sign bit (f16 0x7e00, bf16 0x7fc0, f32 0x7fc00000, f64 0x7ff8000000000000, e4m3 0x7f, e5m2
//    0x7e, each possibly with the sign bit). Payloads are dropped and signalling NaNs quietened,
//    so results never depend on how a host or device forwards payloads.
//  - Widenings are exact (every value of a narrower format is representable in the wider one), so
//    they take no rounding argument.
// All functions are thread-safe and independent of the host's MXCSR rounding mode.

#include "halfway/numerics/formats.hpp"

#include <cstddef>
#include <cstdint>

namespace halfway::num {

// The general conversion the interpreter calls: `bits` holds a `from` pattern, the result a `to`
// pattern, both zero-extended to 64 bits. from == to only canonicalises NaNs.
uint64_t convert_bits(Format from, uint64_t bits, Format to, Rounding r = Rounding::NearestEven,
                      Fp8Overflow ov = Fp8Overflow::Nan);

// The exact value of a pattern as a double (every format here fits in binary64).
double to_double(Format from, uint64_t bits);
// Rounds a double once into `to`.
uint64_t from_double(Format to, double x, Rounding r = Rounding::NearestEven,
                     Fp8Overflow ov = Fp8Overflow::Nan);

// Narrowings from f32. f32_to_f16 under NearestEven uses the F16C instruction when the build has
// it (correctly rounded; see docs/measured.md), else the integer path.
uint16_t f32_to_f16(uint32_t bits, Rounding r = Rounding::NearestEven);
uint16_t f32_to_bf16(uint32_t bits, Rounding r = Rounding::NearestEven);
uint8_t f32_to_e4m3(uint32_t bits, Rounding r = Rounding::NearestEven,
                    Fp8Overflow ov = Fp8Overflow::Nan);
uint8_t f32_to_e5m2(uint32_t bits, Rounding r = Rounding::NearestEven,
                    Fp8Overflow ov = Fp8Overflow::Nan);

// Narrowings from f64: one rounding from the f64 value.
uint32_t f64_to_f32(uint64_t bits, Rounding r = Rounding::NearestEven);
uint16_t f64_to_f16(uint64_t bits, Rounding r = Rounding::NearestEven);
uint16_t f64_to_bf16(uint64_t bits, Rounding r = Rounding::NearestEven);
uint8_t f64_to_e4m3(uint64_t bits, Rounding r = Rounding::NearestEven,
                    Fp8Overflow ov = Fp8Overflow::Nan);
uint8_t f64_to_e5m2(uint64_t bits, Rounding r = Rounding::NearestEven,
                    Fp8Overflow ov = Fp8Overflow::Nan);

// Widenings (exact).
uint32_t f16_to_f32(uint16_t bits);
uint32_t bf16_to_f32(uint16_t bits);
uint32_t e4m3_to_f32(uint8_t bits);
uint32_t e5m2_to_f32(uint8_t bits);
uint64_t f16_to_f64(uint16_t bits);
uint64_t bf16_to_f64(uint16_t bits);
uint64_t e4m3_to_f64(uint8_t bits);
uint64_t e5m2_to_f64(uint8_t bits);
uint64_t f32_to_f64(uint32_t bits);

// Bulk conversions, nearest-even with canonical NaNs, identical to the scalar functions but
// vectorised with AVX-512 or F16C where the build has them. in and out must not overlap.
void f32_to_f16_array(const float* in, uint16_t* out, size_t n);
void f16_to_f32_array(const uint16_t* in, float* out, size_t n);

} // namespace halfway::num
