// The §4 interval, on real shadow records: the strict interpreter and the single-rounding model
// both lie inside it for every element (products, multiply-adds, chains, f16 and bf16), it is
// exactly {two-step, one rounding} for a product, and its error term is what the spec says.
#include "exact.hpp"
#include "examples.hpp"
#include "fast_bound.hpp"
#include "halfway/diff/bound.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/dsl.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/ulp.hpp"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <random>

using namespace halfway;
using namespace halfway::diff;
using ir::ScalarType;

namespace {

struct Outcome {
  rt::HostBuffer strict, model;
  std::vector<interp::ShadowRecord> records;
  std::vector<ir::NarrowingSite> sites;
  size_t different = 0, beyond_one_ulp = 0, checked = 0;
};

// Runs `k` (inputs a, b, c[, d] of f32, output out) in both models and checks every shadowed
// element of the output against its bound.
// The same double bit for bit, or two NaNs (the error-free paths against MPFR).
bool same_double(double x, double y) {
  return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y) ||
         (std::isnan(x) && std::isnan(y));
}

Outcome check_both_models(const ir::VerifiedKernel& k, std::vector<rt::HostBuffer*> inputs,
                          ScalarType out_type, size_t n, num::FloatControls controls = {}) {
  Outcome o{rt::HostBuffer(out_type, n), rt::HostBuffer(out_type, n), {}, {}, 0, 0, 0};
  auto args_for = [&](rt::HostBuffer& out) {
    std::vector<rt::Arg> args;
    for (rt::HostBuffer* b : inputs)
      args.push_back(rt::Arg::of(*b));
    args.push_back(rt::Arg::of(out));
    return args;
  };
  const rt::Grid grid = rt::Grid::for_lanes(k.kernel(), n);
  interp::Options strict;
  strict.shadow = true;
  strict.controls = controls;
  o.records = interp::run(k, grid, args_for(o.strict), strict).shadow;
  interp::Options model;
  model.narrowing = interp::NarrowingModel::SingleRounding;
  model.controls = controls;
  interp::run(k, grid, args_for(o.model), model);
  o.sites = ir::narrowing_sites(k.kernel());
  const ir::NarrowingSite& site = o.sites.at(0);
  for (const interp::ShadowRecord& rec : o.records) {
    if (!rec.destination)
      continue;
    const uint64_t i = rec.destination->index;
    const uint64_t r = o.strict.get_bits(i), m = o.model.get_bits(i);
    EXPECT_EQ(rec.result_bits, r) << i;
    Bound b = single_rounding_bound(k.kernel(), site, rec, r, controls);
    EXPECT_TRUE(accepts(b, out_type, r, r, controls)) << i;
    EXPECT_TRUE(accepts(b, out_type, r, m, controls))
        << "element " << i << ": model " << format_value(out_type, m) << " outside "
        << describe(b, out_type) << ", reference " << format_value(out_type, r);
    const uint64_t d = distance(out_type, r, m, controls);
    o.different += !same_bits(out_type, r, m, controls);
    o.beyond_one_ulp += d > 1 && d != UINT64_MAX;
    ++o.checked;
  }
  return o;
}

ir::VerifiedKernel product_kernel(ScalarType target) {
  if (target == ScalarType::BF16)
    return kernel("product_bf16", {64}, {"a", "b", "out"},
                  [](In<float> a, In<float> b, Out<bf16> out) {
                    Var i(global_id(0), "i");
                    If(i < out.size(), [&] { out[i] = a[i] * b[i]; });
                  });
  return kernel("product_f16", {64}, {"a", "b", "out"}, [](In<float> a, In<float> b, Out<f16> out) {
    Var i(global_id(0), "i");
    If(i < out.size(), [&] { out[i] = a[i] * b[i]; });
  });
}

ir::VerifiedKernel mul_add_bf16() {
  return kernel("mul_add_bf16", {64}, {"a", "b", "c", "out"},
                [](In<float> a, In<float> b, In<float> c, Out<bf16> out) {
                  Var i(global_id(0), "i");
                  If(i < out.size(), [&] { out[i] = a[i] * b[i] + c[i]; });
                });
}

