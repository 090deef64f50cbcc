#pragma once
// Every bundled example kernel, by name: the demo, the golden tests and the CLI iterate this list.
#include "gemv_fp8.hpp"
#include "linear.hpp"
#include "narrow_f16.hpp"
#include "reduce_sum.hpp"
#include "saxpy.hpp"

#include <vector>

namespace halfway::examples {

inline std::vector<Kernel> all() {
  return {saxpy(),      linear<float>(), linear<f16>(),    linear<bf16>(),  linear<double>(),
          narrow_f16(), reduce_sum(),    gemv_fp8<e4m3>(), gemv_fp8<e5m2>()};
}

} // namespace halfway::examples
