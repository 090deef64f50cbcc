#pragma once
// Every bundled example kernel, by name: the demo, the golden tests and the CLI iterate this list.
#include "act.hpp"
#include "attention.hpp"
#include "conv3x3.hpp"
#include "gemv.hpp"
#include "group_norm_silu.hpp"
#include "linear.hpp"
#include "matmul_tiled.hpp"
#include "narrow_f16.hpp"
#include "reduce_sum.hpp"
#include "saxpy.hpp"
#include "softmax_f16out.hpp"

#include <vector>

namespace halfway::examples {

// The small examples: elementwise kernels and one reduction, each correct for any buffer length
// and scalar, so generic tests may run them on generated inputs of any size.
inline std::vector<Kernel> basic() {
  return {saxpy(),          linear<float>(), linear<f16>(), linear<bf16>(),
          linear<double>(), narrow_f16(),    reduce_sum()};
}

// The workloads (examples/README.md): shaped kernels whose buffers and scalars must agree (a
// matrix's length with its dimensions), run on the inputs workload_inputs.hpp builds.
inline std::vector<Kernel> workloads() {
  return {matmul_tiled(), group_norm_silu(), attention(),      conv3x3(),
          gemv_f32(),     gemv_f16(),        gemv_fp8<e4m3>(), gemv_fp8<e5m2>(),
          act<float>(),   act<f16>(),        softmax_f16out()};
}

inline std::vector<Kernel> all() {
  std::vector<Kernel> out = basic();
  for (Kernel& k : workloads())
    out.push_back(std::move(k));
  return out;
}

} // namespace halfway::examples
