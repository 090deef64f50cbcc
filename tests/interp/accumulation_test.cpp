// Accumulation records (shadow.hpp, AccumulationRecord): the term count and sum of |terms| the
// interpreter keeps for relaxed accumulation, checked against independent computations.
#include "gemv_fp8_rows.hpp"
#include "halfway/text/parse.hpp"
#include "helpers.hpp"

#include <algorithm>
#include <cmath>

namespace halfway {
namespace {

using interp::test::buffer;
using ir::ScalarType;

// E4M3 decoded by hand: sign, 4 exponent bits (bias 7), 3 mantissa bits; 0x7f/0xff are NaN.
double decode_e4m3(uint8_t v) {
  const int e = (v >> 3) & 15, m = v & 7;
  double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  if ((v & 0x7f) == 0x7f)
    mag = NAN;
  return v & 0x80 ? -mag : mag;
}

struct Gemv {
  uint32_t rows = 150, cols = 64;
  std::vector<uint32_t> w;
  std::vector<float> x;
  explicit Gemv(uint32_t seed) {
    std::mt19937 rng(seed);
    w.resize(rows * cols / 4);
    for (uint32_t& v : w) {
      v = static_cast<uint32_t>(rng());
      for (int b = 0; b < 4; ++b) // no NaN weights
        if (((v >> (8 * b)) & 0x7f) == 0x7f)
          v &= ~(uint32_t{1} << (8 * b));
    }
    std::uniform_real_distribution<float> d(-2, 2);
    x.resize(cols);
    for (float& v : x)
      v = d(rng);
  }
  // Sum |w[r][k] * x[k]| in long double (64-bit significand; each product is exact in it).
  long double abs_sum(uint32_t r) const {
    long double s = 0;
    for (uint32_t k = 0; k < cols; ++k) {
      const auto byte = static_cast<uint8_t>(w[r * cols / 4 + k / 4] >> (8 * (k % 4)));
      s += std::fabs(static_cast<long double>(decode_e4m3(byte)) * x[k]);
    }
    return s;
  }
};

TEST(Accumulation, GemvRecordsTermCountAndAbsSum) {
  const Gemv g(11);
  const ir::VerifiedKernel k = examples::gemv_fp8_rows<e4m3>();
  for (bool deterministic : {true, false}) {
    auto bw = buffer(ScalarType::U32, g.w), bx = buffer(ScalarType::F32, g.x);
    rt::HostBuffer y(ScalarType::F32, g.rows);
    interp::Options o;
    o.shadow = true;
    o.deterministic = deterministic;
    o.threads = 2;
    const interp::Stats s = interp::test::launch(
        k, g.rows, {rt::Arg::of(bw), rt::Arg::of(bx), rt::Arg::of(y), rt::Arg::u32(g.cols)}, o);
    ASSERT_EQ(s.accumulations.size(), g.rows);
    std::vector<bool> seen(g.rows);
    for (const interp::AccumulationRecord& r : s.accumulations) {
      ASSERT_EQ(r.destination.space, ir::Space::Buffer);
      EXPECT_EQ(r.destination.memory, 2u); // y
      ASSERT_LT(r.destination.index, g.rows);
      EXPECT_EQ(r.global_lane, r.destination.index); // one lane per row
      seen[r.destination.index] = true;
      EXPECT_EQ(k->locals[r.local].name, "acc");
      EXPECT_EQ(r.type, ScalarType::F32);
      ASSERT_TRUE(r.bounded);
      EXPECT_EQ(r.steps, g.cols);
      EXPECT_EQ(r.terms, g.cols + 1); // the initial 0.0f counts as a term
      EXPECT_EQ(r.depth, 1u);
      const long double want = g.abs_sum(static_cast<uint32_t>(r.destination.index));
      EXPECT_NEAR(static_cast<double>(r.abs_sum), static_cast<double>(want),
                  static_cast<double>(want) * 1e-14);
      EXPECT_GE(static_cast<long double>(r.upper_abs_sum()), want);
      EXPECT_LE(r.upper_abs_sum(), r.abs_sum * (1 + 1e-12));
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), true), g.rows);
  }
}

TEST(Accumulation, NoRecordsWithoutShadow) {
  const Gemv g(12);
  auto bw = buffer(ScalarType::U32, g.w), bx = buffer(ScalarType::F32, g.x);
  rt::HostBuffer y(ScalarType::F32, g.rows);
  const interp::Stats s = interp::test::launch(
      examples::gemv_fp8_rows<e4m3>(), g.rows,
      {rt::Arg::of(bw), rt::Arg::of(bx), rt::Arg::of(y), rt::Arg::u32(g.cols)});
  EXPECT_TRUE(s.accumulations.empty());
}

