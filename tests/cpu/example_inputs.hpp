#pragma once
// Inputs for every bundled example kernel: tie-stressing values where a kernel narrows, specials
// (zeros, infinities, NaNs with payloads, subnormals) everywhere, sizes that leave the last
// workgroup partly out of range.

#include "harness.hpp"

namespace halfway::cpu_test {

Launch example_inputs(const ir::VerifiedKernel& k, uint64_t seed);

} // namespace halfway::cpu_test
