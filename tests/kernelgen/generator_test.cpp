// The generator's guarantees that hold without running anything: reproducible from (seed, index),
// verified, printable and parsed back to the same text, and covering the op table, every scalar
// type, every statement kind and every rounding mode, private and rank-2/3 shared arrays, clamp,
// and the relaxed-accumulation opt-in on kernels that accumulate.
#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/ir/ops.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/kernelgen/generate.hpp"
#include "halfway/text/kernel_file.hpp"

#include <gtest/gtest.h>
#include <set>

namespace halfway::kernelgen {
namespace {

TEST(Generator, SameSeedAndIndexGiveTheSameKernel) {
  for (uint64_t i = 0; i < 20; ++i) {
    const Generated a = generate(7, i), b = generate(7, i);
    EXPECT_EQ(ir::print(a.kernel), ir::print(b.kernel));
    EXPECT_EQ(a.lanes, b.lanes);
    EXPECT_EQ(a.input_seed, b.input_seed);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.single_rounding, b.single_rounding);
  }
  EXPECT_NE(ir::print(generate(7, 0).kernel), ir::print(generate(7, 1).kernel));
  EXPECT_NE(ir::print(generate(7, 0).kernel), ir::print(generate(8, 0).kernel));
  EXPECT_EQ(generate(7, 3).kernel.name, "fz_7_3");
}

TEST(Generator, KernelsPrintAndParseBackToTheSameText) {
  for (uint64_t i = 0; i < 100; ++i) {
    const Generated g = generate(11, i);
    const std::string text = ir::print(g.kernel);
    text::KernelFile f(text, "generated.hk");
    ASSERT_EQ(f.kernels().size(), 1u);
    EXPECT_EQ(ir::print(f.verify(size_t{0}).kernel()), text) << "kernel " << i;
    EXPECT_EQ(g.lanes % g.kernel.workgroup[0], 0u);
  }
}

TEST(Generator, DrawsEveryOpOfTheTable) {
  // Every op whose type rule is not Leaf comes from the table with no list of ours: an op added
  // to HALFWAY_OPS is generated without a change to the generator.
  const auto ops = generated_ops();
  for (size_t i = 0; i < ir::kOpCount; ++i) {
    const ir::Op op = static_cast<ir::Op>(i);
    if (ir::info(op).rule != ir::TypeRule::Leaf) {
      EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << ir::name(op);
    }
  }
}

TEST(Generator, CoversOpsTypesStatementsAndRoundings) {
  std::set<ir::Op> ops;
  std::set<ir::ScalarType> types, buffer_types;
  std::set<ir::StmtKind> stmts;
  std::set<ir::RoundingMode> roundings;
  std::set<diff::inputs::Kind> kinds;
  size_t single = 0, models = 0, exact_only = 0, shared_atomics = 0, narrowing_stores = 0;
  size_t relaxed = 0, accumulating = 0, clamps = 0, private_stores = 0, private_loads = 0;
  std::set<uint32_t> private_ranks, shared_ranks;
  size_t grids_2d = 0, grids_3d = 0;
  for (uint64_t i = 0; i < 600; ++i) {
    const Generated g = generate(1, i);
    const ir::Kernel& k = g.kernel;
    for (const ir::PrivateArray& a : k.privates)
      private_ranks.insert(a.rank());
    for (const ir::SharedArray& a : k.shared)
      shared_ranks.insert(a.rank());
    relaxed += g.relaxed_accumulation;
    grids_2d += g.lanes_y > 1 && g.lanes_z == 1;
    grids_3d += g.lanes_z > 1;
    EXPECT_EQ(g.lanes_y % k.workgroup[1], 0u);
    EXPECT_EQ(g.lanes_z % k.workgroup[2], 0u);
    // A kernel that holds the relaxed-accumulation opt-in has an accumulation it applies to.
    if (g.relaxed_accumulation)
      accumulating += !ir::accumulations(k).empty();
    for (const ir::Expr& e : k.exprs) {
      clamps += e.op == ir::Op::Clamp;
      private_loads += e.op == ir::Op::Load && e.space == ir::Space::Private;
      ops.insert(e.op);
      types.insert(e.type);
      if (e.op == ir::Op::Convert)
        roundings.insert(e.rounding);
    }
    for (const ir::Param& p : k.params)
      buffer_types.insert(p.type);
    ir::for_each_stmt(k.body, [&](const ir::Stmt& s) {
      stmts.insert(s.kind);
      shared_atomics += s.kind == ir::StmtKind::Atomic && s.space == ir::Space::Shared;
      private_stores += s.kind == ir::StmtKind::Store && s.space == ir::Space::Private;
      narrowing_stores += s.kind == ir::StmtKind::Store && k.expr(s.b).op == ir::Op::Convert &&
                          ir::is_narrowing(k.expr(k.expr(s.b).args[0]).type, k.expr(s.b).type);
    });
    kinds.insert(g.inputs);
    single += g.single_rounding;
    models += g.exact_models;
    exact_only += g.exact_only;
  }
  for (ir::Op op : generated_ops())
    EXPECT_TRUE(ops.count(op)) << "never generated: " << ir::name(op);
  for (size_t t = 0; t < std::size(ir::kTypeInfo); ++t) {
    const auto type = static_cast<ir::ScalarType>(t);
    EXPECT_TRUE(types.count(type)) << "no value of type " << ir::name(type);
    if (type != ir::ScalarType::Bool) {
      EXPECT_TRUE(buffer_types.count(type)) << "no buffer of type " << ir::name(type);
    }
  }
  for (auto kind :
       {ir::StmtKind::Let, ir::StmtKind::Assign, ir::StmtKind::Store, ir::StmtKind::Atomic,
        ir::StmtKind::If, ir::StmtKind::For, ir::StmtKind::While, ir::StmtKind::Break,
        ir::StmtKind::Continue, ir::StmtKind::Barrier, ir::StmtKind::Return})
    EXPECT_TRUE(stmts.count(kind)) << "statement kind " << static_cast<int>(kind);
  EXPECT_EQ(roundings.size(), 4u);
  EXPECT_EQ(kinds.size(), 3u);
  EXPECT_GT(single, 60u);
  EXPECT_GT(models, 20u);
  EXPECT_GT(exact_only, 200u);
  EXPECT_GT(shared_atomics, 10u);
  EXPECT_GT(narrowing_stores, 100u);
  EXPECT_GT(clamps, 50u);
  EXPECT_GT(private_stores, 50u);
  EXPECT_GT(private_loads, 50u);
  EXPECT_EQ(private_ranks, (std::set<uint32_t>{1, 2, 3}));
  EXPECT_EQ(shared_ranks, (std::set<uint32_t>{1, 2, 3}));
  EXPECT_GT(relaxed, 40u);
  EXPECT_GT(grids_2d, 60u);
  EXPECT_GT(grids_3d, 30u);
  EXPECT_EQ(accumulating, relaxed);
}

} // namespace
} // namespace halfway::kernelgen
