#pragma once
// Benchmark kernels beyond the bundled examples.

#include "halfway/dsl.hpp"

namespace halfway::bench {

// Each lane sums `per_lane` consecutive elements (the accumulation relaxed accumulation
// vectorises), then the workgroup adds its 256 partial sums in shared memory, a barrier between
// halving steps, and lane 0 writes the workgroup's sum.
Kernel reduce_chunks();

// y = W x, W row-major rows x cols, one lane per row, f32 accumulation.
Kernel gemv_f32();

// A one-workgroup kernel that does almost nothing: the cost of a launch on a memo hit.
Kernel tiny();

} // namespace halfway::bench
