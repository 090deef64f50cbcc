#include "halfway/numerics/contraction.hpp"

namespace halfway::num {

float mul_add_two_roundings(float a, float b, float c) {
  return a * b + c;
}

} // namespace halfway::num
