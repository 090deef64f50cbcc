// Basic arithmetic against MPFR: random samples, tie-stressing constructions, exhaustive where
// the input space is small (f16/bf16 sqrt, fp8 binary operations).
#include "boundaries.hpp"
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/ulp.hpp"
#include "mpfr_ref.hpp"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <vector>

namespace halfway::num {
namespace {

using test::hex;
using test::Mp;

enum class Op { Add, Sub, Mul, Div, Sqrt, Fma };
const char* op_name(Op op) {
  constexpr const char* names[] = {"add", "sub", "mul", "div", "sqrt", "fma"};
  return names[static_cast<int>(op)];
}

uint64_t run(Op op, Format f, uint64_t a, uint64_t b, uint64_t c, Fp8Overflow ov) {
  switch (op) {
  case Op::Add:
    return add(f, a, b, ov);
  case Op::Sub:
    return sub(f, a, b, ov);
  case Op::Mul:
    return mul(f, a, b, ov);
  case Op::Div:
    return div(f, a, b, ov);
  case Op::Sqrt:
    return sqrt(f, a);
  case Op::Fma:
    return fma(f, a, b, c, ov);
  }
  return 0;
}

// MPFR's correctly rounded result (NaNs of invalid operations are the positive canonical NaN, as
// arith.hpp promises; E4M3 overflow NaNs carry the sign of the value).
uint64_t reference(Op op, Format f, uint64_t a, uint64_t b, uint64_t c, Fp8Overflow ov) {
  thread_local Mp x(64), y(64), z(64);
  test::set_exact(x, f, a);
  test::set_exact(y, f, b);
  test::set_exact(z, f, c);
  return test::eval_ref(
      f, Rounding::NearestEven,
      [&](mpfr_ptr out, mpfr_rnd_t rnd) {
        switch (op) {
        case Op::Add:
          return mpfr_add(out, x, y, rnd);
        case Op::Sub:
          return mpfr_sub(out, x, y, rnd);
        case Op::Mul:
          return mpfr_mul(out, x, y, rnd);
        case Op::Div:
          return mpfr_div(out, x, y, rnd);
        case Op::Sqrt:
          return mpfr_sqrt(out, x, rnd);
        case Op::Fma:
          return mpfr_fma(out, x, y, z, rnd);
        }
        return 0;
      },
      ov);
}

struct Case {
  uint64_t a, b, c;
};

void expect_op(Op op, Format f, const std::vector<Case>& cases, Fp8Overflow ov = Fp8Overflow::Nan) {
  int failures = 0;
  for (const Case& k : cases) {
    const uint64_t want = reference(op, f, k.a, k.b, k.c, ov);
    const uint64_t got = run(op, f, k.a, k.b, k.c, ov);
    if (got != want && ++failures <= 10) {
      ADD_FAILURE() << format_name(f) << " " << op_name(op) << "(" << hex(k.a) << ", " << hex(k.b)
                    << ", " << hex(k.c) << "): want " << hex(want) << " got " << hex(got);
    }
  }
  EXPECT_EQ(failures, 0) << format_name(f) << " " << op_name(op) << " of " << cases.size();
}

std::vector<Case> random_cases(Format f, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const FormatInfo& i = info(f);
  std::vector<Case> cases(n);
  for (auto& k : cases) {
    k.a = test::random_pattern(rng, f, i.emin - 3, i.emax);
    k.b = test::random_pattern(rng, f, i.emin - 3, i.emax);
    k.c = test::random_pattern(rng, f, i.emin - 3, i.emax);
  }
  return cases;
}

TEST(Arith, SqrtAllF16AndBF16Patterns) {
  for (Format f : {Format::F16, Format::BF16}) {
    std::vector<Case> cases;
    for (uint64_t b = 0; b < 0x10000; ++b)
      cases.push_back({b, 0, 0});
    expect_op(Op::Sqrt, f, cases);
  }
}

TEST(Arith, RandomF16AndBF16) {
  for (Format f : {Format::F16, Format::BF16}) {
    const auto cases = random_cases(f, 1'000'000, 31 + static_cast<int>(f));
    for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Fma})
      expect_op(op, f, cases);
  }
}

// Products of every pattern with short significands (1 + 2^-k, 1.5, 1.75 ...) scaled into the
// normal, subnormal and overflow ranges: exact ties of the product are common.
TEST(Arith, MultiplicationTies) {
  for (Format f : {Format::F16, Format::BF16}) {
    const FormatInfo& i = info(f);
    std::vector<double> factors;
    for (int k = 1; k <= i.man_bits; ++k)
      factors.push_back(1.0 + std::ldexp(1.0, -k));
    factors.push_back(1.75);
    factors.push_back(1.375);
    std::vector<Case> cases;
    for (double m : factors) {
      for (int scale : {0, i.emin, i.emax - 1, -i.man_bits}) {
        const uint64_t b = from_double(f, std::ldexp(m, scale));
        for (uint64_t a = 0; a < 0x10000; a += 1)
          cases.push_back({a, b, 0});
      }
    }
    expect_op(Op::Mul, f, cases);
  }
}

