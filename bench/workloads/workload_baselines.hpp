#pragma once
// Hand-written C++ for the workloads, compiled -O3 -march=native. Each loop covers a range of
// items (rows, elements, workgroups) so that the bench can split it over the same threads as the
// device. Each follows its kernel's summation order (examples/*.hpp), so that:
//   workload_baselines.cpp       strict (-ffp-contract=off): bit for bit equal to halfway where
//                                the math is the same. exp and rsqrt are glibc's (expf within
//                                1 ulp, 1/sqrtf), not correctly rounded like halfway's, so the
//                                kernels that call them differ in a few elements, which the bench
//                                counts.
//   workload_baselines_fast.cpp  the matmul and GEMV loops again with contraction and
//                                reassociation (namespace fast): the freedom the relaxed
//                                accumulation opt-in gives the device.

#include <cstddef>
#include <cstdint>

namespace halfway::bench::workloads {

// y[i] = expf(x[i]), elements [begin, end).
void exp_f32(const float* x, float* y, size_t begin, size_t end);

// o = |w·w − 1| + clamp(w, 0, 1) in f32; elements [begin, end).
void act_f32(const float* w, float* o, size_t begin, size_t end);
// The same in f16 arithmetic: every op rounds to binary16, done as an f32 op rounded to f16 with
// F16C/AVX-512 conversions (exact for one op by Figueroa's theorem), 16 lanes at a time; `w` and
// `o` are f16 bit patterns.
void act_f16(const uint16_t* w, uint16_t* o, size_t begin, size_t end);

// examples/group_norm_silu.hpp: instances (batch·groups) [begin, end), each as 256 lanes striding
// over its values with halving-tree sums, two-pass variance, then y = silu(...).
void group_norm_silu(const float* x, const float* gamma, const float* beta, float* y,
                     uint32_t channels, uint32_t groups, uint32_t hw, float eps, size_t begin,
                     size_t end);

// examples/attention.hpp: lanes (head·seq + query) [begin, end), head_dim 64, online softmax.
void attention(const float* q, const float* k, const float* v, float* o, uint32_t seq, float scale,
               size_t begin, size_t end);

// examples/conv3x3.hpp: output rows (channel·height + row) [begin, end); per output bias, then
// ci, ky, kx ascending, the zero padding's terms included (as the kernel adds them).
void conv3x3(const float* x, const float* w, const float* bias, float* y, uint32_t cin,
             uint32_t height, uint32_t width, size_t begin, size_t end);

// examples/softmax_f16out.hpp: rows [begin, end), 64 lanes striding over the columns, tree max
// and tree sum, y = f16(f32(exp(x − max) · (1 / sum))).
void softmax_f16out(const float* x, uint16_t* y, uint32_t cols, size_t begin, size_t end);

// C = A·B (A m×k, B k×n), rows [begin, end) of C, k ascending per element as in matmul_tiled:
// strict, register tiles of 4 rows x 64 columns with AVX-512 where available (the i-k-j loop
// otherwise and for the edges).
void matmul(const float* a, const float* b, float* c, uint32_t n, uint32_t k, size_t begin,
            size_t end);
// examples/gemv.hpp's design: per row 64 lanes, lane l summing, for its positions j = l, l + 64,
// ... of a quarter (cols / 4 columns), the products of columns j, j + q, j + 2q and j + 3q in
// order, then a halving tree over the 64 partial sums; rows [begin, end). A plain loop that the
// compiler vectorises across the lanes.
void gemv_split(const float* w, const float* x, float* y, uint32_t cols, size_t begin, size_t end);

// With contraction and reassociation: the same matmul loop (workload_loops.inc), and for the
// GEMV a plain dot product per row (the order is free).
namespace fast {
void matmul(const float* a, const float* b, float* c, uint32_t n, uint32_t k, size_t begin,
            size_t end);
void gemv_split(const float* w, const float* x, float* y, uint32_t cols, size_t begin, size_t end);
} // namespace fast

} // namespace halfway::bench::workloads
