// ulp_distance and ulp_of.
#include "halfway/numerics/ulp.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace halfway::num {
namespace {

TEST(Ulp, Distance) {
  EXPECT_EQ(ulp_distance(Format::F16, 0x3c00, 0x3c01), 1u);
  EXPECT_EQ(ulp_distance(Format::F16, 0x3c01, 0x3c00), 1u);
  EXPECT_EQ(ulp_distance(Format::F16, 0x0000, 0x8000), 0u); // +0 and -0
  EXPECT_EQ(ulp_distance(Format::F16, 0x0001, 0x8001), 2u); // through zero
  EXPECT_EQ(ulp_distance(Format::F16, 0x7bff, 0x7c00), 1u); // max finite to inf
  EXPECT_EQ(ulp_distance(Format::F16, 0x3bff, 0x3c00), 1u); // across a binade
  EXPECT_EQ(ulp_distance(Format::F16, 0x7e00, 0xfd01), 0u); // NaNs
  EXPECT_EQ(ulp_distance(Format::F16, 0x7e00, 0x3c00), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(ulp_distance(Format::E4M3, 0x7e, 0xfe), 252u);
  EXPECT_EQ(ulp_distance(Format::E4M3, 0x7f, 0x7e), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(ulp_distance(Format::F64, 0xfff0000000000000, 0x7ff0000000000000),
            2 * uint64_t{0x7ff0000000000000});
  EXPECT_EQ(ulp_distance(Format::F32, f32_bits(1.0f), f32_bits(2.0f)), uint64_t{1} << 23);
}

TEST(Ulp, Of) {
  EXPECT_EQ(ulp_of(Format::F16, 1.0), 0x1p-10);
  EXPECT_EQ(ulp_of(Format::F16, 1.999), 0x1p-10);
  EXPECT_EQ(ulp_of(Format::F16, -2.0), 0x1p-9);
  EXPECT_EQ(ulp_of(Format::F16, 0.0), 0x1p-24);
  EXPECT_EQ(ulp_of(Format::F16, 0x1p-20), 0x1p-24); // subnormal range
  EXPECT_EQ(ulp_of(Format::F16, 0x1p-14), 0x1p-24); // smallest normal: same spacing
  EXPECT_EQ(ulp_of(Format::F16, 65504.0), 32.0);
  EXPECT_EQ(ulp_of(Format::F16, 1e9), 32.0); // beyond range: top binade
  EXPECT_EQ(ulp_of(Format::F16, INFINITY), 32.0);
  EXPECT_TRUE(std::isnan(ulp_of(Format::F16, NAN)));
  EXPECT_EQ(ulp_of(Format::BF16, 1.0), 0x1p-7);
  EXPECT_EQ(ulp_of(Format::F32, 1.0), 0x1p-23);
  EXPECT_EQ(ulp_of(Format::F64, 0.0), 0x1p-1074);
  EXPECT_EQ(ulp_of(Format::E4M3, 448.0), 32.0);
  EXPECT_EQ(ulp_of(Format::E4M3, 0.0), 0x1p-9);
  EXPECT_EQ(ulp_of(Format::E5M2, 1.0), 0.25);
}

} // namespace
} // namespace halfway::num
