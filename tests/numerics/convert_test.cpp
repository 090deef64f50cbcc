// Conversions between float formats, judged by MPFR: exhaustive widenings, every narrowing
// boundary in every rounding mode, and large random samples.
#include "boundaries.hpp"
#include "halfway/numerics/convert.hpp"
#include "mpfr_ref.hpp"

#include <chrono>
#include <cmath>
#include <gtest/gtest.h>
#include <vector>
#include <xmmintrin.h>

namespace halfway::num {
namespace {

using test::convert_ref;
using test::hex;
using test::kAllRoundings;
using test::rounding_name;

constexpr Format kNarrow[] = {Format::F16, Format::BF16, Format::E4M3, Format::E5M2};

// Checks convert_bits (and the fixed-width function, when given) against MPFR for each pattern.
template <class Fixed>
void expect_conversions(Format from, Format to, const std::vector<uint64_t>& patterns, Rounding r,
                        Fp8Overflow ov, Fixed fixed) {
  int failures = 0;
  for (uint64_t b : patterns) {
    const uint64_t want = convert_ref(from, b, to, r, ov);
    const uint64_t got = convert_bits(from, b, to, r, ov);
    const uint64_t got_fixed = fixed(b);
    if ((got != want || got_fixed != want) && ++failures <= 10) {
      ADD_FAILURE() << format_name(from) << " " << hex(b) << " -> " << format_name(to) << " "
                    << rounding_name(r) << ": want " << hex(want) << " got " << hex(got)
                    << " fixed " << hex(got_fixed);
    }
  }
  EXPECT_EQ(failures, 0);
}

void expect_conversions(Format from, Format to, const std::vector<uint64_t>& patterns, Rounding r,
                        Fp8Overflow ov = Fp8Overflow::Nan) {
  expect_conversions(from, to, patterns, r, ov,
                     [&](uint64_t b) { return convert_bits(from, b, to, r, ov); });
}

std::vector<uint64_t> all_patterns(int bits) {
  std::vector<uint64_t> v(size_t{1} << bits);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i;
  return v;
}

TEST(Convert, WidenF16AllPatterns) {
  const auto all = all_patterns(16);
  const auto r = Rounding::NearestEven;
  expect_conversions(Format::F16, Format::F32, all, r, Fp8Overflow::Nan,
                     [](uint64_t b) { return f16_to_f32(static_cast<uint16_t>(b)); });
  expect_conversions(Format::F16, Format::F64, all, r, Fp8Overflow::Nan,
                     [](uint64_t b) { return f16_to_f64(static_cast<uint16_t>(b)); });
  std::vector<uint16_t> in(all.begin(), all.end());
  std::vector<float> out(in.size());
  f16_to_f32_array(in.data(), out.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(f32_bits(out[i]), f16_to_f32(in[i])) << i;
}

TEST(Convert, WidenBF16AllPatterns) {
  const auto all = all_patterns(16);
  const auto r = Rounding::NearestEven;
  expect_conversions(Format::BF16, Format::F32, all, r, Fp8Overflow::Nan,
                     [](uint64_t b) { return bf16_to_f32(static_cast<uint16_t>(b)); });
  expect_conversions(Format::BF16, Format::F64, all, r, Fp8Overflow::Nan,
                     [](uint64_t b) { return bf16_to_f64(static_cast<uint16_t>(b)); });
}

TEST(Convert, WidenFp8AllPatterns) {
  const auto all = all_patterns(8);
  const auto r = Rounding::NearestEven;
  const auto ov = Fp8Overflow::Nan;
  expect_conversions(Format::E4M3, Format::F32, all, r, ov,
                     [](uint64_t b) { return e4m3_to_f32(static_cast<uint8_t>(b)); });
  expect_conversions(Format::E4M3, Format::F64, all, r, ov,
                     [](uint64_t b) { return e4m3_to_f64(static_cast<uint8_t>(b)); });
  expect_conversions(Format::E5M2, Format::F32, all, r, ov,
                     [](uint64_t b) { return e5m2_to_f32(static_cast<uint8_t>(b)); });
  expect_conversions(Format::E5M2, Format::F64, all, r, ov,
                     [](uint64_t b) { return e5m2_to_f64(static_cast<uint8_t>(b)); });
  for (Format to : {Format::F16, Format::BF16}) {
    expect_conversions(Format::E4M3, to, all, r);
    expect_conversions(Format::E5M2, to, all, r);
  }
}

TEST(Convert, SameFormatOnlyCanonicalisesNans) {
  for (uint64_t b = 0; b < 0x10000; ++b) {
    const uint64_t want = is_nan(Format::F16, b) ? quiet_nan(Format::F16, b & 0x8000) : b;
    ASSERT_EQ(convert_bits(Format::F16, b, Format::F16), want) << hex(b);
  }
}

// f32 -> each narrow format on every boundary +-2 f32 ulps, all roundings (and both fp8 overflow
// policies).
TEST(Convert, NarrowF32AtEveryBoundary) {
  for (Format to : kNarrow) {
    const auto patterns = test::patterns_near_boundaries(Format::F32, to, 2);
    for (Rounding r : kAllRoundings) {
      for (Fp8Overflow ov : {Fp8Overflow::Nan, Fp8Overflow::Saturate}) {
        if (!is_fp8(to) && ov == Fp8Overflow::Saturate)
          continue;
        expect_conversions(Format::F32, to, patterns, r, ov, [&](uint64_t b) -> uint64_t {
          const auto x = static_cast<uint32_t>(b);
          switch (to) {
          case Format::F16:
            return f32_to_f16(x, r);
          case Format::BF16:
            return f32_to_bf16(x, r);
          case Format::E4M3:
            return f32_to_e4m3(x, r, ov);
          default:
            return f32_to_e5m2(x, r, ov);
          }
        });
      }
    }
  }
}

// The same for f64 sources, +-2 f64 ulps: a conversion that went through f32 fails here.
TEST(Convert, NarrowF64AtEveryBoundary) {
  for (Format to : kNarrow) {
    const auto patterns = test::patterns_near_boundaries(Format::F64, to, 2);
    for (Rounding r : kAllRoundings) {
      expect_conversions(Format::F64, to, patterns, r, Fp8Overflow::Nan,
                         [&](uint64_t b) -> uint64_t {
                           switch (to) {
                           case Format::F16:
                             return f64_to_f16(b, r);
                           case Format::BF16:
                             return f64_to_bf16(b, r);
                           case Format::E4M3:
                             return f64_to_e4m3(b, r);
                           default:
                             return f64_to_e5m2(b, r);
                           }
                         });
    }
  }
}

// f64 -> f32: the f32 boundaries can't all be enumerated; take the special ones and those around
// 10^5 random f32 values (the value and the midpoint above it, +-2 f64 ulps).
TEST(Convert, NarrowF64ToF32Boundaries) {
  std::mt19937_64 rng(11);
  std::vector<uint64_t> centers = {0,          1,          2,          0x007fffff, 0x00800000,
                                   0x00800001, 0x7f7ffffe, 0x7f7fffff, 0x3f800000};
  for (int k = 0; k < 100000; ++k)
    centers.push_back(rng() & 0x7f7fffff);
  std::vector<uint64_t> patterns;
  for (uint64_t c : centers) {
    const double v = f32_from_bits(static_cast<uint32_t>(c));
    const double next = std::nextafter(static_cast<float>(v), INFINITY);
    for (double p : {v, (v + next) / 2}) {
      for (double s : {p, -p}) {
        for (int d = -2; d <= 2; ++d)
          patterns.push_back(test::step(Format::F64, f64_bits(s), d));
      }
    }
  }
  for (Rounding r : kAllRoundings) {
    expect_conversions(Format::F64, Format::F32, patterns, r, Fp8Overflow::Nan,
                       [&](uint64_t b) { return f64_to_f32(b, r); });
  }
}

TEST(Convert, F64SourcesRoundOnce) {
  // 1 + 2^-11 is the f16 midpoint between 1 and 1 + 2^-10; a hair above it must round up. Through
  // f32 the hair vanishes and the tie goes to even (1.0).
  const double above = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(f64_to_f16(f64_bits(above)), 0x3c01);
  EXPECT_EQ(f32_to_f16(f32_bits(static_cast<float>(above))), 0x3c00); // the double rounding
  EXPECT_EQ(f64_to_bf16(f64_bits(1.0 + 0x1p-8 + 0x1p-40)), 0x3f81);
  EXPECT_EQ(f64_to_e4m3(f64_bits(1.0 + 0x1p-4 + 0x1p-40)), 0x39);
  EXPECT_EQ(f64_to_e5m2(f64_bits(1.0 + 0x1p-3 + 0x1p-40)), 0x3d);
}

TEST(Convert, NamedCases) {
  const auto f32 = [](float x) { return f32_bits(x); };
  // Overflow per rounding mode.
  EXPECT_EQ(f32_to_f16(f32(65504.0f)), 0x7bff);
  EXPECT_EQ(f32_to_f16(f32(65519.99f)), 0x7bff);
  EXPECT_EQ(f32_to_f16(f32(65520.0f)), 0x7c00); // the tie goes to the even "65536" = inf
  EXPECT_EQ(f32_to_f16(f32(1e6f), Rounding::TowardZero), 0x7bff);
  EXPECT_EQ(f32_to_f16(f32(-1e6f), Rounding::Up), 0xfbff);
  EXPECT_EQ(f32_to_f16(f32(-1e6f), Rounding::Down), 0xfc00);
  // Underflow keeps the sign; the smallest subnormal's half is a tie to zero.
  EXPECT_EQ(f32_to_f16(f32(-0x1p-25f)), 0x8000);
  EXPECT_EQ(f32_to_f16(f32(0x1.000002p-25f)), 0x0001);
  EXPECT_EQ(f32_to_f16(f32(0x1p-30f), Rounding::Up), 0x0001);
  EXPECT_EQ(f32_to_f16(f32(-0x1p-30f), Rounding::Up), 0x8000);
  // NaN canonicalisation keeps the sign.
  EXPECT_EQ(f32_to_f16(0xffa00001), 0xfe00);
  EXPECT_EQ(f32_to_f16(0x7f800001), 0x7e00);
  EXPECT_EQ(f32_to_bf16(0x7f800001), 0x7fc0);
  EXPECT_EQ(f16_to_f32(0xfd01), 0xffc00000u);
  // E4M3FN: 464 is the tie between 448 (even) and the missing 480.
  EXPECT_EQ(f32_to_e4m3(f32(448.0f)), 0x7e);
  EXPECT_EQ(f32_to_e4m3(f32(464.0f)), 0x7e);
  EXPECT_EQ(f32_to_e4m3(f32(464.5f)), 0x7f);
  EXPECT_EQ(f32_to_e4m3(f32(-465.0f)), 0xff);
  EXPECT_EQ(f32_to_e4m3(f32(1000.0f), Rounding::NearestEven, Fp8Overflow::Saturate), 0x7e);
  EXPECT_EQ(f32_to_e4m3(f32(1000.0f), Rounding::TowardZero), 0x7e);
  EXPECT_EQ(f32_to_e4m3(f32(449.0f), Rounding::Up), 0x7f);
  EXPECT_EQ(f32_to_e4m3(f32(INFINITY)), 0x7f);
  EXPECT_EQ(f32_to_e4m3(f32(-INFINITY), Rounding::NearestEven, Fp8Overflow::Saturate), 0xfe);
  EXPECT_EQ(f32_to_e4m3(0x7fc00000), 0x7f);
  EXPECT_EQ(e4m3_to_f32(0x7e), f32(448.0f));
  EXPECT_EQ(e4m3_to_f32(0x01), f32(0x1p-9f));
  // E5M2: IEEE overflow, or saturation on request.
  EXPECT_EQ(f32_to_e5m2(f32(57344.0f)), 0x7b);
  EXPECT_EQ(f32_to_e5m2(f32(61440.0f)), 0x7c);
  EXPECT_EQ(f32_to_e5m2(f32(61439.0f)), 0x7b);
  EXPECT_EQ(f32_to_e5m2(f32(1e9f), Rounding::NearestEven, Fp8Overflow::Saturate), 0x7b);
  EXPECT_EQ(f32_to_e5m2(f32(-INFINITY)), 0xfc);
  EXPECT_EQ(f32_to_e5m2(f32(-INFINITY), Rounding::NearestEven, Fp8Overflow::Saturate), 0xfb);
  EXPECT_EQ(f32_to_e5m2(f32(1e9f), Rounding::TowardZero), 0x7b);
  EXPECT_EQ(f32_to_e5m2(0xff800001), 0xfe);
  // Widening helpers.
  EXPECT_EQ(to_double(Format::BF16, 0x3f80), 1.0);
  EXPECT_EQ(from_double(Format::F16, 0.1), 0x2e66u);
  EXPECT_EQ(f32_to_f64(f32(0.1f)), f64_bits(static_cast<double>(0.1f)));
}

// Random f32 values narrowed to f16 and bf16, checked by MPFR: 10^7 under nearest-even (the mode
// kernels use) and 10^6 in each directed mode.
void random_f32_narrowing(Format to, int exp_lo, int exp_hi) {
  std::mt19937_64 rng(static_cast<uint64_t>(to) + 1);
  for (Rounding r : kAllRoundings) {
    const int n = r == Rounding::NearestEven ? 10'000'000 : 1'000'000;
    std::vector<uint64_t> patterns(n);
    for (auto& p : patterns)
      p = test::random_pattern(rng, Format::F32, exp_lo, exp_hi);
    expect_conversions(Format::F32, to, patterns, r, Fp8Overflow::Nan, [&](uint64_t b) -> uint64_t {
      const auto x = static_cast<uint32_t>(b);
      return to == Format::F16 ? f32_to_f16(x, r) : f32_to_bf16(x, r);
    });
  }
}

TEST(Convert, RandomF32ToF16) {
  random_f32_narrowing(Format::F16, -27, 17);
}
TEST(Convert, RandomF32ToBF16) {
  random_f32_narrowing(Format::BF16, -136, 127);
}

TEST(Convert, RandomF32AndF64ToFp8) {
  std::mt19937_64 rng(5);
  for (Format to : {Format::E4M3, Format::E5M2}) {
    for (Format from : {Format::F32, Format::F64}) {
      std::vector<uint64_t> patterns(1'000'000);
      for (auto& p : patterns)
        p = test::random_pattern(rng, from, info(to).emin - 4, info(to).emax + 2);
      for (Rounding r : kAllRoundings) {
        for (Fp8Overflow ov : {Fp8Overflow::Nan, Fp8Overflow::Saturate}) {
          const std::vector<uint64_t> some(patterns.begin(),
                                           patterns.begin() +
                                               (r == Rounding::NearestEven ? 1'000'000 : 100'000));
          expect_conversions(from, to, some, r, ov);
        }
      }
    }
  }
}

TEST(Convert, RandomF64ToNarrow) {
  std::mt19937_64 rng(6);
  for (Format to : {Format::F16, Format::BF16, Format::F32}) {
    std::vector<uint64_t> patterns(1'000'000);
    for (auto& p : patterns)
      p = test::random_pattern(rng, Format::F64, info(to).emin - info(to).man_bits - 3,
                               info(to).emax + 2);
    for (Rounding r : kAllRoundings)
      expect_conversions(Format::F64, to, patterns, r);
  }
}

// to_double and from_double (nearest-even) take fast paths for f16, bf16 and f32; they must agree
// with MPFR everywhere: every boundary of the target, random doubles from far below the smallest
// subnormal to beyond overflow (binary64 subnormals, zeros, infinities and NaNs included), and
// every f16 and bf16 pattern and random f32 patterns widened.
TEST(Convert, FromAndToDoubleFastPaths) {
  std::mt19937_64 rng(10);
  for (Format to : {Format::F16, Format::BF16, Format::F32}) {
    // f32 has too many boundaries to enumerate (NarrowF64ToF32Boundaries samples them).
    std::vector<uint64_t> patterns;
    if (to != Format::F32)
      patterns = test::patterns_near_boundaries(Format::F64, to, 2);
    for (int k = 0; k < 300'000; ++k)
      patterns.push_back(test::random_pattern(
          rng, Format::F64, info(to).emin - info(to).man_bits - 4, info(to).emax + 3));
    for (uint64_t b :
         {uint64_t{0}, uint64_t{1}, uint64_t{0x000fffffffffffff}, uint64_t{0x7ff0000000000000},
          uint64_t{0x7ff8000000000001}, uint64_t{0x7ff0000000000001}, uint64_t{0x3ff0000000000000}})
      for (uint64_t sign : {uint64_t{0}, uint64_t{1} << 63})
        patterns.push_back(b | sign);
    int failures = 0;
    for (uint64_t b : patterns) {
      const uint64_t want =
          convert_ref(Format::F64, b, to, Rounding::NearestEven, Fp8Overflow::Nan);
      const uint64_t got = from_double(to, f64_from_bits(b));
      if (got != want && ++failures <= 10)
        ADD_FAILURE() << "from_double(" << format_name(to) << ", " << hex(b) << "): want "
                      << hex(want) << " got " << hex(got);
    }
    EXPECT_EQ(failures, 0);
  }
  std::vector<std::pair<Format, uint64_t>> widen;
  for (uint64_t b = 0; b < 0x10000; ++b) {
    widen.emplace_back(Format::F16, b);
    widen.emplace_back(Format::BF16, b);
  }
  for (int k = 0; k < 300'000; ++k)
    widen.emplace_back(Format::F32, static_cast<uint32_t>(rng()));
  int failures = 0;
  for (auto [from, b] : widen) {
    const uint64_t want =
        convert_ref(from, b, Format::F64, Rounding::NearestEven, Fp8Overflow::Nan);
    const uint64_t got = f64_bits(to_double(from, b));
    if (got != want && ++failures <= 10)
      ADD_FAILURE() << "to_double(" << format_name(from) << ", " << hex(b) << "): want "
                    << hex(want) << " got " << hex(got);
  }
  EXPECT_EQ(failures, 0);
}

TEST(Convert, ArrayMatchesScalar) {
  std::mt19937_64 rng(7);
  std::vector<float> in(100'003);
  for (auto& x : in)
    x = f32_from_bits(static_cast<uint32_t>(test::random_pattern(rng, Format::F32, -27, 17)));
  in[0] = f32_from_bits(0x7fa00001); // NaN with payload
  in[1] = f32_from_bits(0xff800001);
  in[2] = 65520.0f;
  in[3] = -0x1p-25f;
  std::vector<uint16_t> out(in.size());
  f32_to_f16_array(in.data(), out.data(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(out[i], convert_bits(Format::F32, f32_bits(in[i]), Format::F16)) << i;
  }
}

// convert.hpp promises independence from MXCSR: the F16C paths ignore its rounding mode (the
// immediate says nearest-even) and, as measured, FTZ and DAZ. Run them under toward-zero with
// FTZ|DAZ and compare with the default environment.
TEST(Convert, IndependentOfMxcsr) {
  std::mt19937_64 rng(9);
  std::vector<float> in;
  for (int k = 0; k < 200'000; ++k) {
    in.push_back(
        f32_from_bits(static_cast<uint32_t>(test::random_pattern(rng, Format::F32, -30, 17))));
  }
  for (uint32_t b = 0; b < 0x2000; ++b)
    in.push_back(f32_from_bits(b * 0x1000)); // f32 subnormals
  std::vector<uint16_t> halves(0x10000);
  for (uint32_t b = 0; b < halves.size(); ++b)
    halves[b] = static_cast<uint16_t>(b);
  const auto run = [&] {
    std::vector<uint64_t> out;
    for (float x : in)
      out.push_back(f32_to_f16(f32_bits(x)));
    std::vector<uint16_t> arr(in.size());
    f32_to_f16_array(in.data(), arr.data(), in.size());
    out.insert(out.end(), arr.begin(), arr.end());
    for (uint16_t h : halves)
      out.push_back(f16_to_f32(h));
    std::vector<float> wide(halves.size());
    f16_to_f32_array(halves.data(), wide.data(), halves.size());
    for (float w : wide)
      out.push_back(f32_bits(w));
    return out;
  };
  const std::vector<uint64_t> normal = run();
  const unsigned saved = _mm_getcsr();
  _mm_setcsr((saved & ~_MM_ROUND_MASK) | _MM_ROUND_TOWARD_ZERO | _MM_FLUSH_ZERO_ON |
             0x0040); // 0x40: DAZ
  const std::vector<uint64_t> odd = run();
  _mm_setcsr(saved);
  EXPECT_EQ(normal, odd);
}

} // namespace
} // namespace halfway::num
