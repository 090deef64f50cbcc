// Elementary functions: 0 ulp against MPFR, round to nearest even. f16, bf16 and fp8 are checked
// on every input of the unary functions; f32 on 10^5 random inputs per function; f64 (which the
// library already computes with MPFR) on 10^4; special values everywhere.
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/math.hpp"
#include "mpfr_ref.hpp"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

namespace halfway::num {
namespace {

using test::hex;
using test::Mp;

constexpr MathFn kUnary[] = {MathFn::Exp,  MathFn::Exp2,  MathFn::Log, MathFn::Log2,
                             MathFn::Sin,  MathFn::Cos,   MathFn::Tan, MathFn::Tanh,
                             MathFn::Sqrt, MathFn::Rsqrt, MathFn::Erf, MathFn::Atan};
constexpr MathFn kBinary[] = {MathFn::Pow, MathFn::Atan2};

uint64_t math_ref(MathFn fn, Format f, uint64_t a, uint64_t b) {
  thread_local Mp x(64), y(64);
  test::set_exact(x, f, a);
  test::set_exact(y, f, b);
  // IEEE rSqrt(-0) = -inf, where MPFR's rec_sqrt gives +inf (documented in math.hpp).
  const bool rsqrt_of_zero = fn == MathFn::Rsqrt && mpfr_zero_p(x);
  return test::eval_ref(f, Rounding::NearestEven, [&](mpfr_ptr out, mpfr_rnd_t rnd) {
    if (rsqrt_of_zero) {
      mpfr_set_inf(out, sign_bit(f, a) ? -1 : 1);
      return 0;
    }
    switch (fn) {
    case MathFn::Exp:
      return mpfr_exp(out, x, rnd);
    case MathFn::Exp2:
      return mpfr_exp2(out, x, rnd);
    case MathFn::Log:
      return mpfr_log(out, x, rnd);
    case MathFn::Log2:
      return mpfr_log2(out, x, rnd);
    case MathFn::Sin:
      return mpfr_sin(out, x, rnd);
    case MathFn::Cos:
      return mpfr_cos(out, x, rnd);
    case MathFn::Tan:
      return mpfr_tan(out, x, rnd);
    case MathFn::Tanh:
      return mpfr_tanh(out, x, rnd);
    case MathFn::Sqrt:
      return mpfr_sqrt(out, x, rnd);
    case MathFn::Rsqrt:
      return mpfr_rec_sqrt(out, x, rnd);
    case MathFn::Erf:
      return mpfr_erf(out, x, rnd);
    case MathFn::Pow:
      return mpfr_pow(out, x, y, rnd);
    case MathFn::Atan2:
      return mpfr_atan2(out, x, y, rnd);
    case MathFn::Atan:
      return mpfr_atan(out, x, rnd);
    }
    return 0;
  });
}

struct Args {
  uint64_t x, y;
};

void expect_math(MathFn fn, Format f, const std::vector<Args>& args) {
  int failures = 0;
  for (const Args& a : args) {
    const uint64_t want = math_ref(fn, f, a.x, a.y);
    const uint64_t got = math(fn, f, a.x, a.y);
    if (got != want && ++failures <= 10) {
      ADD_FAILURE() << format_name(f) << " " << math_info(fn).name << "(" << hex(a.x) << ", "
                    << hex(a.y) << ") = " << to_double(f, a.x) << ", " << to_double(f, a.y)
                    << ": want " << hex(want) << " got " << hex(got);
    }
  }
  EXPECT_EQ(failures, 0) << format_name(f) << " " << math_info(fn).name << " of " << args.size();
}

std::vector<Args> all_unary(int bits) {
  std::vector<Args> v;
  for (uint64_t b = 0; b < (uint64_t{1} << bits); ++b)
    v.push_back({b, 0});
  return v;
}

TEST(Math, UnaryAllF16Patterns) {
  const auto all = all_unary(16);
  for (MathFn fn : kUnary)
    expect_math(fn, Format::F16, all);
}

TEST(Math, UnaryAllBF16Patterns) {
  const auto all = all_unary(16);
  for (MathFn fn : kUnary)
    expect_math(fn, Format::BF16, all);
}

TEST(Math, Fp8AllInputs) {
  for (Format f : {Format::E4M3, Format::E5M2}) {
    for (MathFn fn : kUnary)
      expect_math(fn, f, all_unary(8));
    std::vector<Args> pairs;
    for (uint64_t a = 0; a < 256; ++a) {
      for (uint64_t b = 0; b < 256; ++b)
        pairs.push_back({a, b});
    }
    for (MathFn fn : kBinary)
      expect_math(fn, f, pairs);
  }
}

// Random inputs with exponents drawn where each function is interesting (half of them), the rest
// uniformly random bit patterns.
std::vector<Args> random_args(MathFn fn, Format f, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int lo = info(f).emin - info(f).man_bits, hi = info(f).emax;
  switch (fn) {
  case MathFn::Exp:
  case MathFn::Exp2:
    hi = std::min(hi, 10);
    break;
  case MathFn::Tanh:
  case MathFn::Erf:
    hi = std::min(hi, 5);
    break;
  case MathFn::Sin:
  case MathFn::Cos:
  case MathFn::Tan:
    hi = std::min(hi, 40);
    break;
  case MathFn::Pow:
    lo = -8, hi = 8;
    break;
  default:
    break;
  }
  std::vector<Args> v(n);
  for (auto& a : v) {
    a.x = test::random_pattern(rng, f, lo, hi);
    a.y = math_info(fn).arity == 2 ? test::random_pattern(rng, f, lo, hi) : 0;
    // Half of pow's exponents are small integers, where results are exact or exact midpoints.
    if (fn == MathFn::Pow && (rng() & 1))
      a.y = from_double(f, static_cast<double>(static_cast<int>(rng() % 21) - 10));
  }
  return v;
}

TEST(Math, RandomF32) {
  const uint64_t before = math_mpfr_fallbacks();
  for (int k = 0; k < kMathFnCount; ++k) {
    const auto fn = static_cast<MathFn>(k);
    expect_math(fn, Format::F32, random_args(fn, Format::F32, 100'000, 100 + k));
  }
  // The double fast path decides nearly everything; MPFR is for near-ties and exact midpoints.
  const uint64_t fallbacks = math_mpfr_fallbacks() - before;
  RecordProperty("mpfr_fallbacks", std::to_string(fallbacks));
  EXPECT_LT(fallbacks, kMathFnCount * 100'000 / 100);
}

TEST(Math, RandomBinaryF16AndBF16) {
  for (Format f : {Format::F16, Format::BF16}) {
    for (MathFn fn : kBinary)
      expect_math(fn, f, random_args(fn, f, 200'000, 200 + static_cast<int>(fn)));
  }
}

TEST(Math, RandomF64) {
  for (int k = 0; k < kMathFnCount; ++k) {
    const auto fn = static_cast<MathFn>(k);
    expect_math(fn, Format::F64, random_args(fn, Format::F64, 10'000, 300 + k));
  }
}

// Every pair from a list of special values, in every format.
TEST(Math, SpecialValues) {
  const double specials[] = {0.0,  -0.0, INFINITY, -INFINITY, NAN,  1.0,   -1.0,   0.5,  -0.5, 2.0,
                             -2.0, 3.0,  -3.0,     2.5,       -2.5, 1e-30, -1e-30, 1e30, -1e30};
  for (Format f :
       {Format::F16, Format::BF16, Format::F32, Format::F64, Format::E4M3, Format::E5M2}) {
    std::vector<uint64_t> values;
    for (double d : specials)
      values.push_back(from_double(f, d));
    values.push_back(info(f).max_finite);
    values.push_back(info(f).min_subnormal | info(f).sign_mask);
    std::vector<Args> unary, pairs;
    for (uint64_t a : values) {
      unary.push_back({a, 0});
      for (uint64_t b : values)
        pairs.push_back({a, b});
    }
    for (MathFn fn : kUnary)
      expect_math(fn, f, unary);
    for (MathFn fn : kBinary)
      expect_math(fn, f, pairs);
  }
}

TEST(Math, NamedCases) {
  const auto f32 = [](float x) { return uint64_t{f32_bits(x)}; };
  const Format F = Format::F32;
  EXPECT_EQ(pow(F, f32(NAN), f32(0.0f)), f32(1.0f));
  EXPECT_EQ(pow(F, f32(1.0f), f32(NAN)), f32(1.0f));
  EXPECT_EQ(pow(F, f32(-1.0f), f32(INFINITY)), f32(1.0f));
  EXPECT_EQ(pow(F, f32(-0.0f), f32(-3.0f)), f32(-INFINITY));
  EXPECT_EQ(pow(F, f32(-0.0f), f32(3.0f)), f32(-0.0f));
  EXPECT_EQ(pow(F, f32(-2.0f), f32(0.5f)), quiet_nan(F));
  EXPECT_EQ(pow(F, f32(-2.0f), f32(3.0f)), f32(-8.0f));
  EXPECT_EQ(atan2(F, f32(-0.0f), f32(-0.0f)), f32(-static_cast<float>(M_PI)));
  EXPECT_EQ(atan2(F, f32(INFINITY), f32(INFINITY)), f32(static_cast<float>(M_PI / 4)));
  EXPECT_EQ(rsqrt(F, f32(-0.0f)), f32(-INFINITY));
  EXPECT_EQ(rsqrt(F, f32(0.0f)), f32(INFINITY));
  EXPECT_EQ(rsqrt(Format::F64, f64_bits(-0.0)), f64_bits(-INFINITY));
  EXPECT_EQ(log(F, f32(-0.0f)), f32(-INFINITY));
  EXPECT_EQ(log(F, f32(-1.0f)), quiet_nan(F));
  EXPECT_EQ(exp(F, f32(-INFINITY)), f32(0.0f));
  EXPECT_EQ(exp(F, f32(100.0f)), f32(INFINITY));
  EXPECT_EQ(exp(Format::F16, 0x4a00), 0x7c00u); // e^12 overflows f16
  EXPECT_EQ(tanh(F, f32(-INFINITY)), f32(-1.0f));
  EXPECT_EQ(sin(F, f32(-0.0f)), f32(-0.0f));
  EXPECT_EQ(sin(F, f32(INFINITY)), quiet_nan(F));
  EXPECT_EQ(erf(Format::BF16, 0x8000), 0x8000u);
  EXPECT_EQ(exp(Format::E4M3, from_double(Format::E4M3, 7.0)), 0x7fu); // e^7 > 448: NaN
}

// An exact midpoint needs MPFR: 257^3 = 16974593 lies halfway between two floats.
TEST(Math, MidpointsFallBackToMpfr) {
  const uint64_t before = math_mpfr_fallbacks();
  EXPECT_EQ(pow(Format::F32, f32_bits(257.0f), f32_bits(3.0f)), f32_bits(16974592.0f));
  EXPECT_EQ(math_mpfr_fallbacks(), before + 1);
  // 17^2 = 289 needs 9 bits: a bf16 tie between 288 (even) and 290.
  const Format B = Format::BF16;
  EXPECT_EQ(pow(B, from_double(B, 17.0), from_double(B, 2.0)), from_double(B, 288.0));
  EXPECT_EQ(math_mpfr_fallbacks(), before + 2);
}

// MPFR's exponent range and the fallback scratch are per thread: two threads forcing MPFR in
// different formats at once get the serial answers.
TEST(Math, ThreadsAgreeWithSerial) {
  ASSERT_TRUE(mpfr_buildopt_tls_p())
      << "MPFR without thread-local state: math() is not thread-safe";
  const auto work = [](Format f, std::vector<uint64_t>& out) {
    for (uint64_t k = 0; k < 2000; ++k) {
      const uint64_t x = from_double(f, 1.0 + static_cast<double>(k) / 64);
      out.push_back(math(MathFn::Pow, f, x, from_double(f, 2.0)));
      out.push_back(math(MathFn::Exp, f, x));
    }
  };
  std::vector<uint64_t> serial_a, serial_b, a, b;
  work(Format::BF16, serial_a);
  work(Format::F64, serial_b);
  std::thread ta(work, Format::BF16, std::ref(a));
  std::thread tb(work, Format::F64, std::ref(b));
  ta.join();
  tb.join();
  EXPECT_EQ(a, serial_a);
  EXPECT_EQ(b, serial_b);
}

} // namespace
} // namespace halfway::num
