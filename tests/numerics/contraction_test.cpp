// Fails if the project's -ffp-contract=off is dropped: the library's a * b + c would become an FMA.
#include "halfway/numerics/contraction.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace halfway::num {
namespace {

TEST(Contraction, MultiplyAddRoundsTwice) {
  // a * b = 1 + 2^-11 + 2^-24 exactly; rounded to f32 the 2^-24 is a tie that goes to even, so the
  // product is 1 + 2^-11 and adding c gives exactly 0. A fused multiply-add keeps the 2^-24.
  const float a = 1.0f + 0x1p-12f;
  const float b = 1.0f + 0x1p-12f;
  const float c = -(1.0f + 0x1p-11f);
  ASSERT_EQ(std::fma(a, b, c), 0x1p-24f); // what contraction would give
  EXPECT_EQ(mul_add_two_roundings(a, b, c), 0.0f)
      << "halfway_numerics was compiled with FMA contraction: -ffp-contract=off is missing";
  EXPECT_EQ(mul_add_two_roundings(3.0f, 0.1f, -0.3f), 3.0f * 0.1f - 0.3f);
}

} // namespace
} // namespace halfway::num
