// The descriptor table against the formats' published constants.
#include "halfway/numerics/formats.hpp"

#include <gtest/gtest.h>

namespace halfway::num {
namespace {

TEST(Formats, TableMatchesPublishedConstants) {
  EXPECT_EQ(info(Format::F16).max_finite, 0x7bffu);
  EXPECT_EQ(info(Format::F16).max_finite_value, 65504.0);
  EXPECT_EQ(info(Format::F16).min_normal_value, 0x1p-14);
  EXPECT_EQ(info(Format::F16).min_subnormal_value, 0x1p-24);
  EXPECT_EQ(info(Format::F16).quiet_nan, 0x7e00u);
  EXPECT_EQ(info(Format::BF16).max_finite, 0x7f7fu);
  EXPECT_EQ(info(Format::BF16).max_finite_value, 0x1.fep127);
  EXPECT_EQ(info(Format::BF16).min_subnormal_value, 0x1p-133);
  EXPECT_EQ(info(Format::BF16).quiet_nan, 0x7fc0u);
  EXPECT_EQ(info(Format::F32).max_finite_value, 0x1.fffffep127);
  EXPECT_EQ(info(Format::F32).min_subnormal_value, 0x1p-149);
  EXPECT_EQ(info(Format::F32).quiet_nan, 0x7fc00000u);
  EXPECT_EQ(info(Format::F64).max_finite_value, 0x1.fffffffffffffp1023);
  EXPECT_EQ(info(Format::F64).min_subnormal_value, 0x1p-1074);
  EXPECT_EQ(info(Format::F64).quiet_nan, 0x7ff8000000000000u);
  EXPECT_EQ(info(Format::F64).sign_mask, 0x8000000000000000u);

  const FormatInfo& e4 = info(Format::E4M3);
  EXPECT_EQ(e4.bias, 7);
  EXPECT_FALSE(e4.has_inf);
  EXPECT_EQ(e4.max_finite, 0x7eu);
  EXPECT_EQ(e4.max_finite_value, 448.0);
  EXPECT_EQ(e4.min_normal_value, 0x1p-6);
  EXPECT_EQ(e4.min_subnormal_value, 0x1p-9);
  EXPECT_EQ(e4.quiet_nan, 0x7fu);
  EXPECT_EQ(e4.emax, 8);

  const FormatInfo& e5 = info(Format::E5M2);
  EXPECT_EQ(e5.bias, 15);
  EXPECT_TRUE(e5.has_inf);
  EXPECT_EQ(e5.inf_bits, 0x7cu);
  EXPECT_EQ(e5.max_finite_value, 57344.0);
  EXPECT_EQ(e5.min_normal_value, 0x1p-14);
  EXPECT_EQ(e5.min_subnormal_value, 0x1p-16);
  EXPECT_EQ(e5.quiet_nan, 0x7eu);
}

TEST(Formats, Classification) {
  EXPECT_TRUE(is_nan(Format::E4M3, 0x7f));
  EXPECT_TRUE(is_nan(Format::E4M3, 0xff));
  EXPECT_FALSE(is_nan(Format::E4M3, 0x7e));
  EXPECT_FALSE(is_inf(Format::E4M3, 0x78)); // 256, a finite number in E4M3FN
  EXPECT_TRUE(is_finite(Format::E4M3, 0x78));
  EXPECT_TRUE(is_inf(Format::E5M2, 0xfc));
  EXPECT_TRUE(is_nan(Format::E5M2, 0x7d));
  EXPECT_TRUE(is_nan(Format::F16, 0xfc01));
  EXPECT_TRUE(is_subnormal(Format::F16, 0x83ff));
  EXPECT_FALSE(is_subnormal(Format::F16, 0x8400));
  EXPECT_TRUE(is_zero(Format::BF16, 0x8000));
  EXPECT_EQ(quiet_nan(Format::F32, true), 0xffc00000u);
  EXPECT_STREQ(format_name(Format::BF16), "bf16");
}

} // namespace
} // namespace halfway::num