ir::VerifiedKernel two_products() {
  return kernel("two_products", {64}, {"a", "b", "c", "d", "out"},
                [](In<float> a, In<float> b, In<float> c, In<float> d, Out<f16> out) {
                  Var i(global_id(0), "i");
                  If(i < out.size(), [&] { out[i] = a[i] * b[i] + c[i] * d[i]; });
                });
}

TEST(Bound, NarrowF16BothModelsInsideOnTieStress) {
  const size_t n = 20000;
  inputs::MulAdd m = inputs::tie_stress(n, ScalarType::F16, 21);
  Outcome o = check_both_models(examples::narrow_f16(), {&m.a, &m.b, &m.c}, ScalarType::F16, n);
  EXPECT_EQ(o.checked, n);
  EXPECT_GT(o.different, n / 4) << "the model must differ from the strict result on ties";
  EXPECT_GT(o.beyond_one_ulp, 0u) << "cancellation cases exceed one ulp, inside the bound";
}

TEST(Bound, MulAddBf16BothModelsInside) {
  const size_t n = 10000;
  inputs::MulAdd m = inputs::tie_stress(n, ScalarType::BF16, 22);
  Outcome o = check_both_models(mul_add_bf16(), {&m.a, &m.b, &m.c}, ScalarType::BF16, n);
  EXPECT_GT(o.different, n / 4);
}

TEST(Bound, ProductIntervalIsTheTwoCandidates) {
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16}) {
    const size_t n = 5000;
    inputs::MulAdd m = inputs::product_ties(n, t, 23);
    auto k = product_kernel(t);
    Outcome o = check_both_models(k, {&m.a, &m.b}, t, n);
    EXPECT_GT(o.different, n / 3);
    EXPECT_EQ(o.beyond_one_ulp, 0u) << "a product differs by one ulp at most";
    const num::Format f = *float_format(t);
    for (const interp::ShadowRecord& rec : o.records) {
      const uint64_t i = rec.destination->index;
      Bound b = single_rounding_bound(k.kernel(), o.sites[0], rec, o.strict.get_bits(i), {});
      EXPECT_EQ(b.error, 0.0);
      const uint64_t r = o.strict.get_bits(i), s = o.model.get_bits(i);
      const bool r_low = num::to_double(f, r) <= num::to_double(f, s);
      ASSERT_EQ(b.lo, r_low ? r : s) << i;
      ASSERT_EQ(b.hi, r_low ? s : r) << i;
    }
  }
}

TEST(Bound, ChainOfTwoProducts) {
  const size_t n = 10000;
  rt::HostBuffer a(ScalarType::F32, n), b(ScalarType::F32, n), c(ScalarType::F32, n),
      d(ScalarType::F32, n);
  inputs::fill_random(a, 1, {-2, 2});
  inputs::fill_random(b, 2, {-2, 2});
  inputs::fill_random(c, 3, {-2, 2});
  inputs::fill_random(d, 4, {-2, 2});
  auto k = two_products();
  ASSERT_EQ(ir::narrowing_sites(k.kernel()).at(0).shape, ir::SiteShape::Chain);
  check_both_models(k, {&a, &b, &c, &d}, ScalarType::F16, n);
}

TEST(Bound, FlushingControlsFlushTheInterval) {
  // Results in f16's subnormal range: a device that flushes f16 gives zeros, the bound accepts
  // them because its ends are flushed too.
  const size_t n = 2000;
  inputs::MulAdd m = inputs::product_ties(n, ScalarType::F16, 24, {-22, -15});
  num::FloatControls flush;
  flush.flush_f16 = true;
  auto k = product_kernel(ScalarType::F16);
  Outcome o = check_both_models(k, {&m.a, &m.b}, ScalarType::F16, n, flush);
  EXPECT_EQ(o.checked, n);
}

