// Golden checks on the emitted LLVM IR (specs/f16-narrowing-barrier.md §3): under the strict
// default no instruction carries a fast-math flag; after the single-rounding opt-in the producers
// of the barriered site carry `contract`; relaxed accumulation adds `reassoc contract` to the
// accumulation. llvm.arithmetic.fence and constrained intrinsics are never used.
#include "examples.hpp"
#include "halfway/codegen/llvm/emit.hpp"
#include "halfway/codegen/llvm/host.hpp"

#include <gtest/gtest.h>
#include <regex>
#include <sstream>

using namespace halfway;

namespace {

policy::Budget single_rounding() {
  policy::Budget b;
  b.single_rounding = "test";
  return b;
}
policy::Budget relaxed() {
  policy::Budget b;
  b.relaxed_accumulation = "test";
  return b;
}

// Lines of `ir` that contain `op` (e.g. "fmul").
std::vector<std::string> lines_with(const std::string& ir, const std::string& op) {
  std::vector<std::string> out;
  std::istringstream in(ir);
  for (std::string line; std::getline(in, line);)
    if (line.find(" " + op + " ") != std::string::npos)
      out.push_back(line);
  return out;
}

const std::regex kAnyFlag(R"(\b(fast|nnan|ninf|nsz|arcp|contract|afn|reassoc)\b)");

void expect_never_fenced(const std::string& ir) {
  EXPECT_EQ(ir.find("arithmetic.fence"), std::string::npos);
  EXPECT_EQ(ir.find("constrained"), std::string::npos);
}

TEST(CpuIr, StrictHasNoFastMathFlagsAnywhere) {
  for (const ir::VerifiedKernel& k : examples::all()) {
    for (auto stage : {codegen::EmitStage::Lowered, codegen::EmitStage::Optimized}) {
      std::string ir = codegen::emit_llvm_ir(k, {}, {}, stage);
      EXPECT_FALSE(std::regex_search(ir, kAnyFlag)) << k.name();
      expect_never_fenced(ir);
    }
  }
}

TEST(CpuIr, NoContractOnBarrieredProducersUnderStrict) {
  std::string ir = codegen::emit_llvm_ir(examples::narrow_f16(), {});
  auto muls = lines_with(ir, "fmul"), adds = lines_with(ir, "fadd");
  ASSERT_EQ(muls.size(), 1u);
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_NE(muls[0].find("fmul float"), std::string::npos) << muls[0];
  EXPECT_NE(adds[0].find("fadd float"), std::string::npos) << adds[0];
}

TEST(CpuIr, ContractAfterSingleRoundingOptIn) {
  std::string ir = codegen::emit_llvm_ir(examples::narrow_f16(), single_rounding());
  auto muls = lines_with(ir, "fmul"), adds = lines_with(ir, "fadd");
  ASSERT_EQ(muls.size(), 1u);
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_NE(muls[0].find("fmul contract float"), std::string::npos) << muls[0];
  EXPECT_NE(adds[0].find("fadd contract float"), std::string::npos) << adds[0];
  expect_never_fenced(ir);
  // Still contracted after the optimiser, in vector form.
  std::string opt = codegen::emit_llvm_ir(examples::narrow_f16(), single_rounding(), {},
                                          codegen::EmitStage::Optimized);
  EXPECT_TRUE(std::regex_search(opt, std::regex(R"(fmul contract <\d+ x float>)")));
  EXPECT_TRUE(std::regex_search(opt, std::regex(R"(fadd contract <\d+ x float>)")));
}

TEST(CpuIr, ExactSingleRoundingUsesRoundToOdd) {
  codegen::LlvmOptions o;
  o.single_rounding = codegen::SingleRoundingMode::Exact;
  const std::regex double_to_half(R"(fptrunc (<\d+ x )?double>? .* to (<\d+ x )?half)");
  std::string ir = codegen::emit_llvm_ir(examples::narrow_f16(), single_rounding(), o);
  EXPECT_FALSE(std::regex_search(ir, kAnyFlag));
  EXPECT_NE(ir.find("fmul double"), std::string::npos);    // the exact product
  EXPECT_NE(ir.find("fptrunc double"), std::string::npos); // round-to-odd to f32
  EXPECT_FALSE(std::regex_search(ir, double_to_half));     // never f64 -> f16 directly
  std::string opt = codegen::emit_llvm_ir(examples::narrow_f16(), single_rounding(), o,
                                          codegen::EmitStage::Optimized);
  EXPECT_FALSE(std::regex_search(opt, double_to_half));
  EXPECT_EQ(opt.find("__truncdfhf2"), std::string::npos);
  if (codegen::HostTarget::host().avx512) {
    EXPECT_NE(opt.find("<16 x half>"), std::string::npos) << "the exact mode vectorises 16 wide";
  }
}

// f64 -> f16 rounds once: round-to-odd to f32, then f32 -> f16; never fptrunc double -> half,
// which LLVM turns into a per-element __truncdfhf2 call (and exact -> f64 -> f16 rounds twice).
TEST(CpuIr, F64ToF16NeverTruncatesDoubleToHalf) {
  auto k = kernel("f64_to_f16", {64}, {"x", "y"}, [](In<double> x, Out<f16> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] { y[i] = narrow<f16>(x[i] * 3.0); });
  });
  const std::regex double_to_half(R"(fptrunc (<\d+ x )?double>? .* to (<\d+ x )?half)");
  for (auto stage : {codegen::EmitStage::Lowered, codegen::EmitStage::Optimized}) {
    std::string ir = codegen::emit_llvm_ir(k, {}, {}, stage);
    EXPECT_FALSE(std::regex_search(ir, double_to_half));
    EXPECT_EQ(ir.find("__truncdfhf2"), std::string::npos);
  }
}

