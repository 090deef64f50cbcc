// Accumulation and step matching (ir/analysis/accumulation.hpp), which the narrowing analysis,
// the CPU code generator's precision plan and the interpreter's accumulation records all read.

#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/text/parse.hpp"

#include <gtest/gtest.h>
#include <string>

namespace halfway::ir {
namespace {

Kernel parse(const std::string& body) {
  std::string text = "kernel k workgroup(64, 1, 1) {\n"
                     "  param a: buffer<f32, read>;\n"
                     "  param o: buffer<f32, read_write>;\n"
                     "  param h: buffer<f16, write>;\n"
                     "  param n: u32;\n" +
                     body + "}\n";
  std::vector<Kernel> ks = text::parse_kernels(text, "accumulation_test.hk");
  EXPECT_EQ(ks.size(), 1u);
  return ks.at(0);
}

// The assignments of the kernel, in program order.
std::vector<const Stmt*> assignments(const Kernel& k) {
  std::vector<const Stmt*> out;
  for_each_stmt(k.body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Assign)
      out.push_back(&s);
  });
  return out;
}

const char* kLoop = "  let acc: f32 = 0.0:f32;\n"
                    "  let c: u32 = 0:u32;\n"
                    "  for i: u32 = 0:u32 to n step 1:u32 {\n";

TEST(Accumulation, StepForms) {
  Kernel k = parse(std::string(kLoop) + "    acc = add(acc, mul(a[i], a[0:u32]));\n" // 0: acc + e
                                        "    acc = add(mul(a[i], 2.0:f32), acc);\n"  // 1: e + acc
                                        "    acc = sub(acc, a[i]);\n"                // 2: acc - e
                                        "    acc = fma(a[i], a[i], acc);\n" // 3: fma(x, y, acc)
                                        "    acc = sub(a[i], acc);\n"       // 4: e - acc: no step
                                        "    acc = fma(acc, a[i], a[i]);\n" // 5: acc not the addend
                                        "    c = add(c, 1:u32);\n"     // 6: an integer: no step
                                        "    acc = add(o[i], a[i]);\n" // 7: another value: no step
                                        "  }\n"
                                        "  o[0:u32] = acc;\n");
  std::vector<const Stmt*> as = assignments(k);
  ASSERT_EQ(as.size(), 8u);
  auto step = [&](int i) { return match_step(k, *as[i]); };
  const uint32_t acc = as[0]->local;

  ASSERT_TRUE(step(0));
  EXPECT_EQ(step(0)->local, acc);
  EXPECT_EQ(step(0)->term, k.expr(as[0]->a).args[1]);
  EXPECT_FALSE(step(0)->negative);
  ASSERT_TRUE(step(1));
  EXPECT_EQ(step(1)->term, k.expr(as[1]->a).args[0]);
  ASSERT_TRUE(step(2));
  EXPECT_EQ(step(2)->term, k.expr(as[2]->a).args[1]);
  EXPECT_TRUE(step(2)->negative);
  ASSERT_TRUE(step(3));
  EXPECT_EQ(step(3)->term, kNone);
  for (int i : {4, 5, 6, 7})
    EXPECT_FALSE(step(i)) << "assignment " << i;

  // Inside a loop, each step is an accumulation; its ops are the producers, root first.
  std::vector<Accumulation> accs = accumulations(k);
  ASSERT_EQ(accs.size(), 4u);
  for (const Accumulation& a : accs)
    EXPECT_EQ(a.local, acc);
  const Expr& add0 = k.expr(as[0]->a);
  EXPECT_EQ(accs[0].ops, (std::vector<ExprId>{as[0]->a, add0.args[1]}));
  EXPECT_EQ(accs[2].ops, (std::vector<ExprId>{as[2]->a}));
  EXPECT_EQ(accs[3].ops, (std::vector<ExprId>{as[3]->a}));
}

