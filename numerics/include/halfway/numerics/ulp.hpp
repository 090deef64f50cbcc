#pragma once
// Distances in units in the last place, for the differential checker's tolerances.

#include "halfway/numerics/formats.hpp"

#include <cstdint>

namespace halfway::num {

// How many representable values of f lie between a and b, stepping from one to the other: the
// difference of their positions when all patterns are ordered by value. Adjacent values are 1
// apart, +0 and -0 are the same position (distance 0), the smallest subnormals of either sign are
// 2 apart (through zero), and an infinity is one step beyond max finite. NaN: two NaNs (any
// payloads or signs) are at distance 0, a NaN and a non-NaN at UINT64_MAX.
uint64_t ulp_distance(Format f, uint64_t a, uint64_t b);

// The size of one ulp of f at the magnitude of x: 2^(e - man_bits) for 2^e <= |x| < 2^(e+1), so
// at a power of two it is the gap above it. Below the smallest normal it is the subnormal spacing
// (the smallest subnormal), zero included; beyond max finite, and for infinities, it is the
// spacing of the top binade. NaN gives NaN.
double ulp_of(Format f, double x);

} // namespace halfway::num