TEST(CpuIr, ReassocContractOnAccumulationsWhenRelaxed) {
  std::string strict = codegen::emit_llvm_ir(examples::gemv_fp8<e4m3>(), {});
  EXPECT_FALSE(std::regex_search(strict, kAnyFlag));
  std::string ir = codegen::emit_llvm_ir(examples::gemv_fp8<e4m3>(), relaxed());
  auto adds = lines_with(ir, "fadd"), muls = lines_with(ir, "fmul");
  ASSERT_EQ(adds.size(), 4u);
  for (const std::string& l : adds)
    EXPECT_NE(l.find("fadd reassoc contract float"), std::string::npos) << l;
  for (const std::string& l : muls)
    EXPECT_NE(l.find("fmul reassoc contract float"), std::string::npos) << l;
  // Relaxed accumulation never lifts a narrowing barrier.
  std::string narrow = codegen::emit_llvm_ir(examples::narrow_f16(), relaxed());
  EXPECT_FALSE(std::regex_search(narrow, kAnyFlag));
}

TEST(CpuIr, NarrowingLoopsGetTheWidthHint) {
  if (!codegen::HostTarget::host().avx512)
    GTEST_SKIP() << "the hint is for AVX-512 hosts";
  std::string ir = codegen::emit_llvm_ir(examples::narrow_f16(), {});
  EXPECT_NE(ir.find("!\"llvm.loop.vectorize.width\", i32 16"), std::string::npos);
  std::string saxpy = codegen::emit_llvm_ir(examples::saxpy(), {});
  EXPECT_EQ(saxpy.find("llvm.loop.vectorize.width"), std::string::npos);
  codegen::LlvmOptions off;
  off.narrowing_vector_width = 1;
  EXPECT_EQ(codegen::emit_llvm_ir(examples::narrow_f16(), {}, off).find("vectorize.width"),
            std::string::npos);
}

TEST(CpuIr, NarrowingVectorisesSixteenWide) {
  if (!codegen::HostTarget::host().avx512)
    GTEST_SKIP() << "16 lanes need AVX-512";
  std::string opt =
      codegen::emit_llvm_ir(examples::narrow_f16(), {}, {}, codegen::EmitStage::Optimized);
  EXPECT_NE(opt.find("fptrunc <16 x float>"), std::string::npos);
  EXPECT_EQ(opt.find("fptrunc <4 x float>"), std::string::npos);
}

// Guarded code: a signed 32-bit index is zero-extended (a negative one lands in the guard), no
// compare guards a buffer access, and the optimised saxpy is the unchecked code's vector loop.
// Explicit code compares; cancellable code polls with a volatile load.
TEST(CpuIr, GuardedIndicesAreZeroExtendedAndUncompared) {
  auto k = kernel("signed_index", {64}, {"x", "y", "off"},
                  [](In<float> x, Out<float> y, Scalar<int32_t> off) {
                    Var i(convert<int32_t>(global_id(0)) + off, "i");
                    y[i] = x[i];
                  });
  codegen::LlvmOptions guarded, explicit_checks, cancellable;
  explicit_checks.memory = codegen::MemoryChecks::Explicit;
  cancellable.cancellable = true;
  std::string ir = codegen::emit_llvm_ir(k, {}, guarded);
  EXPECT_NE(ir.find("zext i32"), std::string::npos);
  EXPECT_EQ(ir.find("sext i32"), std::string::npos);
  EXPECT_EQ(ir.find("icmp uge i64"), std::string::npos);
  EXPECT_EQ(ir.find("load volatile"), std::string::npos);
  std::string checked = codegen::emit_llvm_ir(k, {}, explicit_checks);
  EXPECT_NE(checked.find("icmp uge i64"), std::string::npos);
  EXPECT_NE(codegen::emit_llvm_ir(examples::reduce_sum(), {}, cancellable).find("load volatile"),
            std::string::npos);
  codegen::LlvmOptions none;
  none.memory = codegen::MemoryChecks::None;
  auto body = [](const std::string& text) { return text.substr(text.find("vector.body")); };
  std::string safe_saxpy =
      codegen::emit_llvm_ir(examples::saxpy(), {}, guarded, codegen::EmitStage::Optimized);
  std::string old_saxpy =
      codegen::emit_llvm_ir(examples::saxpy(), {}, none, codegen::EmitStage::Optimized);
  ASSERT_NE(safe_saxpy.find("vector.body"), std::string::npos);
  EXPECT_EQ(body(safe_saxpy), body(old_saxpy));
}

} // namespace
