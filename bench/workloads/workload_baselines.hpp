#pragma once
// Hand-written C++ for the workloads, compiled -O3 -march=native. Each loop covers a range of
// items (elements, rows) so that the bench can split it over the same threads as the device.
//   workload_baselines.cpp  strict: -ffp-contract=off, each op rounded in its own type, in the
//   kernel's
//                  summation order, so that the results can be compared bit for bit
// The relaxed GEMV (contraction and reassociation) is bench/cpu's relaxed::gemv.

#include <cstddef>

namespace halfway::bench::workloads {

// y[i] = expf(x[i]) with glibc's expf (within 1 ulp, not correctly rounded: not bit-comparable
// with halfway's correctly rounded exp on interp and cpu).
void exp_f32(const float* x, float* y, size_t begin, size_t end);

} // namespace halfway::bench::workloads
