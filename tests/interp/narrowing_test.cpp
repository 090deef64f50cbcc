// The single-rounding model and shadow records, against MPFR and plain double arithmetic.
#include "examples.hpp"
#include "halfway/ir/narrowing.hpp"
#include "helpers.hpp"

#include <mpfr.h>

using namespace halfway;
using namespace halfway::interp;
using namespace halfway::interp::test;
using ir::ScalarType;

namespace {

// Exact sums of products in MPFR (exact for the f32 and f64 inputs used here).
class Exact {
public:
  Exact() {
    mpfr_init2(sum_, 2400);
    mpfr_init2(term_, 2400);
    mpfr_set_zero(sum_, 1);
  }
  ~Exact() {
    mpfr_clear(sum_);
    mpfr_clear(term_);
  }
  Exact& add(double a, double b = 1.0) {
    mpfr_set_d(term_, a, MPFR_RNDN);
    mpfr_mul_d(term_, term_, b, MPFR_RNDN);
    mpfr_add(sum_, sum_, term_, MPFR_RNDN);
    return *this;
  }
  // Rounded once to p bits, nearest-even (normal range).
  double round(int p) const {
    mpfr_t r;
    mpfr_init2(r, p);
    mpfr_set(r, sum_, MPFR_RNDN);
    double d = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clear(r);
    return d;
  }
  double hi() const { return mpfr_get_d(sum_, MPFR_RNDN); }
  double lo() const {
    mpfr_t r;
    mpfr_init2(r, 2400);
    mpfr_sub_d(r, sum_, hi(), MPFR_RNDN);
    double d = mpfr_get_d(r, MPFR_RNDN);
    mpfr_clear(r);
    return d;
  }

private:
  mpfr_t sum_, term_;
};

// Tie-stressing inputs for a*b + c (see examples_test.cpp).
struct Inputs {
  std::vector<float> a, b, c;
};
Inputs tie_stressing(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(0.5f, 4.0f);
  Inputs in{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
  for (size_t i = 0; i < n; ++i) {
    in.a[i] = d(rng);
    in.b[i] = (rng() & 1 ? -1 : 1) * d(rng);
    float p = in.a[i] * in.b[i];
    float h = widen16(round16(p));
    float ulp = std::ldexp(1.0f, std::ilogb(h) - 10);
    in.c[i] = h + (rng() & 1 ? ulp : -ulp) / 2 - p;
  }
  return in;
}

std::vector<uint16_t> run_narrow(const Inputs& in, const Options& o, Stats* stats = nullptr) {
  auto a = buffer(ScalarType::F32, in.a), b = buffer(ScalarType::F32, in.b),
       c = buffer(ScalarType::F32, in.c);
  rt::HostBuffer out(ScalarType::F16, in.a.size());
  Stats s = launch(examples::narrow_f16(), in.a.size(),
                   {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(c), rt::Arg::of(out)}, o);
  if (stats)
    *stats = std::move(s);
  return contents<uint16_t>(out);
}

TEST(Narrowing, SingleRoundingRoundsTheExactValueOnce) {
  const Inputs in = tie_stressing(20000, 12);
  Options single;
  single.narrowing = NarrowingModel::SingleRounding;
  std::vector<uint16_t> two = run_narrow(in, {}), one = run_narrow(in, single);
  size_t differ = 0, wrong = 0, outside = 0;
  for (size_t i = 0; i < two.size(); ++i) {
    const double p = static_cast<double>(in.a[i]) * in.b[i];
    const uint16_t want =
        round16(static_cast<float>(Exact().add(in.a[i], in.b[i]).add(in.c[i]).round(11)));
    wrong += one[i] != want;
    differ += one[i] != two[i];
    // Within 1 f16 ulp + |a*b| * 2^-24 of the strict two-step result.
    const double gap = std::fabs(static_cast<double>(widen16(one[i])) - widen16(two[i]));
    const double ulp = std::ldexp(1.0, std::ilogb(widen16(two[i])) - 10);
    outside += gap > ulp + std::fabs(p) * 0x1p-24;
  }
  EXPECT_EQ(wrong, 0u) << "single rounding must equal MPFR's one rounding of a*b+c";
  EXPECT_GT(differ, two.size() / 4)
      << "tie-stressing inputs: the models differ about half the time";
  EXPECT_EQ(outside, 0u);
}

TEST(Narrowing, SitesWithoutBarrierAreTheSameInBothModels) {
  auto k = kernel("exact_sites", {64}, {"h", "x", "out"}, [](In<f16> h, In<float> x, Out<f16> out) {
    Var i(global_id(0), "i");
    out[i * 2u] = narrow<f16>(to_f32(h[i]) * to_f32(h[i + 1u])); // Figueroa: no barrier
    out[i * 2u + 1u] = narrow<f16>(x[i]);                        // not rounded: no barrier
  });
  const auto sites = ir::narrowing_sites(k.kernel());
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_FALSE(sites[0].needs_barrier());
  EXPECT_FALSE(sites[1].needs_barrier());
  std::mt19937 rng(13);
  std::vector<uint16_t> h(4097);
  for (uint16_t& v : h)
    v = static_cast<uint16_t>(rng() & 0x7bff);
  std::vector<float> x = random_floats(rng, 4096);
  std::vector<std::vector<uint16_t>> results;
  for (NarrowingModel m : {NarrowingModel::TwoStep, NarrowingModel::SingleRounding}) {
    auto bh = buffer(ScalarType::F16, h), bx = buffer(ScalarType::F32, x);
    rt::HostBuffer out(ScalarType::F16, 8192);
    Options o;
    o.narrowing = m;
    launch(k, 4096, {rt::Arg::of(bh), rt::Arg::of(bx), rt::Arg::of(out)}, o);
    results.push_back(contents<uint16_t>(out));
  }
  EXPECT_EQ(results[0], results[1]);
  for (size_t i = 0; i < 4096; ++i) {
    float p = widen16(h[i]) * widen16(h[i + 1]);
    EXPECT_EQ(results[0][2 * i], round16(p)) << i;
  }
}

TEST(Narrowing, ShadowRecordsOfAStore) {
  const Inputs in = tie_stressing(1000, 14);
  Options o;
  o.shadow = true;
  Stats stats;
  std::vector<uint16_t> out = run_narrow(in, o, &stats);
  const auto k = examples::narrow_f16();
  const auto sites = ir::narrowing_sites(k.kernel());
  ASSERT_EQ(sites.size(), 1u);
  ASSERT_EQ(stats.shadow.size(), in.a.size()) << "one record per lane in bounds";
  for (size_t i = 0; i < in.a.size(); ++i) {
    const ShadowRecord& r = stats.shadow[i];
    EXPECT_EQ(r.site, sites[0].convert);
    EXPECT_EQ(r.global_lane, i);
    EXPECT_EQ(r.workgroup, i / 64);
    EXPECT_EQ(r.lane, i % 64);
    ASSERT_TRUE(r.destination.has_value());
    EXPECT_EQ(r.destination->space, ir::Space::Buffer);
    EXPECT_EQ(r.destination->memory, 3u) << "out16 is parameter 3";
    EXPECT_EQ(r.destination->index, i);
    const float p = in.a[i] * in.b[i];
    const float s = p + in.c[i];
    EXPECT_EQ(r.source_bits, bits(s));
    EXPECT_EQ(r.result_bits, out[i]);
    // The exact a*b + c: the product is exact in double, TwoSum makes the sum a double-double.
    const double exact_p = static_cast<double>(in.a[i]) * in.b[i];
    const double hi = exact_p + in.c[i];
    const double bb = hi - exact_p;
    const double lo = (exact_p - (hi - bb)) + (in.c[i] - bb);
    EXPECT_EQ(r.exact_hi, hi);
    EXPECT_EQ(r.exact_lo, lo);
    EXPECT_EQ(r.product_sum, std::fabs(exact_p));
  }
}

TEST(Narrowing, ShadowIsTheSameInParallelAndDeterministicRuns) {
  const Inputs in = tie_stressing(64 * 100 + 5, 15);
  Stats a, b;
  Options det, par;
  det.shadow = par.shadow = true;
  det.deterministic = true;
  par.threads = 4;
  par.narrowing = det.narrowing = NarrowingModel::SingleRounding;
  EXPECT_EQ(run_narrow(in, det, &a), run_narrow(in, par, &b));
  ASSERT_EQ(a.shadow.size(), b.shadow.size());
  for (size_t i = 0; i < a.shadow.size(); ++i) {
    EXPECT_EQ(a.shadow[i].global_lane, b.shadow[i].global_lane);
    EXPECT_EQ(a.shadow[i].result_bits, b.shadow[i].result_bits);
    EXPECT_EQ(a.shadow[i].exact_hi, b.shadow[i].exact_hi);
  }
}

// Three products and a local: the MPFR path, and a site without a destination.
TEST(Narrowing, LongerChainsAndLocals) {
  auto k = kernel("chain", {64}, {"a", "b", "c", "out"},
                  [](In<float> a, In<float> b, In<float> c, Out<float> out) {
                    Var i(global_id(0), "i");
                    If(i < a.size(), [&] {
                      Var h(narrow<f16>(a[i] * b[i] - c[i] * a[i] + b[i] * c[i]), "h");
                      out[i] = to_f32(h);
                    });
                  });
  const auto sites = ir::narrowing_sites(k.kernel());
  ASSERT_EQ(sites.size(), 1u);
  ASSERT_TRUE(sites[0].needs_barrier());
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> d(-3, 3);
  const size_t n = 3000;
  std::vector<float> a(n), b(n), c(n);
  for (size_t i = 0; i < n; ++i)
    a[i] = d(rng), b[i] = d(rng), c[i] = d(rng);
  a[0] = 0;
  b[1] = c[1] = 0; // an exact zero sum
  auto ba = buffer(ScalarType::F32, a), bb = buffer(ScalarType::F32, b),
       bc = buffer(ScalarType::F32, c);
  rt::HostBuffer out(ScalarType::F32, n);
  Options o;
  o.shadow = true;
  o.narrowing = NarrowingModel::SingleRounding;
  Stats stats =
      launch(k, n, {rt::Arg::of(ba), rt::Arg::of(bb), rt::Arg::of(bc), rt::Arg::of(out)}, o);
  auto got = contents<float>(out);
  ASSERT_EQ(stats.shadow.size(), n);
  for (size_t i = 0; i < n; ++i) {
    Exact e;
    e.add(a[i], b[i]).add(-static_cast<double>(c[i]), a[i]).add(b[i], c[i]);
    const ShadowRecord& r = stats.shadow[i];
    EXPECT_FALSE(r.destination.has_value());
    EXPECT_EQ(r.exact_hi, e.hi()) << i;
    EXPECT_EQ(r.exact_lo, e.lo()) << i;
    EXPECT_EQ(r.product_sum, std::fabs(static_cast<double>(a[i]) * b[i]) +
                                 std::fabs(static_cast<double>(c[i]) * a[i]) +
                                 std::fabs(static_cast<double>(b[i]) * c[i]))
        << i;
    const double once = e.round(11);
    if (std::fabs(once) >= 0x1p-14) { // normal f16 range: MPFR's 11-bit rounding is f16's
      EXPECT_EQ(bits(got[i]), bits(static_cast<float>(once))) << i;
    }
    EXPECT_EQ(r.result_bits, round16(got[i]));
  }
}

// An f64 -> f32 site: the exact x*w + b is rounded once to f32.
TEST(Narrowing, F64ToF32SingleRounding) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> d(-2, 2);
  const size_t n = 5000;
  std::vector<float> x(n);
  std::vector<double> w(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(d(rng));
    w[i] = d(rng);
  }
  const float b = 0.1f;
  auto bx = buffer(ScalarType::F32, x), bw = buffer(ScalarType::F64, w);
  rt::HostBuffer y(ScalarType::F32, n);
  Options o;
  o.narrowing = NarrowingModel::SingleRounding;
  launch(examples::linear<double>(), n,
         {rt::Arg::of(bx), rt::Arg::of(bw), rt::Arg::of(y), rt::Arg::f32(b)}, o);
  auto got = contents<float>(y);
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i)
    wrong += bits(got[i]) != bits(static_cast<float>(Exact().add(x[i], w[i]).add(b).round(24)));
  EXPECT_EQ(wrong, 0u);
}

} // namespace
