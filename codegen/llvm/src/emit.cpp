#include "halfway/codegen/llvm/emit.hpp"

#include "halfway/codegen/llvm/lower.hpp"
#include "halfway/codegen/llvm/optimize.hpp"

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

namespace halfway::codegen::llvm {

std::string emit_llvm_ir(const ir::VerifiedKernel& kernel, const policy::Budget& budget,
                         const LlvmOptions& options, EmitStage stage) {
  const HostTarget& target = HostTarget::host();
  LoweredKernel lowered = lower_kernel(kernel, budget, options, target);
  if (stage == EmitStage::Optimized)
    optimize_module(*lowered.module, target);
  std::string text;
  ::llvm::raw_string_ostream os(text);
  lowered.module->print(os, nullptr);
  return text;
}

} // namespace halfway::codegen::llvm
