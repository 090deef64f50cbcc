#pragma once
// Tie-stressing inputs. Random inputs almost never show double rounding (about one product in
// 13,000); these put the exact value within one f32 ulp of a binary16 rounding midpoint, where
// rounding twice and rounding once differ about half the time (docs/measured.md).
// Every case is verified with exact (binary128) arithmetic.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace halfway::cpu_test {

struct MulAddInputs {
  std::vector<float> a, b, c;
};

// a*b + c within one f32 ulp of a binary16 midpoint: midpoints across the whole f16 range
// (subnormals and the overflow edge 65520 included), |a*b| 1 to 16 times the midpoint, so that an
// f32 fused multiply-add lands on either side of it.
MulAddInputs tie_mul_add(size_t n, uint64_t seed);

// f32 values within one f32 ulp of a binary16 midpoint (for narrowings of a plain value).
std::vector<float> tie_floats(size_t n, uint64_t seed);

// Zeros of both signs, infinities, NaNs (with payloads), f16 subnormal and overflow edges.
std::vector<float> special_floats();

// The exact a*b + c (binary128: exact for f32 operands of these magnitudes) rounded once to f16.
uint16_t exact_f16_mul_add(float a, float b, float c);
// The strict two-step value: round16(round32(round32(a*b) + c)).
uint16_t two_step_f16_mul_add(float a, float b, float c);
// |a*b + c - m| for the nearest binary16 midpoint m, in f32 ulps of m.
double distance_to_f16_midpoint(float a, float b, float c);

} // namespace halfway::cpu_test