TEST(Accumulation, OnlyInsideLoops) {
  Kernel k = parse("  let acc: f32 = 0.0:f32;\n"
                   "  acc = add(acc, a[0:u32]);\n" // a step, but not in a loop
                   "  let j: u32 = 0:u32;\n"
                   "  while lt(j, n) {\n"
                   "    if gt(a[j], 0.0:f32) {\n"
                   "      j = add(j, 1:u32);\n"
                   "    } else {\n"
                   "      acc = add(acc, a[j]);\n" // in a loop, through an else
                   "      j = add(j, 2:u32);\n"
                   "    }\n"
                   "  }\n"
                   "  o[0:u32] = acc;\n");
  std::vector<const Stmt*> as = assignments(k);
  ASSERT_EQ(as.size(), 4u);
  EXPECT_TRUE(match_step(k, *as[0]));
  std::vector<Accumulation> accs = accumulations(k);
  ASSERT_EQ(accs.size(), 1u);
  EXPECT_EQ(accs[0].ops, (std::vector<ExprId>{as[2]->a}));
}

TEST(Accumulation, MulAddShapes) {
  Kernel k = parse("  let x: f32 = a[0:u32];\n"
                   "  let y: f32 = a[1:u32];\n"
                   "  let z: f32 = a[2:u32];\n"
                   "  o[0:u32] = add(mul(x, y), z);\n"
                   "  o[1:u32] = sub(z, mul(x, y));\n"
                   "  o[2:u32] = sub(mul(x, y), z);\n"
                   "  o[3:u32] = add(z, mul(mul(x, y), z));\n"
                   "  o[4:u32] = div(x, y);\n"
                   "  o[5:u32] = fma(x, y, z);\n");
  std::vector<ExprId> values;
  for_each_stmt(k.body, [&](const Stmt& s) {
    if (s.kind == StmtKind::Store)
      values.push_back(s.b);
  });
  ASSERT_EQ(values.size(), 6u);
  auto m0 = match_mul_add(k, values[0]);
  ASSERT_TRUE(m0);
  EXPECT_EQ(m0->z, k.expr(values[0]).args[1]);
  EXPECT_FALSE(m0->negate_product || m0->negate_z || m0->z_first);
  auto m1 = match_mul_add(k, values[1]);
  ASSERT_TRUE(m1);
  EXPECT_TRUE(m1->negate_product && m1->z_first);
  EXPECT_FALSE(m1->negate_z);
  auto m2 = match_mul_add(k, values[2]);
  ASSERT_TRUE(m2);
  EXPECT_TRUE(m2->negate_z);
  EXPECT_FALSE(m2->negate_product || m2->z_first);
  auto m3 = match_mul_add(k, values[3]); // the product's own operand is a product
  ASSERT_TRUE(m3);
  EXPECT_EQ(k.expr(m3->x).op, Op::Mul);
  EXPECT_FALSE(match_mul_add(k, values[4]));
  auto m5 = match_mul_add(k, values[5]);
  ASSERT_TRUE(m5);
  EXPECT_EQ(m5->z, k.expr(values[5]).args[2]);
}

// The narrowing analysis classifies a site's producer with the same matcher: a multiply-add of
// unrounded operands is a MulAdd site, one whose product is itself rounded is a chain.
TEST(Accumulation, NarrowingShapesUseTheMatcher) {
  Kernel k = parse("  h[0:u32] = narrow<f16>(add(mul(a[0:u32], a[1:u32]), a[2:u32]));\n"
                   "  h[1:u32] = narrow<f16>(mul(a[0:u32], a[1:u32]));\n"
                   "  h[2:u32] = narrow<f16>(add(mul(mul(a[0:u32], a[1:u32]), a[1:u32]), "
                   "a[2:u32]));\n"
                   "  h[3:u32] = narrow<f16>(sub(a[2:u32], mul(a[0:u32], a[1:u32])));\n");
  std::vector<NarrowingSite> sites = narrowing_sites(k);
  ASSERT_EQ(sites.size(), 4u);
  EXPECT_EQ(sites[0].shape, SiteShape::MulAdd);
  EXPECT_EQ(sites[1].shape, SiteShape::Product);
  EXPECT_EQ(sites[2].shape, SiteShape::Chain);
  EXPECT_EQ(sites[3].shape, SiteShape::MulAdd);
  EXPECT_EQ(sites[0].producers.size(), 2u); // the add and the mul
  EXPECT_EQ(sites[2].producers.size(), 3u);
}

} // namespace
} // namespace halfway::ir
