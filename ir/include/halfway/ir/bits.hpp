#pragma once
// Bit-pattern helpers the IR itself needs (printing, constant literals, hashing). The exact
// arithmetic on these formats lives in the numerics library; widening is exact and simple, so the
// IR does it here without depending on numerics.

#include "halfway/ir/types.hpp"

#include <cstdint>

namespace halfway::ir {

// The exact value of a float bit pattern of any IR float type (NaNs come back as a quiet NaN).
double widen_to_double(ScalarType type, uint64_t bits);
// The bit pattern of `v` in `type` when v is exactly representable there; false otherwise.
bool exact_bits(ScalarType type, double v, uint64_t& bits);
// Sign-extends the low `width` bits of v.
int64_t sign_extend(uint64_t v, uint32_t width);
// Keeps the low bits of v that a value of `type` has (bool: 0 or 1).
uint64_t truncate_bits(ScalarType type, uint64_t v);

} // namespace halfway::ir
