#pragma once
// Inputs where narrowing is hardest: every rounding boundary of a target format, with the source
// patterns just around it. Enumerated constructively instead of scanning all 2^32 floats.

#include "halfway/numerics/formats.hpp"

#include <cstdint>
#include <vector>

namespace halfway::num::test {

// The positive values of `to` where some rounding mode changes its answer: every finite value
// (directed roundings step there; this includes 0, the smallest subnormal, the smallest normal and
// max finite), every midpoint between neighbours (nearest-even ties), the first value past max
// finite (2^(emax+1), or 480 for E4M3) and the midpoint below it (the overflow threshold).
std::vector<double> boundary_values(Format to);

// `bits` moved by `steps` representable values of `f` (across zero and +-0 treated as one point).
uint64_t step(Format f, uint64_t bits, int64_t steps);

// Every pattern of `from` within +-radius steps of +-v for each boundary value v of `to` (each v
// must be exactly representable in `from`).
std::vector<uint64_t> patterns_near_boundaries(Format from, Format to, int radius);

} // namespace halfway::num::test
