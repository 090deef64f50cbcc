// Relaxed accumulation through shared memory (specs/f16-narrowing-barrier.md §5): a split-k dot
// product whose 64 per-lane partial sums meet in a tree reduction or a serial sum in shared
// memory. The interpreter carries each partial sum's terms through the shared array, so the
// final element gets the bound over all of them; a device that sums in another order passes
// within it, one that drops a term or moves the sum beyond it is flagged, and a value the
// bookkeeping cannot follow (a product of the sum) stays unchecked, so the comparison is
// inconclusive.
#include "halfway/diff/diff.hpp"
#include "halfway/dsl.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/policy/registry.hpp"
#include "model_device.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <random>

using namespace halfway;
using namespace halfway::diff;
using ir::ScalarType;

namespace {

constexpr uint32_t kLanes = 64, kPer = 8, kGroups = 96;
constexpr uint32_t kTerms = kLanes * kPer; // products per group

// How the 64 partial sums of a group become y[g].
enum class Finish {
  Tree,   // halving steps `if lid < s { partial[lid] = partial[lid] + partial[lid + s] }`
  Serial, // lane 0 sums them in order into another accumulation local
  Scaled, // the tree, then y[g] = partial[0] * 2: a product of a partial sum, not followed
};

// y[g] = sum over i in group g's 512 elements of w[i] * x[i], lane l taking i = g*512 + 64j + l.
ir::VerifiedKernel split_sum(Finish finish) {
  return kernel(
      "split_sum", {kLanes}, {"w", "x", "y"}, [finish](In<float> w, In<float> x, Out<float> y) {
        Shared<float> partial("partial", kLanes);
        Var g(group_id(0), "g");
        Var lid(local_id(0), "lid");
        Var acc(0.0f, "acc");
        For(0u, kPer, [&](Value<uint32_t> j) {
          Var i(g * kTerms + j * kLanes + lid, "i");
          acc = acc + w[i] * x[i];
        });
        partial[lid] = acc;
        Barrier();
        if (finish == Finish::Serial) {
          If(lid == 0u, [&] {
            Var total(0.0f, "total");
            For(0u, kLanes, [&](Value<uint32_t> j) { total = total + partial[j]; });
            y[g] = total;
          });
          return;
        }
        Var stride(kLanes / 2, "stride");
        While([&] { return stride > 0u; },
              [&] {
                If(lid < stride, [&] { partial[lid] = partial[lid] + partial[lid + stride]; });
                Barrier();
                stride = stride >> 1u;
              });
        If(lid == 0u, [&] {
          if (finish == Finish::Scaled)
            y[g] = partial[0u] * 2.0f;
          else
            y[g] = partial[0u];
        });
      });
}

struct Problem {
  rt::HostBuffer w{ScalarType::F32, kGroups*kTerms}, x{ScalarType::F32, kGroups*kTerms},
      y{ScalarType::F32, kGroups};
  std::vector<rt::Arg> args{rt::Arg::of(w), rt::Arg::of(x), rt::Arg::of(y)};
  rt::Grid grid{{kGroups, 1, 1}};
  explicit Problem(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-2, 2);
    for (size_t i = 0; i < w.size(); ++i) {
      w.set_bits(i, std::bit_cast<uint32_t>(d(rng)));
      x.set_bits(i, std::bit_cast<uint32_t>(d(rng)));
    }
  }
  static float at(const rt::HostBuffer& b, size_t i) {
    return std::bit_cast<float>(static_cast<uint32_t>(b.get_bits(i)));
  }
  // sum |w[i] * x[i]| over group g, in long double (each product is exact in it).
  long double abs_sum(uint32_t g) const {
    long double s = 0;
    for (uint32_t k = 0; k < kTerms; ++k)
      s += std::fabs(static_cast<long double>(at(w, g * kTerms + k)) * at(x, g * kTerms + k));
    return s;
  }
};

float pairwise(const float* p, size_t n) {
  if (n == 1)
    return p[0];
  const size_t h = n / 2;
  return pairwise(p, h) + pairwise(p + h, n - h);
}

