// The CPU device's rounding model under the single-rounding opt-in, through the checker with
// exact models (specs/f16-narrowing-barrier.md §4): with `contract` (the default) LLVM fuses each
// multiply-add into an f32 fma where the host has one, which is FusedF32 on every element; with
// the round-to-odd path the site is rounded once from the exact value, which is Single.
#include "examples.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using namespace halfway;
using namespace halfway::diff;
using interp::RoundingModel;

namespace {

constexpr size_t kN = 1 << 16;

Report run_cpu(codegen::llvm::SingleRoundingMode mode, inputs::Kind kind) {
  policy::Registry registry;
  EXPECT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"), "cpu models"));
  rt::CpuDeviceOptions options;
  options.single_rounding = mode;
  rt::CpuDevice cpu(&registry, options);
  auto in = inputs::make_inputs(examples::narrow_f16().kernel(), kN, kind, 1);
  Options o;
  o.registry = &registry;
  o.exact_models = true;
  return run(examples::narrow_f16(), cpu, in.grid, in.args, o);
}

bool fits(const ModelCounts& m, RoundingModel model) {
  const auto f = m.fits();
  return std::find(f.begin(), f.end(), model) != f.end();
}

TEST(CpuRoundingModels, ContractIsFusedF32) {
  for (auto kind : {inputs::Kind::Ties, inputs::Kind::Random, inputs::Kind::Edges}) {
    const Report r = run_cpu(codegen::llvm::SingleRoundingMode::Contract, kind);
    EXPECT_TRUE(r.ok()) << to_text(r);
    const ModelCounts& m = r.buffers.at(0).models;
    EXPECT_EQ(m.elements, kN);
    EXPECT_EQ(m.unexplained, 0u);
    // Without an fma instruction LLVM has nothing to contract into: the two-step result.
    const bool fma = __builtin_cpu_supports("fma");
    EXPECT_TRUE(fits(m, fma ? RoundingModel::FusedF32 : RoundingModel::TwoStep)) << to_text(r);
    if (fma && kind == inputs::Kind::Ties) {
      EXPECT_GT(m.first[static_cast<size_t>(RoundingModel::FusedF32)], kN / 20) << to_text(r);
    }
    std::printf(
        "cpu (contract), %s inputs: TwoStep on %llu, FusedF32 on %llu\n", inputs::name(kind).data(),
        static_cast<unsigned long long>(m.first[static_cast<size_t>(RoundingModel::TwoStep)]),
        static_cast<unsigned long long>(m.first[static_cast<size_t>(RoundingModel::FusedF32)]));
  }
}

TEST(CpuRoundingModels, RoundToOddIsSingle) {
  for (auto kind : {inputs::Kind::Ties, inputs::Kind::Random, inputs::Kind::Edges}) {
    const Report r = run_cpu(codegen::llvm::SingleRoundingMode::Exact, kind);
    EXPECT_TRUE(r.ok()) << to_text(r);
    const ModelCounts& m = r.buffers.at(0).models;
    EXPECT_EQ(m.elements, kN);
    EXPECT_EQ(m.unexplained, 0u);
    EXPECT_TRUE(fits(m, RoundingModel::Single)) << to_text(r);
    if (kind == inputs::Kind::Ties) {
      EXPECT_GT(m.first[static_cast<size_t>(RoundingModel::Single)], kN / 20) << to_text(r);
    }
  }
}

} // namespace
