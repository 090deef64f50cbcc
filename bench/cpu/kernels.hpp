#pragma once
// Benchmark kernels beyond the bundled examples (the reduction is examples::reduce_chunks).

#include "halfway/dsl.hpp"

namespace halfway::bench {

// y = W x, W row-major rows x cols, one lane per row, f32 accumulation.
Kernel gemv_f32();

// A one-workgroup kernel that does almost nothing: the cost of a launch on a memo hit.
Kernel tiny();

} // namespace halfway::bench
