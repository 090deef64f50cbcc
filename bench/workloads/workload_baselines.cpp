#include "workload_baselines.hpp"

#include <cmath>

namespace halfway::bench::workloads {

void exp_f32(const float* x, float* y, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i)
    y[i] = std::exp(x[i]);
}

} // namespace halfway::bench::workloads
