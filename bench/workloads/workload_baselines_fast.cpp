// Compiled with -ffp-contract=fast -fassociative-math -fno-signed-zeros -fno-trapping-math: the
// fast-math variant of the matmul and GEMV baselines, for the relaxed-accumulation cases.
#include "workload_baselines.hpp"

namespace halfway::bench::workloads::fast {

#include "workload_loops.inc"

// Contraction makes the i-k-j loop's multiply-add one FMA.
void matmul(const float* a, const float* b, float* c, uint32_t n, uint32_t k, size_t begin,
            size_t end) {
  matmul_loop(a, b, c, n, k, begin, end);
}

// With reassociation the summation order is free: a plain dot product per row, which the compiler
// turns into a vectorised FMA reduction.
void gemv_split(const float* w, const float* x, float* y, uint32_t cols, size_t begin, size_t end) {
  for (size_t r = begin; r < end; ++r) {
    const float* row = w + r * cols;
    float acc = 0.0f;
    for (uint32_t j = 0; j < cols; ++j)
      acc += row[j] * x[j];
    y[r] = acc;
  }
}

} // namespace halfway::bench::workloads::fast
