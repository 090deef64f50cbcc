// The narrowing analysis: each rule, each shape, the producer sets and the accumulations.
#include "examples.hpp"
#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/ir/printer.hpp"

#include <gtest/gtest.h>

using namespace halfway;
using ir::Decision;
using ir::SiteShape;

namespace {

template <class F> std::vector<ir::NarrowingSite> sites_of(F&& body) {
  auto k = kernel("n", {64}, {"a", "b", "c", "h", "y"}, std::forward<F>(body));
  return ir::narrowing_sites(k.kernel());
}

TEST(Narrowing, ExampleMultiplyAddNeedsABarrier) {
  auto k = examples::narrow_f16();
  auto sites = ir::narrowing_sites(k.kernel());
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].shape, SiteShape::MulAdd);
  EXPECT_EQ(sites[0].decision, Decision::Barrier);
  EXPECT_EQ(sites[0].where, "store to out16");
  EXPECT_EQ(sites[0].from, ir::ScalarType::F32);
  EXPECT_EQ(sites[0].to, ir::ScalarType::F16);
  ASSERT_EQ(sites[0].producers.size(), 2u); // the add and the mul
  EXPECT_EQ(k->expr(sites[0].producers[0]).op, ir::Op::Add);
  EXPECT_EQ(k->expr(sites[0].producers[1]).op, ir::Op::Mul);
  EXPECT_NE(sites[0].rule.find("rule 3"), std::string::npos);
}

TEST(Narrowing, Rule1LoadsConstantsAndExactOpsNeedNoBarrier) {
  auto sites = sites_of([](In<float> a, In<float> b, In<float> c, In<f16> h, Out<f16> y) {
    y[0u] = a[0u];
    y[1u] = -abs(max(a[0u], b[0u]));
    y[2u] = select(c[0u] > 0.0f, a[0u], 2.5f);
    y[3u] = to_f32(h[0u]) * 1.0f; // a rounding op: not rule 1 (rule 2 below covers it)
  });
  ASSERT_EQ(sites.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(sites[i].shape, SiteShape::NotRounded) << i;
    EXPECT_EQ(sites[i].decision, Decision::NoBarrierNotRounded) << i;
    EXPECT_TRUE(sites[i].producers.size() <= 1) << i;
  }
  EXPECT_EQ(sites[3].decision, Decision::NoBarrierFigueroa);
}

TEST(Narrowing, Rule2FigueroaForOneOpOfTargetExactOperands) {
  auto sites = sites_of([](In<float> a, In<float> b, In<float> c, In<f16> h, Out<f16> y) {
    (void)a, (void)b, (void)c;
    y[0u] = narrow<f16>(to_f32(h[0u]) * to_f32(h[1u]));
    y[1u] = narrow<f16>(to_f32(h[0u]) / to_f32(h[1u]));
    y[2u] = narrow<f16>(sqrt(to_f32(h[0u])));
    y[3u] = narrow<f16>(to_f32(h[0u]) + 0.5f); // 0.5 is on the f16 grid
  });
  ASSERT_EQ(sites.size(), 4u);
  for (auto& s : sites) {
    EXPECT_EQ(s.decision, Decision::NoBarrierFigueroa) << s.rule;
    EXPECT_NE(s.rule.find("q=24 >= 2p+2=24"), std::string::npos) << s.rule;
  }
}

TEST(Narrowing, Rule2NeedsNearestEvenForSums) {
  // Figueroa's theorem is about round-to-nearest; for directed roundings it still covers *, / and
  // sqrt but not + and -: rtz(2 - 2^-24) is 0x3fff in one step but 0x4000 in two.
  auto sites = sites_of([](In<float> a, In<float> b, In<float> c, In<f16> h, Out<f16> y) {
    (void)a, (void)b, (void)c;
    y[0u] = narrow<f16>(to_f32(h[0u]) + to_f32(h[1u]), ir::RoundingMode::TowardZero);
    y[1u] = narrow<f16>(to_f32(h[0u]) * to_f32(h[1u]), ir::RoundingMode::TowardZero);
  });
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].decision, Decision::Barrier);
  EXPECT_EQ(sites[1].decision, Decision::NoBarrierFigueroa);
}