TEST(Bound, ErrorTermPerShape) {
  auto k = examples::narrow_f16();
  ir::NarrowingSite site = ir::narrowing_sites(k.kernel()).at(0);
  interp::ShadowRecord rec;
  rec.site = site.convert;
  rec.exact_hi = 1.0;
  rec.product_sum = 1024.0;
  EXPECT_NEAR(skipped_error(k.kernel(), site, rec), 1024.0 * 0x1p-24, 1e-15);
  // Cancellation: |a*b| = 2^20 around a result near 1 allows 2^-4 more: 64 f16 ulps at 1.
  rec.product_sum = 0x1p20;
  EXPECT_NEAR(skipped_error(k.kernel(), site, rec) / num::ulp_of(num::Format::F16, 1.0), 64, 1e-9);
  Bound b = single_rounding_bound(k.kernel(), site, rec, 0x3c00, {});
  EXPECT_TRUE(accepts(b, ScalarType::F16, 0x3c00, 0x3c00 + 64, {}));
  EXPECT_FALSE(accepts(b, ScalarType::F16, 0x3c00, 0x3c00 + 66, {}));

  ir::NarrowingSite chain = site;
  chain.shape = ir::SiteShape::Chain; // one intermediate op (the mul): u * 1 * (2 * 2^20 + 1)
  EXPECT_NEAR(skipped_error(k.kernel(), chain, rec), 0x1p-24 * (2 * 0x1p20 + 1), 1e-6);
  ir::NarrowingSite product = site;
  product.shape = ir::SiteShape::Product;
  EXPECT_EQ(skipped_error(k.kernel(), product, rec), 0.0);
}

TEST(Bound, NonFiniteExactValues) {
  auto k = examples::narrow_f16();
  ir::NarrowingSite site = ir::narrowing_sites(k.kernel()).at(0);
  interp::ShadowRecord rec;
  rec.exact_hi = NAN;
  Bound b = single_rounding_bound(k.kernel(), site, rec, 0x7e00, {});
  EXPECT_TRUE(accepts(b, ScalarType::F16, 0x7e00, 0xfe01, {})) << "any NaN";
  EXPECT_FALSE(accepts(b, ScalarType::F16, 0x7e00, 0x3c00, {}));
  // The f32 product overflowed (reference NaN from inf - inf) but the exact value is -inf.
  rec.exact_hi = -INFINITY;
  b = single_rounding_bound(k.kernel(), site, rec, 0x7e00, {});
  EXPECT_TRUE(accepts(b, ScalarType::F16, 0x7e00, 0xfc00, {}));
  EXPECT_TRUE(accepts(b, ScalarType::F16, 0x7e00, 0x7e00, {}));
  EXPECT_FALSE(accepts(b, ScalarType::F16, 0x7e00, 0x7c00, {}));
  EXPECT_NE(describe(b, ScalarType::F16).find("-inf"), std::string::npos);
}

TEST(Bound, SignOfZeroInsideTheInterval) {
  auto k = product_kernel(ScalarType::F16);
  ir::NarrowingSite site = ir::narrowing_sites(k.kernel()).at(0);
  interp::ShadowRecord rec;
  rec.exact_hi = -0.0; // a -0 product; the fused form adds +0
  Bound b = single_rounding_bound(k.kernel(), site, rec, 0x8000, {});
  EXPECT_TRUE(accepts(b, ScalarType::F16, 0x8000, 0x0000, {}));
  EXPECT_FALSE(accepts(b, ScalarType::F16, 0x8000, 0x0001, {}));
  EXPECT_FALSE(accepts(Bound{}, ScalarType::F16, 0x8000, 0x0000, {})) << "bit-exact keeps signs";
}

} // namespace

