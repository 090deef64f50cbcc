#pragma once
// Hand-written C++ versions of the benchmarked kernels, split over `threads` threads like the
// interpreter's workgroups.

#include <cstddef>
#include <cstdint>

namespace halfway::bench {

// y[i] = a * x[i] + y[i]
void saxpy_f32(const float* x, float* y, float a, size_t n, unsigned threads);
// The same with f16 storage and f32 math: y[i] = f16(a * f32(x[i]) + f32(y[i])).
void saxpy_f16(const uint16_t* x, uint16_t* y, float a, size_t n, unsigned threads);
// out[g] = the halving-tree sum of x[256 g .. 256 g + 255], in reduce_sum's order.
void reduce_sum(const float* x, float* out, size_t n, unsigned threads);

} // namespace halfway::bench
