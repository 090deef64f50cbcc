#pragma once
// The LLVM IR of a kernel as text, for `halfway emit --llvm` and for golden tests of the precision
// policy (which ops carry `contract`, which `reassoc`).

#include "halfway/codegen/llvm/options.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/policy/budget.hpp"

#include <string>

namespace halfway::codegen::llvm {

enum class EmitStage : uint8_t {
  Lowered,   // as generated: one instruction per IR op, flags visible on each
  Optimized, // after the host's O2 pipeline: what the JIT compiles (vector code)
};

std::string emit_llvm_ir(const ir::VerifiedKernel& kernel, const policy::Budget& budget,
                         const LlvmOptions& options = {}, EmitStage stage = EmitStage::Lowered);

} // namespace halfway::codegen::llvm