// The bounds' exact sums take an error-free path (TwoSum, round to odd) and fall back to MPFR where
// it cannot decide: both must agree bit for bit on the sums the bounds make (an exact value as hi +
// lo, plus or minus E), on cancellations, on ties of the rounding and on arbitrary triples.
TEST(Bound, ErrorFreeSumMatchesMpfr) {
  std::mt19937_64 rng(12);
  auto random_double = [&](int lo_exp, int hi_exp) {
    std::uniform_int_distribution<int> e(lo_exp, hi_exp);
    const double m = 1 + std::ldexp(static_cast<double>(rng() >> 11), -53);
    return (rng() & 1 ? -1 : 1) * std::ldexp(m, e(rng));
  };
  auto ulp = [](double x) {
    return std::nextafter(std::fabs(x), 2 * std::fabs(x) + 1) - std::fabs(x);
  };
  int mismatches = 0, cases = 0;
  auto check = [&](double a, double b, double c) {
    ++cases;
    const double fast = diff::detail::sum_odd(a, b, c);
    const double slow = diff::detail::sum_odd_mpfr(a, b, c);
    if (!same_double(fast, slow) && ++mismatches <= 10)
      ADD_FAILURE() << std::hexfloat << a << " + " << b << " + " << c << ": " << fast << " vs "
                    << slow;
  };
  for (int k = 0; k < 200'000; ++k) {
    const double hi = random_double(-60, 60);
    const double lo = (rng() & 3) ? 0 : random_double(-60, 0) * ulp(hi) / 2 / 2;
    const double e = std::fabs(hi) * std::ldexp(1.0, -static_cast<int>(rng() % 40) - 10);
    check(hi, lo, e);
    check(hi, lo, -e);
    check(hi, lo, -hi);        // total cancellation: the remainder alone
    check(hi, ulp(hi) / 2, 0); // a tie of the rounding into a double
    check(hi, -ulp(hi) / 4, e);
    check(random_double(-1074, 1023), random_double(-1074, 1023), random_double(-1074, 1023));
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (double special :
       {0.0, -0.0, kInf, -kInf, std::numeric_limits<double>::quiet_NaN(), 0x1p-1074, 0x1p1023})
    for (double other : {1.0, -1.0, 0x1p-1022, 0x1.fffffffffffffp1023})
      check(special, other, -other);
  EXPECT_EQ(mismatches, 0) << "of " << cases;
}

// The site judge's inline verdict (fast_bound.hpp) against the generic bound, accepts and
// bound_ratio, on real records of tie-stressing multiply-adds (f16, bf16), two-product chains
// and products, for device values at the rounding models and up to 40 ulps either side: the same
// inside/outside and the same ratio, bit for bit, wherever the fast path answers, and it answers
// for nearly every element.
namespace {

struct VerdictCase {
  double hi, lo, error;
  uint32_t ref, device;
};

#if defined(__AVX2__) && defined(__F16C__)
// fast_verdict4 against fast_verdict on `cases` (f16 or bf16), four at a time, together with
// variants of them that leave the fast paths: NaN, infinite and out-of-range exact values,
// remainders too large for the error-free sum, tiny values, non-finite patterns, no error and a
// huge one.
void expect_four_like_one(num::Format f, std::vector<VerdictCase> cases) {
  const uint32_t inf = f == num::Format::F16 ? 0x7c00 : 0x7f80;
  const size_t n = cases.size();
  for (size_t x = 0; x < n; x += 7) {
    VerdictCase v = cases[x];
    for (double hi : {std::numeric_limits<double>::quiet_NaN(),
                      -std::numeric_limits<double>::infinity(), 1e300, -3e38, 1e-300, 0.0})
      cases.push_back({hi, v.lo, v.error, v.ref, v.device});
    for (double lo : {v.hi * 1e-10, -v.hi * 0x1p-60, 1e-320})
      cases.push_back({v.hi, lo, v.error, v.ref, v.device});
    for (double error : {0.0, 1e30, v.hi})
      cases.push_back({v.hi, v.lo, error, v.ref, v.device});
    cases.push_back({v.hi, v.lo, v.error, inf | 1, v.device});
    cases.push_back({v.hi, v.lo, v.error, v.ref, inf});
    cases.push_back({v.hi, v.lo, v.error, v.ref, v.device ^ 0x8000});
  }
  size_t decided_lanes = 0;
  for (size_t q = 0; q + 4 <= cases.size(); q += 4) {
    double hi[4], lo[4], error[4], ratio[4];
    uint32_t ref[4], device[4];
    for (size_t j = 0; j < 4; ++j) {
      hi[j] = cases[q + j].hi;
      lo[j] = cases[q + j].lo;
      error[j] = cases[q + j].error;
      ref[j] = cases[q + j].ref;
      device[j] = cases[q + j].device;
    }
    unsigned inside = 0;
    const unsigned decided = f == num::Format::F16 ? diff::detail::fast_verdict4<num::Format::F16>(
                                                         hi, lo, error, ref, device, inside, ratio)
                                                   : diff::detail::fast_verdict4<num::Format::BF16>(
                                                         hi, lo, error, ref, device, inside, ratio);
    for (size_t j = 0; j < 4; ++j) {
      const std::optional<diff::detail::FastVerdict> one =
          diff::detail::fast_verdict(f, hi[j], lo[j], error[j], ref[j], device[j]);
      ASSERT_EQ((decided >> j & 1) != 0, one.has_value())
          << hi[j] << " " << lo[j] << " " << error[j] << " " << ref[j] << " " << device[j];
      if (!one)
        continue;
      ++decided_lanes;
      ASSERT_EQ((inside >> j & 1) != 0, one->inside) << hi[j] << " " << device[j];
      ASSERT_EQ(std::bit_cast<uint64_t>(ratio[j]), std::bit_cast<uint64_t>(one->ratio))
          << hi[j] << " " << device[j];
    }
  }
  EXPECT_GT(decided_lanes, n / 2);
}
#endif

} // namespace

TEST(Bound, FastVerdictAgreesWithTheGenericBound) {
  const size_t n = 6000;
  struct Case {
    ir::VerifiedKernel k;
    ScalarType t;
    std::vector<rt::HostBuffer> in;
  };
  std::vector<Case> cases;
  {
    inputs::MulAdd m = inputs::tie_stress(n, ScalarType::F16, 31);
    cases.push_back({examples::narrow_f16(), ScalarType::F16, {}});
    cases.back().in.push_back(std::move(m.a));
    cases.back().in.push_back(std::move(m.b));
    cases.back().in.push_back(std::move(m.c));
  }
  {
    inputs::MulAdd m = inputs::tie_stress(n, ScalarType::BF16, 32);
    cases.push_back({mul_add_bf16(), ScalarType::BF16, {}});
    cases.back().in.push_back(std::move(m.a));
    cases.back().in.push_back(std::move(m.b));
    cases.back().in.push_back(std::move(m.c));
  }
  {
    inputs::MulAdd m = inputs::product_ties(n, ScalarType::F16, 33, {-22, -10}); // subnormals
    cases.push_back({product_kernel(ScalarType::F16), ScalarType::F16, {}});
    cases.back().in.push_back(std::move(m.a));
    cases.back().in.push_back(std::move(m.b));
  }
  {
    cases.push_back({two_products(), ScalarType::F16, {}});
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      cases.back().in.emplace_back(ScalarType::F32, n);
      inputs::fill_random(cases.back().in.back(), seed, {-8, 6});
    }
  }
  for (Case& c : cases) {
    std::vector<rt::HostBuffer*> inputs;
    for (rt::HostBuffer& b : c.in)
      inputs.push_back(&b);
    Outcome o = check_both_models(c.k, inputs, c.t, n);
    const ir::NarrowingSite& site = o.sites.at(0);
    const num::Format f = *float_format(c.t);
    const uint64_t sign = uint64_t{1} << 15;
    size_t answered = 0, asked = 0, outside = 0;
    std::vector<VerdictCase> tuples; // also four at a time (fast_verdict4), below
    for (const interp::ShadowRecord& rec : o.records) {
      const uint64_t r = rec.result_bits;
      std::vector<uint64_t> devices(rec.models.begin(), rec.models.end());
      for (uint64_t k : {1, 2, 3, 7, 40})
        for (uint64_t d : {r + k, r - k})
          if (((d ^ r) & sign) == 0) // the same sign: k patterns away
            devices.push_back(d & 0xffff);
      devices.push_back(r ^ sign); // the other sign (-0 against +0 among them)
      const double error = skipped_error(c.k.kernel(), site, rec);
      const Bound bound = single_rounding_bound(c.k.kernel(), site, rec, r, {});
      for (uint64_t d : devices) {
        if (same_bits(c.t, r, d, {}))
          continue;
        ++asked;
        tuples.push_back({rec.exact_hi, rec.exact_lo, error, static_cast<uint32_t>(r),
                          static_cast<uint32_t>(d)});
        const std::optional<diff::detail::FastVerdict> fast =
            diff::detail::fast_verdict(f, rec.exact_hi, rec.exact_lo, error, r, d);
        if (!fast)
          continue;
        ++answered;
        const bool inside = accepts(bound, c.t, r, d, {});
        outside += !inside;
        ASSERT_EQ(fast->inside, inside)
            << c.k.name() << " " << describe(bound, c.t) << " device " << format_value(c.t, d);
        const std::optional<double> ratio = bound_ratio(bound, f, r, d, {});
        ASSERT_TRUE(ratio.has_value()) << c.k.name();
        ASSERT_EQ(std::bit_cast<uint64_t>(fast->ratio), std::bit_cast<uint64_t>(*ratio))
            << c.k.name() << " " << describe(bound, c.t) << " device " << format_value(c.t, d);
      }
    }
    EXPECT_GT(answered, asked * 9 / 10) << c.k.name();
    EXPECT_GT(outside, 0u) << c.k.name() << ": no device value outside the bound was tried";
#if defined(__AVX2__) && defined(__F16C__)
    expect_four_like_one(f, std::move(tuples));
#endif
  }
}

