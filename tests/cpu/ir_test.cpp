// Checks on the emitted LLVM IR that need code generator options the command line does not offer:
// the exact single-rounding mode, the vector width hint switched off, explicit bounds checks,
// cancellable code and unchecked code. Everything `halfway emit --llvm` can show (fast-math flags
// under each budget, the narrowing sequences, guarded indices, the width hint) is checked as text
// in tests/lit/llvm/.
#include "examples.hpp"
#include "halfway/codegen/llvm/emit.hpp"
#include "halfway/codegen/llvm/host.hpp"

#include <gtest/gtest.h>
#include <regex>

using namespace halfway;

namespace {

policy::Budget single_rounding() {
  policy::Budget b;
  b.single_rounding = "test";
  return b;
}

const std::regex kAnyFlag(R"(\b(fast|nnan|ninf|nsz|arcp|contract|afn|reassoc)\b)");

TEST(CpuIr, ExactSingleRoundingUsesRoundToOdd) {
  codegen::llvm::LlvmOptions o;
  o.single_rounding = codegen::llvm::SingleRoundingMode::Exact;
  const std::regex double_to_half(R"(fptrunc (<\d+ x )?double>? .* to (<\d+ x )?half)");
  std::string ir = codegen::llvm::emit_llvm_ir(examples::narrow_f16(), single_rounding(), o);
  EXPECT_FALSE(std::regex_search(ir, kAnyFlag));
  EXPECT_NE(ir.find("fmul double"), std::string::npos);    // the exact product
  EXPECT_NE(ir.find("fptrunc double"), std::string::npos); // round-to-odd to f32
  EXPECT_FALSE(std::regex_search(ir, double_to_half));     // never f64 -> f16 directly
  std::string opt = codegen::llvm::emit_llvm_ir(examples::narrow_f16(), single_rounding(), o,
                                                codegen::llvm::EmitStage::Optimized);
  EXPECT_FALSE(std::regex_search(opt, double_to_half));
  EXPECT_EQ(opt.find("__truncdfhf2"), std::string::npos);
  if (codegen::llvm::HostTarget::host().avx512) {
    EXPECT_NE(opt.find("<16 x half>"), std::string::npos) << "the exact mode vectorises 16 wide";
  }
}

TEST(CpuIr, TheWidthHintCanBeSwitchedOff) {
  codegen::llvm::LlvmOptions off;
  off.narrowing_vector_width = 1;
  EXPECT_EQ(codegen::llvm::emit_llvm_ir(examples::narrow_f16(), {}, off).find("vectorize.width"),
            std::string::npos);
}

// Explicit code compares each index; cancellable code polls with a volatile load; the optimised
// guarded saxpy is the unchecked code's vector loop.
TEST(CpuIr, ExplicitChecksCompareAndCancellableCodePolls) {
  auto k = kernel("signed_index", {64}, {"x", "y", "off"},
                  [](In<float> x, Out<float> y, Scalar<int32_t> off) {
                    Var i(convert<int32_t>(global_id(0)) + off, "i");
                    y[i] = x[i];
                  });
  codegen::llvm::LlvmOptions guarded, explicit_checks, cancellable;
  explicit_checks.memory = codegen::llvm::MemoryChecks::Explicit;
  cancellable.cancellable = true;
  std::string checked = codegen::llvm::emit_llvm_ir(k, {}, explicit_checks);
  EXPECT_NE(checked.find("icmp uge i64"), std::string::npos);
  EXPECT_NE(
      codegen::llvm::emit_llvm_ir(examples::reduce_sum(), {}, cancellable).find("load volatile"),
      std::string::npos);
  codegen::llvm::LlvmOptions none;
  none.memory = codegen::llvm::MemoryChecks::None;
  auto body = [](const std::string& text) { return text.substr(text.find("vector.body")); };
  std::string safe_saxpy = codegen::llvm::emit_llvm_ir(examples::saxpy(), {}, guarded,
                                                       codegen::llvm::EmitStage::Optimized);
  std::string old_saxpy =
      codegen::llvm::emit_llvm_ir(examples::saxpy(), {}, none, codegen::llvm::EmitStage::Optimized);
  ASSERT_NE(safe_saxpy.find("vector.body"), std::string::npos);
  EXPECT_EQ(body(safe_saxpy), body(old_saxpy));
}

} // namespace