// A non-trivial initial value, a subtracted product of three factors, a narrowing store, an
// overwritten element and a sum defined from another accumulation.
TEST(Accumulation, ShapesClearsAndTaint) {
  const ir::VerifiedKernel k =
      kernel("acc_cases", {32}, {"x", "y", "z", "h"},
             [](In<float> x, Out<float> y, Out<float> z, Out<f16> h) {
               Var i(global_id(0), "i");
               If(i < y.size(), [&] {
                 Var acc(x[i], "acc");
                 For(0, 8, [&](Value<int32_t> j) { acc = acc - x[j] * x[j] * 0.5f; });
                 y[i] = acc;
                 h[i] = narrow<f16>(acc);
                 z[i] = acc;
                 z[i] = x[i]; // overwrites the accumulation's value
                 Var other(acc * 2.0f, "other");
                 For(0, 2, [&](Value<int32_t> j) { other = other + x[j]; });
                 y[i] = other; // defined from an accumulation: unbounded
               });
             });
  std::vector<float> xs(40);
  for (size_t n = 0; n < xs.size(); ++n)
    xs[n] = 0.25f * static_cast<float>(n) - 3;
  auto bx = buffer(ScalarType::F32, xs);
  rt::HostBuffer y(ScalarType::F32, 40), z(ScalarType::F32, 40), h(ScalarType::F16, 40);
  interp::Options o;
  o.shadow = true;
  o.deterministic = true;
  const interp::Stats s = interp::test::launch(
      k, 40, {rt::Arg::of(bx), rt::Arg::of(y), rt::Arg::of(z), rt::Arg::of(h)}, o);
  // Per element, the last record of each buffer.
  std::map<std::pair<uint32_t, uint64_t>, interp::AccumulationRecord> last;
  for (const interp::AccumulationRecord& r : s.accumulations)
    last[std::make_pair(r.destination.memory, r.destination.index)] = r;
  ASSERT_EQ(last.size(), 3u * 40);
  for (uint64_t i = 0; i < 40; ++i) {
    EXPECT_FALSE(last[std::make_pair(1u, i)].bounded) << i; // y: `other`
    EXPECT_EQ(k->locals[last[std::make_pair(1u, i)].local].name, "other");
    EXPECT_FALSE(last[std::make_pair(2u, i)].bounded) << i; // z: overwritten
    EXPECT_EQ(last[std::make_pair(2u, i)].local, ir::kNone);
    const interp::AccumulationRecord& r = last[std::make_pair(3u, i)]; // h = narrow(acc)
    ASSERT_TRUE(r.bounded) << i;
    EXPECT_EQ(r.steps, 8u);
    EXPECT_EQ(r.terms, 9u);
    EXPECT_EQ(r.depth, 2u);
    double want = std::fabs(xs[i]);
    for (int j = 0; j < 8; ++j)
      want += double(xs[j]) * xs[j] * 0.5;
    EXPECT_DOUBLE_EQ(r.abs_sum, want);
  }
}

// The underflow weight (shadow.hpp): s = s + x * 2^-21 * -1409 in f16, two steps. For x = 1 the
// inner product (4.8e-7) may be subnormal and the outer one scales its error by 1409: 1409 per
// step. For x = 1000 both products are normal (0.00048 and 0.67): no weight. For x = 0 the inner
// product is an exact zero: none either.
TEST(Accumulation, UnderflowWeightCountsSubnormalProductsAndWhatScalesThem) {
  const ir::VerifiedKernel k = text::parse_verified(R"(
kernel tiny_products workgroup(1, 1, 1) {
  param x: buffer<f16, read>;
  param y: buffer<f16, write>;
  let s: f16 = 0.0:f16;
  for j: u32 = 0:u32 to 2:u32 step 1:u32 {
    s = add(s, mul(mul(x[0:u32], 4.7683716e-07:f16), -1409.0:f16));
  }
  y[0:u32] = s;
})",
                                                    "tiny_products.hk")[0];
  for (const auto& [x_bits, want] : {std::pair<uint16_t, double>{0x3c00, 2 * 1409.0},
                                     {0x63d0, 0.0}, // 1000
                                     {0x0000, 0.0}}) {
    rt::HostBuffer x(ScalarType::F16, 1), y(ScalarType::F16, 1);
    x.set_bits(0, x_bits);
    interp::Options o;
    o.shadow = true;
    const interp::Stats s = interp::test::launch(k, 1, {rt::Arg::of(x), rt::Arg::of(y)}, o);
    ASSERT_EQ(s.accumulations.size(), 1u);
    const interp::AccumulationRecord& r = s.accumulations[0];
    ASSERT_TRUE(r.bounded);
    EXPECT_EQ(r.terms, 3u);
    EXPECT_EQ(r.depth, 2u);
    EXPECT_DOUBLE_EQ(r.underflow_weight, want) << x_bits;
    EXPECT_GE(r.upper_underflow_weight(), want);
  }
}

} // namespace
} // namespace halfway
