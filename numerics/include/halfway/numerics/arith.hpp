#pragma once
// Correctly rounded basic arithmetic on every Format, round-to-nearest-even.
//
// How each format gets exact results:
//  - f32 and f64 +, -, *, /, sqrt use the host's IEEE instructions; fma uses the host's fused
//    multiply-add (one rounding). This relies on the calling thread's default MXCSR (round to
//    nearest, no FTZ/DAZ), which halfway's worker threads keep.
//  - f16, bf16 and fp8 +, -, *, /, sqrt widen exactly to f32, compute there and round once to the
//    target. The f32 result is itself rounded, but Figueroa (1995) shows the double rounding is
//    harmless when the wide precision q >= 2p + 2 (q = 24; p = 11, 8, 4, 3).
//  - fma is outside Figueroa's theorem (f32 fma then narrowing is wrong near ties). For f16, bf16
//    and fp8, the product a*b is exact in double, the sum is formed with TwoSum and rounded to odd
//    in double (53 >= p + 2 bits, no double subnormals reachable), and that is rounded once to the
//    target: round-to-odd makes the second rounding exact.
// The sub-f32 formats' results go through the same narrowing as convert.hpp, so fp8 overflow obeys
// the Fp8Overflow argument where there is one.
//
// NaN results: every operation whose IEEE result is NaN (an invalid operation or a NaN operand)
// returns the format's canonical quiet NaN with the sign bit CLEAR, whatever the inputs' payloads
// or signs (IEEE leaves the sign of a NaN result unspecified; x86 makes a negative default NaN,
// GPUs vary). abs, neg and copysign are the exception: they are IEEE bit operations and act on the
// sign of NaNs too. E4M3's NaN for a result beyond 448 is an overflow, not an invalid operation:
// like the conversions it keeps the sign of the value (-448 * 2 gives 0xff).
//
// All operands and results are bit patterns zero-extended to 64 bits.

#include "halfway/numerics/formats.hpp"

#include <cstdint>

namespace halfway::num {

uint64_t add(Format f, uint64_t a, uint64_t b, Fp8Overflow ov = Fp8Overflow::Nan);
uint64_t sub(Format f, uint64_t a, uint64_t b, Fp8Overflow ov = Fp8Overflow::Nan);
uint64_t mul(Format f, uint64_t a, uint64_t b, Fp8Overflow ov = Fp8Overflow::Nan);
uint64_t div(Format f, uint64_t a, uint64_t b, Fp8Overflow ov = Fp8Overflow::Nan);
uint64_t sqrt(Format f, uint64_t a);
// a * b + c with a single rounding.
uint64_t fma(Format f, uint64_t a, uint64_t b, uint64_t c, Fp8Overflow ov = Fp8Overflow::Nan);

// minNum / maxNum (IEEE 754-2008 5.3.1, SPIR-V NMin/NMax): a NaN operand is ignored, so
// min(NaN, x) = x; two NaNs give the canonical NaN. Zeros are ordered -0 < +0 (as IEEE 754-2019
// minimumNumber), so min(-0, +0) = -0 and max(-0, +0) = +0 whatever the operand order. Results
// are the chosen operand's bits.
uint64_t min(Format f, uint64_t a, uint64_t b);
uint64_t max(Format f, uint64_t a, uint64_t b);
// min(max(x, lo), hi): a NaN x gives min(lo, hi), a NaN bound is ignored, and lo > hi gives hi.
uint64_t clamp(Format f, uint64_t x, uint64_t lo, uint64_t hi);

// Sign operations on the bits (NaNs included, payload kept).
uint64_t abs(Format f, uint64_t a);
uint64_t neg(Format f, uint64_t a);
uint64_t copysign(Format f, uint64_t magnitude_from, uint64_t sign_from);

// Exact roundings to an integral value. floor(-0.5) = -1, ceil(-0.5) = -0, zeros and infinities
// are returned unchanged, NaN gives the canonical NaN.
uint64_t floor(Format f, uint64_t a);
uint64_t ceil(Format f, uint64_t a);
// GLSL fract: x - floor(x) rounded once to the format, then clamped to the largest value below 1
// (a tiny negative x would otherwise give exactly 1). fract(+-inf) and fract(NaN) are NaN;
// fract(-0) = +0.
uint64_t fract(Format f, uint64_t a);

// f32 fma through the generic function, for tests and reference code working on floats.
float f32_fma(float a, float b, float c);

} // namespace halfway::num