// a + b with |b| at half an ulp of a, and its neighbours: sums at and around ties.
TEST(Arith, AdditionTies) {
  for (Format f : {Format::F16, Format::BF16}) {
    std::vector<Case> cases;
    for (uint64_t a = 0; a < 0x10000; ++a) {
      if (!is_finite(f, a))
        continue;
      const uint64_t half = from_double(f, ulp_of(f, to_double(f, a)) / 2);
      for (int d = -1; d <= 1; ++d) {
        const uint64_t b = test::step(f, half, d);
        cases.push_back({a, b, 0});
        cases.push_back({a, neg(f, b), 0});
      }
    }
    expect_op(Op::Add, f, cases);
    expect_op(Op::Sub, f, cases);
  }
}

// a / b near a midpoint m of the format: a = round(m * b) and its neighbours. (Quotients of
// p-bit numbers are never exact ties, but these come within an ulp of one.)
TEST(Arith, DivisionNearTies) {
  for (Format f : {Format::F16, Format::BF16}) {
    std::mt19937_64 rng(43);
    const FormatInfo& i = info(f);
    std::vector<Case> cases;
    while (cases.size() < 300'000) {
      const uint64_t b = test::random_pattern(rng, f, -6, 6);
      const uint64_t v =
          test::random_pattern(rng, f, i.emin - i.man_bits, i.emax - 8) & ~i.sign_mask;
      if (!is_finite(f, b) || is_zero(f, b) || v >= i.max_finite)
        continue;
      const double mid = (to_double(f, v) + to_double(f, v + 1)) / 2;
      const uint64_t a0 = from_double(f, mid * to_double(f, b));
      for (int d = -1; d <= 1; ++d)
        cases.push_back({test::step(f, a0, d), b, 0});
    }
    expect_op(Op::Div, f, cases);
  }
}

// a * b + c with a * b within a few ulps of half an ulp of c: a single rounding and
// round(round32(a*b+c)) disagree here. The test also counts how often the naive method is wrong,
// to prove that the cases stress what they should.
TEST(Arith, FmaTiesF16AndBF16) {
  for (Format f : {Format::F16, Format::BF16}) {
    std::mt19937_64 rng(41);
    const FormatInfo& i = info(f);
    std::vector<Case> cases;
    while (cases.size() < 300'000) {
      const uint64_t a = test::random_pattern(rng, f, -4, 4) & ~i.sign_mask;
      const uint64_t c = test::random_pattern(rng, f, i.emin + 8, i.emax - 8);
      if (!is_finite(f, a) || !is_finite(f, c) || is_zero(f, a) || is_zero(f, c))
        continue;
      const double target = ulp_of(f, to_double(f, c)) / 2 / to_double(f, a);
      const uint64_t b0 = from_double(f, target);
      for (int d = -1; d <= 1; ++d) {
        const uint64_t b = test::step(f, b0, d);
        cases.push_back({a, rng() & 1 ? neg(f, b) : b, c});
      }
    }
    expect_op(Op::Fma, f, cases);
    int naive_wrong = 0;
    for (const Case& k : cases) {
      const float wide =
          std::fma(f32_from_bits(static_cast<uint32_t>(convert_bits(f, k.a, Format::F32))),
                   f32_from_bits(static_cast<uint32_t>(convert_bits(f, k.b, Format::F32))),
                   f32_from_bits(static_cast<uint32_t>(convert_bits(f, k.c, Format::F32))));
      naive_wrong += convert_bits(Format::F32, f32_bits(wide), f) != fma(f, k.a, k.b, k.c);
    }
    EXPECT_GT(naive_wrong, 1000) << format_name(f) << ": the cases do not stress double rounding";
  }
}

