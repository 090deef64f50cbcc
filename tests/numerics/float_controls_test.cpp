// Denormal flushing and the result comparison under float controls.
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/float_controls.hpp"

#include <gtest/gtest.h>

namespace halfway::num {
namespace {

TEST(FloatControls, FlushOnlyTheFlaggedFormat) {
  FloatControls c;
  EXPECT_EQ(apply_flush(Format::F16, 0x0001, c), 0x0001u);
  c.flush_f16 = true;
  EXPECT_EQ(apply_flush(Format::F16, 0x0001, c), 0x0000u);
  EXPECT_EQ(apply_flush(Format::F16, 0x83ff, c), 0x8000u); // sign kept
  EXPECT_EQ(apply_flush(Format::F16, 0x0400, c), 0x0400u); // smallest normal stays
  EXPECT_EQ(apply_flush(Format::F16, 0x7e01, c), 0x7e01u); // NaN untouched
  EXPECT_EQ(apply_flush(Format::F32, 0x00000001, c), 0x00000001u);
  c.flush_f32 = true;
  EXPECT_EQ(apply_flush(Format::F32, 0x807fffff, c), 0x80000000u);
  EXPECT_EQ(apply_flush(Format::BF16, 0x0040, c), 0x0000u); // bf16 follows f32
  EXPECT_EQ(apply_flush(Format::E4M3, 0x01, c), 0x01u);     // fp8 never flushed
  EXPECT_EQ(apply_flush(Format::F64, 1, c), 1u);
  c.flush_f64 = true;
  EXPECT_EQ(apply_flush(Format::F64, 0x8000000000000001, c), 0x8000000000000000u);
}

TEST(FloatControls, EmulatingAFlushingMultiply) {
  // 2^-14 * 0.5 = 2^-15 is subnormal in f16: a flushing device returns +0; so does the emulation.
  FloatControls c;
  c.flush_f16 = true;
  const uint64_t exact = mul(Format::F16, 0x0400, 0x3800);
  EXPECT_EQ(exact, 0x0200u);
  EXPECT_EQ(apply_flush(Format::F16, exact, c), 0x0000u);
  // Subnormal inputs are flushed before the operation: 2^-15 * 2^10 is 2^-5 exactly, 0 flushed.
  EXPECT_EQ(mul(Format::F16, apply_flush(Format::F16, 0x0200, c), 0x6400), 0x0000u);
  EXPECT_EQ(mul(Format::F16, 0x0200, 0x6400), 0x2800u);
}

TEST(FloatControls, SameResult) {
  FloatControls c;
  EXPECT_TRUE(same_result(Format::F16, 0x3c00, 0x3c00, c));
  EXPECT_TRUE(same_result(Format::F16, 0x7e00, 0xfd55, c));  // NaN payloads are not compared
  EXPECT_FALSE(same_result(Format::F16, 0x0000, 0x8000, c)); // signed zero preserved
  EXPECT_FALSE(same_result(Format::F16, 0x0001, 0x0000, c));
  c.flush_f16 = true;
  EXPECT_TRUE(same_result(Format::F16, 0x0001, 0x0000, c));
  EXPECT_FALSE(same_result(Format::F16, 0x0001, 0x8000, c)); // flushing keeps the sign
  c.preserve_signed_zero_inf_nan = false;
  EXPECT_TRUE(same_result(Format::F16, 0x0001, 0x8000, c));
  EXPECT_TRUE(same_result(Format::F16, 0x7c00, 0x3c00, c));
  EXPECT_FALSE(same_result(Format::F16, 0x3c01, 0x3c00, c));
}

} // namespace
} // namespace halfway::num