// A device that sums each group's f32 products pairwise in index order (another association than
// the kernel's), optionally without the largest term, then adds `offset` * sum |w x|; `scaled`
// doubles the result as Finish::Scaled does.
test::InterpDevice::Corrupt resum(bool drop_largest, double offset, bool scaled = false) {
  return [=](const ir::Kernel&, std::span<const rt::Arg> args) {
    const rt::HostBuffer &w = *args[0].buffer, &x = *args[1].buffer;
    rt::HostBuffer& y = *args[2].buffer;
    std::vector<float> p(kTerms);
    for (uint32_t g = 0; g < kGroups; ++g) {
      double abs = 0;
      for (uint32_t t = 0; t < kTerms; ++t) {
        p[t] = Problem::at(w, g * kTerms + t) * Problem::at(x, g * kTerms + t);
        abs += std::fabs(double(p[t]));
      }
      if (drop_largest)
        *std::max_element(p.begin(), p.end(),
                          [](float a, float b) { return std::fabs(a) < std::fabs(b); }) = 0.0f;
      float s = static_cast<float>(pairwise(p.data(), kTerms) + offset * abs);
      if (scaled)
        s *= 2.0f;
      y.set_bits(g, std::bit_cast<uint32_t>(s));
    }
  };
}

Options with(const policy::Registry& registry) {
  Options o;
  o.registry = &registry;
  return o;
}

void relax(policy::Registry& r) {
  EXPECT_TRUE(r.accept_relaxed_accumulation(policy::Scope::kernel("split_sum"),
                                            "split-k partial sums through shared memory"));
}

// The record of y[g] counts every term of the group: 512 products and the 64 lanes' initial
// zeros (and, for the serial sum, its own initial zero), one multiplication deep.
TEST(RelaxedShared, RecordsCarryTermsThroughSharedMemory) {
  const Problem prob(3);
  for (Finish finish : {Finish::Tree, Finish::Serial, Finish::Scaled}) {
    SCOPED_TRACE(static_cast<int>(finish));
    rt::HostBuffer y(ScalarType::F32, kGroups);
    std::vector<rt::Arg> args = prob.args;
    args[2] = rt::Arg::of(y);
    interp::Options o;
    o.shadow = true;
    o.threads = 2;
    const interp::Stats s = interp::run(split_sum(finish), prob.grid, args, o);
    std::map<uint64_t, interp::AccumulationRecord> last;
    for (const interp::AccumulationRecord& r : s.accumulations)
      if (r.destination.space == ir::Space::Buffer)
        last[r.destination.index] = r;
    ASSERT_EQ(last.size(), kGroups);
    for (uint32_t g = 0; g < kGroups; ++g) {
      const interp::AccumulationRecord& r = last[g];
      if (finish == Finish::Scaled) {
        EXPECT_FALSE(r.bounded) << g;
        continue;
      }
      ASSERT_TRUE(r.bounded) << g;
      EXPECT_EQ(r.type, ScalarType::F32);
      EXPECT_EQ(r.terms, kTerms + kLanes + (finish == Finish::Serial ? 1 : 0)) << g;
      EXPECT_EQ(r.depth, 1u);
      EXPECT_EQ(r.steps, kTerms + (finish == Finish::Serial ? kLanes : 0)) << g;
      const long double want = prob.abs_sum(g);
      EXPECT_NEAR(r.abs_sum, static_cast<double>(want), static_cast<double>(want) * 1e-14) << g;
      EXPECT_GE(static_cast<long double>(r.upper_abs_sum()), want) << g;
    }
  }
}