// The generators' exact multiply-add and comparison (exact.hpp): the error-free paths agree with
// MPFR on f32 operands near f16 and bf16 ties, on cancellations, on general doubles and on
// special values.
TEST(Bound, ErrorFreeMulAddMatchesMpfr) {
  std::mt19937_64 rng(8);
  auto random_double = [&](int lo, int hi) {
    const double m = 1 + std::ldexp(static_cast<double>(rng() >> 12), -52);
    const int e = lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
    return std::ldexp((rng() & 1) ? -m : m, e);
  };
  auto random_float = [&](int lo, int hi) {
    return static_cast<double>(static_cast<float>(random_double(lo, hi)));
  };
  int mismatches = 0, cases = 0;
  auto check = [&](double a, double b, double c, double m) {
    ++cases;
    const double fast = diff::detail::mul_add_odd(a, b, c);
    const double slow = diff::detail::mul_add_odd_mpfr(a, b, c);
    if (!same_double(fast, slow) && ++mismatches <= 10)
      ADD_FAILURE() << std::hexfloat << a << " * " << b << " + " << c << ": " << fast << " vs "
                    << slow;
    if (std::isfinite(a) && std::isfinite(b) && std::isfinite(c) && std::isfinite(m) &&
        diff::detail::compare_mul_add(a, b, c, m) !=
            diff::detail::compare_mul_add_mpfr(a, b, c, m) &&
        ++mismatches <= 10)
      ADD_FAILURE() << std::hexfloat << a << " * " << b << " + " << c << " vs " << m;
  };
  for (int k = 0; k < 100'000; ++k) {
    const double a = random_float(-10, 10), b = random_float(-10, 10);
    const double p = a * b;
    const double c = random_float(-20, 20);
    check(a, b, c, p + c);                      // the rounded sum: above, below or on it
    check(a, b, -static_cast<float>(p), 0);     // cancellation down to the product's error
    check(a, b, c, std::nextafter(p + c, 0.0)); // one double ulp away
    check(a, b, 0, static_cast<float>(p));      // a product against its f32 rounding
    check(random_double(-500, 500), random_double(-500, 500), random_double(-900, 900),
          random_double(-900, 900)); // general doubles: inexact products
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (double special : {0.0, -0.0, kInf, -kInf, std::numeric_limits<double>::quiet_NaN(),
                         0x1p-1074, 0x1p-1000, 0x1p1000, 0x1.fffffffffffffp1023})
    for (double other : {1.0, -1.0, 0x1p-1022, 0x1p600, 0x1.fffffffffffffp1023})
      for (double c : {0.0, -0.0, 1.0, -other})
        check(special, other, c, 1.0);
  EXPECT_EQ(mismatches, 0) << "of " << cases;
}