TEST(Arith, FmaF32AndF64) {
  expect_op(Op::Fma, Format::F32, random_cases(Format::F32, 1'000'000, 51));
  expect_op(Op::Fma, Format::F64, random_cases(Format::F64, 200'000, 52));
  // Near ties of f32: a * b about half an ulp of c. f32 fma through a double product and a
  // double sum is wrong on some of these; the exact fma is not.
  std::mt19937_64 rng(53);
  std::vector<Case> cases;
  int naive_wrong = 0;
  while (cases.size() < 300'000) {
    const float a = std::ldexp(1.0f + static_cast<float>(rng() % 8388608) * 0x1p-23f,
                               -3 + static_cast<int>(rng() % 7));
    const float c = std::ldexp(1.0f + static_cast<float>(rng() % 8388608) * 0x1p-23f,
                               -40 + static_cast<int>(rng() % 80));
    const uint32_t b0 = f32_bits(static_cast<float>(ulp_of(Format::F32, c) / 2 / a));
    for (int d = -2; d <= 2; ++d) {
      const float b = f32_from_bits(static_cast<uint32_t>(test::step(Format::F32, b0, d)));
      const float sb = rng() & 1 ? -b : b;
      cases.push_back({f32_bits(a), f32_bits(sb), f32_bits(c)});
      const double naive = static_cast<double>(a) * sb + c;
      naive_wrong += static_cast<float>(naive) != f32_fma(a, sb, c);
    }
  }
  expect_op(Op::Fma, Format::F32, cases);
  EXPECT_GT(naive_wrong, 100);
}

TEST(Arith, Fp8AllPairs) {
  for (Format f : {Format::E4M3, Format::E5M2}) {
    std::vector<Case> cases;
    for (uint64_t a = 0; a < 256; ++a) {
      for (uint64_t b = 0; b < 256; ++b)
        cases.push_back({a, b, 0});
    }
    for (Fp8Overflow ov : {Fp8Overflow::Nan, Fp8Overflow::Saturate}) {
      for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div})
        expect_op(op, f, cases, ov);
    }
    std::vector<Case> sq;
    for (uint64_t a = 0; a < 256; ++a)
      sq.push_back({a, 0, 0});
    expect_op(Op::Sqrt, f, sq);
    expect_op(Op::Fma, f, random_cases(f, 300'000, 61));
  }
}

TEST(Arith, NanResultsAreCanonicalAndPositive) {
  const uint64_t inf = 0x7c00, ninf = 0xfc00;
  EXPECT_EQ(add(Format::F16, inf, ninf), 0x7e00u);
  EXPECT_EQ(mul(Format::F16, 0, inf), 0x7e00u);
  EXPECT_EQ(sqrt(Format::F16, 0xbc00), 0x7e00u);
  EXPECT_EQ(add(Format::F16, 0xfd01, 0x3c00), 0x7e00u);
  EXPECT_EQ(add(Format::F32, 0x7f800000, 0xff800000), 0x7fc00000u);
  EXPECT_EQ(fma(Format::F64, f64_bits(INFINITY), 0, f64_bits(1.0)), 0x7ff8000000000000u);
  EXPECT_EQ(fma(Format::BF16, 0x7f80, 0x0000, 0x3f80), 0x7fc0u);
  EXPECT_EQ(div(Format::E4M3, 0x00, 0x00), 0x7fu);
  EXPECT_EQ(mul(Format::E4M3, 0x7e, 0x40), 0x7fu); // 448 * 2 overflows to NaN
  EXPECT_EQ(mul(Format::E4M3, 0x7e, 0x40, Fp8Overflow::Saturate), 0x7eu);
  // Signed zeros.
  EXPECT_EQ(add(Format::F16, 0x8000, 0x8000), 0x8000u);
  EXPECT_EQ(add(Format::F16, 0x3c00, 0xbc00), 0x0000u);
  EXPECT_EQ(fma(Format::F16, 0x8000, 0x3c00, 0x0000), 0x0000u);
  EXPECT_EQ(fma(Format::F16, 0x8000, 0x3c00, 0x8000), 0x8000u);
  EXPECT_EQ(fma(Format::F16, 0x3c00, 0x3c00, 0xbc00), 0x0000u);
}

// min, max, floor, ceil, fract on every f16 and bf16 pattern, and on random f32/f64 and fp8.
uint64_t min_max_ref(Format f, uint64_t a, uint64_t b, bool want_max) {
  if (is_nan(f, a) && is_nan(f, b))
    return quiet_nan(f);
  if (is_nan(f, a))
    return b;
  if (is_nan(f, b))
    return a;
  Mp x(64), y(64);
  test::set_exact(x, f, a);
  test::set_exact(y, f, b);
  int cmp = mpfr_cmp(x, y);
  if (cmp == 0)
    cmp = static_cast<int>(!sign_bit(f, a)) - static_cast<int>(!sign_bit(f, b));
  if (want_max)
    return cmp >= 0 ? a : b;
  return cmp <= 0 ? a : b;
}

uint64_t rounding_ref(Format f, uint64_t a, int which) {
  thread_local Mp x(64), fl(2200), d(2200);
  test::set_exact(x, f, a);
  if (mpfr_nan_p(x))
    return quiet_nan(f);
  if (which == 0)
    mpfr_floor(fl, x);
  if (which == 1)
    mpfr_ceil(fl, x);
  if (which < 2)
    return test::round_ref(f, fl, Rounding::NearestEven);
  if (mpfr_inf_p(x))
    return quiet_nan(f);
  mpfr_floor(fl, x);
  mpfr_sub(d, x, fl, MPFR_RNDN); // exact at 2200 bits
  uint64_t r = test::round_ref(f, d, Rounding::NearestEven);
  const uint64_t one = static_cast<uint64_t>(info(f).bias) << info(f).man_bits;
  return r == one ? one - 1 : r;
}

void expect_unary_ops(Format f, const std::vector<uint64_t>& patterns) {
  int failures = 0;
  for (uint64_t a : patterns) {
    const uint64_t want[] = {rounding_ref(f, a, 0), rounding_ref(f, a, 1), rounding_ref(f, a, 2)};
    const uint64_t got[] = {floor(f, a), ceil(f, a), fract(f, a)};
    for (int k = 0; k < 3; ++k) {
      if (got[k] != want[k] && ++failures <= 10) {
        ADD_FAILURE() << format_name(f) << " "
                      << (k == 0   ? "floor"
                          : k == 1 ? "ceil"
                                   : "fract")
                      << "(" << hex(a) << "): want " << hex(want[k]) << " got " << hex(got[k]);
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(Arith, FloorCeilFract) {
  for (Format f : {Format::F16, Format::BF16}) {
    std::vector<uint64_t> all(0x10000);
    for (uint64_t b = 0; b < all.size(); ++b)
      all[b] = b;
    expect_unary_ops(f, all);
  }
  for (Format f : {Format::E4M3, Format::E5M2}) {
    std::vector<uint64_t> all(256);
    for (uint64_t b = 0; b < all.size(); ++b)
      all[b] = b;
    expect_unary_ops(f, all);
  }
  std::mt19937_64 rng(71);
  for (Format f : {Format::F32, Format::F64}) {
    std::vector<uint64_t> some(100'000);
    for (auto& b : some)
      b = test::random_pattern(rng, f, info(f).emin, info(f).man_bits + 2);
    some.push_back(f == Format::F32 ? 0x80000001 : 0x8000000000000001); // fract clamps below 1
    expect_unary_ops(f, some);
  }
  EXPECT_EQ(fract(Format::F16, 0x8001), 0x3bffu); // -2^-24: 1 - 2^-24 rounds to 1, clamped
  EXPECT_EQ(fract(Format::F16, 0x8000), 0x0000u);
  EXPECT_EQ(fract(Format::F16, 0x7c00), 0x7e00u);
  EXPECT_EQ(floor(Format::F16, 0xb800), 0xbc00u); // floor(-0.5) = -1
  EXPECT_EQ(ceil(Format::F16, 0xb800), 0x8000u);  // ceil(-0.5) = -0
}

TEST(Arith, MinMaxSignOps) {
  for (Format f : {Format::F16, Format::E4M3}) {
    std::mt19937_64 rng(81);
    const uint64_t mask = (uint64_t{1} << info(f).total_bits) - 1;
    for (int k = 0; k < 300'000; ++k) {
      const uint64_t a = rng() & mask, b = rng() & mask;
      ASSERT_EQ(min(f, a, b), min_max_ref(f, a, b, false)) << hex(a) << " " << hex(b);
      ASSERT_EQ(max(f, a, b), min_max_ref(f, a, b, true)) << hex(a) << " " << hex(b);
    }
  }
  EXPECT_EQ(min(Format::F16, 0x0000, 0x8000), 0x8000u);
  EXPECT_EQ(min(Format::F16, 0x8000, 0x0000), 0x8000u);
  EXPECT_EQ(max(Format::F16, 0x8000, 0x0000), 0x0000u);
  EXPECT_EQ(min(Format::F16, 0x7e00, 0x3c00), 0x3c00u);
  EXPECT_EQ(max(Format::F32, 0x3f800000, 0xffc00001), 0x3f800000u);
  EXPECT_EQ(min(Format::F16, 0x7e01, 0xfe00), 0x7e00u);
  EXPECT_EQ(abs(Format::F16, 0xfe01), 0x7e01u);
  EXPECT_EQ(neg(Format::BF16, 0x3f80), 0xbf80u);
  EXPECT_EQ(copysign(Format::E4M3, 0x7e, 0x80), 0xfeu);
  EXPECT_EQ(copysign(Format::F64, f64_bits(2.0), f64_bits(-0.0)), f64_bits(-2.0));
}

} // namespace
} // namespace halfway::num