TEST(RelaxedShared, AnotherAssociationIsJudgedWithinTheBound) {
  const Problem prob(4);
  policy::Registry opt_in, strict;
  relax(opt_in);
  for (Finish finish : {Finish::Tree, Finish::Serial}) {
    SCOPED_TRACE(finish == Finish::Tree ? "tree" : "serial");
    const ir::VerifiedKernel k = split_sum(finish);
    test::InterpDevice pairwise_device("pairwise", interp::NarrowingModel::TwoStep, opt_in, {},
                                       resum(false, 0));
    const Report r = run(k, pairwise_device, prob.grid, prob.args, with(opt_in));
    const BufferReport& b = r.buffers.at(0);
    EXPECT_TRUE(r.ok()) << to_text(r);
    EXPECT_TRUE(r.inconclusive.empty()) << to_text(r);
    EXPECT_EQ(b.unchecked, 0u) << to_text(r);
    EXPECT_EQ(b.violations, 0u) << to_text(r);
    EXPECT_GT(b.within_bound, kGroups / 2) << to_text(r); // f32 sums in another order differ
    EXPECT_EQ(b.exact + b.within_bound, kGroups);

    // Without the opt-in the same device is a violation wherever it differs.
    test::InterpDevice unbudgeted("pairwise", interp::NarrowingModel::TwoStep, strict, {},
                                  resum(false, 0));
    const Report s = run(k, unbudgeted, prob.grid, prob.args, with(strict));
    EXPECT_EQ(s.buffers.at(0).violations, b.within_bound) << to_text(s);
  }
}

TEST(RelaxedShared, DroppedTermOrSumBeyondTheBoundIsAViolation) {
  const Problem prob(5);
  policy::Registry opt_in;
  relax(opt_in);
  for (Finish finish : {Finish::Tree, Finish::Serial}) {
    SCOPED_TRACE(finish == Finish::Tree ? "tree" : "serial");
    const ir::VerifiedKernel k = split_sum(finish);
    // The largest of 512 terms is at least sum |t| / 512 = 2^-9 sum |t|, far above the bound
    // 2 * gamma_577 * sum |t| (about 2^-13.8 sum |t|).
    test::InterpDevice dropped("dropped", interp::NarrowingModel::TwoStep, opt_in, {},
                               resum(true, 0));
    const Report d = run(k, dropped, prob.grid, prob.args, with(opt_in));
    EXPECT_EQ(d.buffers.at(0).violations, kGroups) << to_text(d);
    EXPECT_FALSE(d.ok());
    ASSERT_FALSE(d.buffers.at(0).first_violations.empty());
    const Bound& bound = d.buffers.at(0).first_violations[0].bound;
    EXPECT_EQ(bound.kind, Bound::Kind::RelaxedAccumulation);
    EXPECT_EQ(bound.terms, kTerms + kLanes + (finish == Finish::Serial ? 1 : 0));

    // 1.5 times the bound 2 * gamma_m * sum |t| away (m = terms - 1 + depth) fails; 0.5 times
    // passes: the bound covers all 577 (578) terms, not only one lane's.
    const double m = static_cast<double>(bound.terms), u = 0x1p-24;
    const double gamma2 = 2 * m * u / (1 - m * u);
    test::InterpDevice beyond("beyond", interp::NarrowingModel::TwoStep, opt_in, {},
                              resum(false, 1.5 * gamma2));
    EXPECT_EQ(run(k, beyond, prob.grid, prob.args, with(opt_in)).buffers.at(0).violations, kGroups);
    test::InterpDevice inside("inside", interp::NarrowingModel::TwoStep, opt_in, {},
                              resum(false, 0.5 * gamma2));
    const Report i = run(k, inside, prob.grid, prob.args, with(opt_in));
    EXPECT_TRUE(i.ok()) << to_text(i);
    EXPECT_EQ(i.buffers.at(0).within_bound, kGroups) << to_text(i);
  }
}

TEST(RelaxedShared, WhatTheBookkeepingCannotFollowIsUncheckedAndInconclusive) {
  const Problem prob(6);
  policy::Registry opt_in;
  relax(opt_in);
  test::InterpDevice pairwise_device("pairwise", interp::NarrowingModel::TwoStep, opt_in, {},
                                     resum(false, 0, true));
  const Report r =
      run(split_sum(Finish::Scaled), pairwise_device, prob.grid, prob.args, with(opt_in));
  const BufferReport& b = r.buffers.at(0);
  EXPECT_EQ(b.violations, 0u) << to_text(r);
  EXPECT_GT(b.unchecked, kGroups / 2) << to_text(r);
  EXPECT_EQ(b.exact + b.unchecked, kGroups);
  ASSERT_EQ(r.inconclusive.size(), 1u) << to_text(r);
  EXPECT_EQ(r.inconclusive[0].buffer, "y");
  EXPECT_FALSE(r.ok());
}

} // namespace
