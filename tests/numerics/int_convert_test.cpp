// Float <-> integer conversions: truncation with saturation, and single rounding from integers.
#include "halfway/numerics/int_convert.hpp"
#include "mpfr_ref.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace halfway::num {
namespace {

using test::hex;

// Reference float -> int: MPFR truncates the exact value, then saturation per int_convert.hpp.
uint64_t float_to_int_ref(Format f, uint64_t bits, int width, bool is_signed) {
  test::Mp x(64), t(2048);
  test::set_exact(x, f, bits);
  if (mpfr_nan_p(x))
    return 0;
  mpfr_trunc(t, x);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  test::Mp lo(80), hi(80);
  if (is_signed) {
    mpfr_set_si_2exp(lo, -1, width - 1, MPFR_RNDN);
    mpfr_set_ui_2exp(hi, 1, width - 1, MPFR_RNDN);
    mpfr_sub_ui(hi, hi, 1, MPFR_RNDN);
  } else {
    mpfr_set_ui(lo, 0, MPFR_RNDN);
    mpfr_set_ui_2exp(hi, 1, width, MPFR_RNDN);
    mpfr_sub_ui(hi, hi, 1, MPFR_RNDN);
  }
  if (mpfr_less_p(t, lo))
    mpfr_set(t, lo, MPFR_RNDN);
  if (mpfr_greater_p(t, hi))
    mpfr_set(t, hi, MPFR_RNDN);
  if (mpfr_sgn(t.v) >= 0)
    return mpfr_get_uj(t, MPFR_RNDN) & mask;
  return static_cast<uint64_t>(mpfr_get_sj(t, MPFR_RNDN)) & mask;
}

TEST(IntConvert, FloatToIntAllF16AndBF16Patterns) {
  for (Format f : {Format::F16, Format::BF16}) {
    for (uint64_t b = 0; b < 0x10000; ++b) {
      for (int width : {8, 16, 32, 64}) {
        for (bool s : {true, false}) {
          ASSERT_EQ(float_to_int(f, b, width, s), float_to_int_ref(f, b, width, s))
              << format_name(f) << " " << hex(b) << " i" << width << (s ? "" : "u");
        }
      }
    }
  }
}

TEST(IntConvert, FloatToIntRandomF32AndF64) {
  std::mt19937_64 rng(21);
  for (Format f : {Format::F32, Format::F64}) {
    for (int k = 0; k < 200'000; ++k) {
      const uint64_t b = test::random_pattern(rng, f, -2, 66);
      for (int width : {8, 32, 64}) {
        for (bool s : {true, false}) {
          ASSERT_EQ(float_to_int(f, b, width, s), float_to_int_ref(f, b, width, s))
              << format_name(f) << " " << hex(b) << " i" << width << (s ? "" : "u");
        }
      }
    }
  }
}

TEST(IntConvert, NamedCases) {
  const auto f32 = [](float x) { return uint64_t{f32_bits(x)}; };
  EXPECT_EQ(float_to_i32(Format::F32, f32(-2.9f)), -2);
  EXPECT_EQ(float_to_i32(Format::F32, f32(NAN)), 0);
  EXPECT_EQ(float_to_i32(Format::F32, f32(3e9f)), INT32_MAX);
  EXPECT_EQ(float_to_i32(Format::F32, f32(-INFINITY)), INT32_MIN);
  EXPECT_EQ(float_to_u32(Format::F32, f32(-7.0f)), 0u);
  EXPECT_EQ(float_to_u32(Format::F32, f32(INFINITY)), UINT32_MAX);
  EXPECT_EQ(float_to_i64(Format::F64, f64_bits(-0x1p63)), INT64_MIN);
  EXPECT_EQ(float_to_u64(Format::F64, f64_bits(0x1p64)), UINT64_MAX);
  EXPECT_EQ(float_to_int(Format::F16, 0xd800, 8, true), 0x80u); // -128
  EXPECT_EQ(float_to_int(Format::F16, 0xd808, 8, true), 0x80u); // -129 saturates
  EXPECT_EQ(i64_to_float(70000, Format::F16), 0x7c00u);
  EXPECT_EQ(i64_to_float(70000, Format::F16, Rounding::TowardZero), 0x7bffu);
  EXPECT_EQ(i64_to_float(-1, Format::E4M3), 0xb8u);
  EXPECT_EQ(u64_to_float(UINT64_MAX, Format::F32), f32_bits(0x1p64f));
  EXPECT_EQ(u64_to_float(UINT64_MAX, Format::F32, Rounding::Down), f32_bits(0x1.fffffep63f));
  // 2^53 + 1 rounds once to f64's even neighbour; through nothing else.
  EXPECT_EQ(i64_to_float((int64_t{1} << 53) + 1, Format::F64), f64_bits(0x1p53));
  EXPECT_EQ(int_to_float(0x80, 8, true, Format::F32), f32_bits(-128.0f));
  EXPECT_EQ(int_to_float(0x80, 8, false, Format::F32), f32_bits(128.0f));
}

TEST(IntConvert, IntToFloatRandom) {
  std::mt19937_64 rng(22);
  test::Mp x(64);
  for (int k = 0; k < 200'000; ++k) {
    const int width = 8 << (rng() % 4);
    const bool s = rng() & 1;
    uint64_t v = rng() >> (rng() % 64);
    if (width < 64)
      v &= (uint64_t{1} << width) - 1;
    if (s) {
      const int64_t sv = width == 64 ? static_cast<int64_t>(v)
                                     : static_cast<int64_t>(v << (64 - width)) >> (64 - width);
      mpfr_set_sj(x, sv, MPFR_RNDN);
    } else {
      mpfr_set_uj(x, v, MPFR_RNDN);
    }
    for (Format f :
         {Format::F16, Format::BF16, Format::F32, Format::F64, Format::E4M3, Format::E5M2}) {
      for (Rounding r : test::kAllRoundings) {
        ASSERT_EQ(int_to_float(v, width, s, f, r), test::round_ref(f, x, r))
            << hex(v) << " i" << width << (s ? "" : "u") << " -> " << format_name(f) << " "
            << test::rounding_name(r);
      }
    }
  }
}

} // namespace
} // namespace halfway::num
