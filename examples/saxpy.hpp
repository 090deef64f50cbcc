#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// y[i] = a * x[i] + y[i]
inline Kernel saxpy() {
  return kernel("saxpy", {64}, {"x", "y", "a"}, [](In<float> x, InOut<float> y, Scalar<float> a) {
    Var i(global_id(0), "i");
    If(i < x.size(), [&] { y[i] = a * x[i] + y[i]; });
  });
}

} // namespace halfway::examples