TEST(Narrowing, Rule3ProductsOfF32ChainsLocalsAndOffGridConstants) {
  auto sites = sites_of([](In<float> a, In<float> b, In<float> c, In<f16> h, Out<f16> y) {
    y[0u] = a[0u] * b[0u];
    y[1u] = (a[0u] * b[0u] + c[0u]) * a[1u];
    Var v(a[0u] + b[0u], "v");
    y[2u] = v;
    y[3u] = to_f32(h[0u]) + 0.1f; // 0.1f is not an f16 value
    y[4u] = fma(a[0u], b[0u], c[0u]);
    y[5u] = exp(to_f32(h[0u])); // exp is not covered by Figueroa
  });
  ASSERT_EQ(sites.size(), 6u);
  EXPECT_EQ(sites[0].shape, SiteShape::Product);
  EXPECT_EQ(sites[1].shape, SiteShape::Chain);
  EXPECT_EQ(sites[2].shape, SiteShape::Chain);
  EXPECT_EQ(sites[3].shape, SiteShape::Single);
  EXPECT_EQ(sites[4].shape, SiteShape::MulAdd);
  EXPECT_EQ(sites[5].shape, SiteShape::Single);
  for (auto& s : sites)
    EXPECT_EQ(s.decision, Decision::Barrier) << s.where;
  EXPECT_EQ(sites[2].producers.size(), 0u); // the local's producers live in its let
}

TEST(Narrowing, OtherFormatPairs) {
  auto bf = kernel("bf", {64}, {"a", "y"}, [](In<float> a, Out<bf16> y) { y[0u] = a[0u] * a[1u]; });
  auto fp8 = kernel("f8", {64}, {"a", "y"}, [](In<bf16> a, Out<e4m3> y) {
    y[0u] = narrow<e4m3>(to_f32(a[0u]) * to_f32(a[1u])); // bf16 operands are not e4m3-exact
  });
  auto f64 = examples::linear<double>();
  EXPECT_EQ(ir::narrowing_sites(bf.kernel())[0].decision, Decision::Barrier);
  EXPECT_EQ(ir::narrowing_sites(fp8.kernel())[0].decision, Decision::Barrier);
  auto s = ir::narrowing_sites(f64.kernel());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].from, ir::ScalarType::F64);
  EXPECT_EQ(s[0].to, ir::ScalarType::F32);
  EXPECT_EQ(s[0].shape, SiteShape::MulAdd);
  EXPECT_EQ(s[0].decision, Decision::Barrier);
}

TEST(Narrowing, WideningsAreNotSites) {
  EXPECT_TRUE(ir::narrowing_sites(examples::linear<f16>().kernel()).empty());
  EXPECT_TRUE(ir::narrowing_sites(examples::saxpy().kernel()).empty());
}

TEST(Narrowing, Accumulations) {
  auto k = examples::gemv_fp8<e4m3>();
  auto acc = ir::accumulations(k.kernel());
  ASSERT_EQ(acc.size(), 4u); // four unrolled `acc = acc + w*x` per word
  for (auto& a : acc) {
    EXPECT_EQ(k->locals[a.local].name, "acc");
    ASSERT_EQ(a.ops.size(), 2u);
    EXPECT_EQ(k->expr(a.ops[0]).op, ir::Op::Add);
    EXPECT_EQ(k->expr(a.ops[1]).op, ir::Op::Mul);
  }
  EXPECT_TRUE(ir::accumulations(examples::reduce_sum().kernel()).empty());
}

TEST(Narrowing, DescribeSites) {
  std::string text = ir::describe_sites(examples::narrow_f16().kernel());
  EXPECT_EQ(text, "site 0: store to out16: narrow<f16>(add(mul(a[i], b[i]), c[i]))\n"
                  "  f32 -> f16, multiply-add, barrier (rule 3: two roundings (f32, then f16) may "
                  "differ from one; a barrier keeps them)\n");
  EXPECT_EQ(ir::describe_sites(examples::saxpy().kernel()), "no narrowing sites\n");
}

} // namespace

TEST(Narrowing, DescribeSitesSaysWhenTheOptInLiftsABarrier) {
  // What `halfway sites` and `emit --ir` print under a single-rounding opt-in: the barrier the
  // code generator no longer inserts is named as lifted, with the opt-in's reason.
  std::string text = ir::describe_sites(examples::narrow_f16().kernel(), std::string("display"));
  EXPECT_NE(text.find("multiply-add, lifted by single rounding: display (without it: rule 3"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(", barrier ("), std::string::npos) << text;
  // Control characters in the reason never reach the terminal.
  EXPECT_NE(ir::describe_sites(examples::narrow_f16().kernel(), std::string("a\x1b[2Jb"))
                .find("a\\x1b[2Jb"),
            std::string::npos);
}
