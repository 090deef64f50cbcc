#include "halfway/codegen/llvm/optimize.hpp"

#include "halfway/support/error.hpp"

#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <memory>
#include <string>

namespace halfway::codegen::llvm {

void optimize_module(::llvm::Module& module, const HostTarget& target) {
  std::string error;
  const ::llvm::Target* t = ::llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (!t)
    throw Error(ErrorKind::Device, "LLVM has no target for " + target.triple + ": " + error);
  // TargetOptions' defaults are what halfway needs: AllowFPOpFusion = Standard fuses only what
  // carries `contract`, and no unsafe-math options are set.
  // One TargetMachine per thread and target, kept: creating it was a measurable part of a
  // small kernel's compile. It is not shared between threads (its subtargets are cached lazily).
  struct Cached {
    std::string key;
    std::unique_ptr<::llvm::TargetMachine> machine;
  };
  thread_local Cached cached;
  std::string key = target.triple + '\n' + target.cpu + '\n' + target.features;
  if (!cached.machine || cached.key != key) {
    ::llvm::TargetOptions options;
    cached.machine.reset(t->createTargetMachine(target.triple, target.cpu, target.features, options,
                                                ::llvm::Reloc::PIC_, std::nullopt,
                                                ::llvm::CodeGenOptLevel::Aggressive));
    cached.key = std::move(key);
  }
  ::llvm::TargetMachine* machine = cached.machine.get();
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(target.triple);

  ::llvm::LoopAnalysisManager lam;
  ::llvm::FunctionAnalysisManager fam;
  ::llvm::CGSCCAnalysisManager cgam;
  ::llvm::ModuleAnalysisManager mam;
  ::llvm::PassBuilder pb(machine);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  // O2, not O3: O3's extra non-trivial loop unswitching copied whole workgroup bodies (the loop
  // over workgroups, with lane loops inside) and cost a third of the compile time of
  // barrier-heavy kernels without making anything measurably faster; vectorisation, interleaving
  // and unrolling are the same at O2.
  // Functions the vectoriser's calls should not stay calls to (the masked fallbacks of
  // lower_math.cpp, marked alwaysinline): inlined last, after vectorisation has placed them, so
  // that their quick "no lane needs it" test is a branch in the loop, not a call.
  pb.registerOptimizerLastEPCallback(
      [](::llvm::ModulePassManager& last, ::llvm::OptimizationLevel) {
        last.addPass(::llvm::AlwaysInlinerPass());
      });
  ::llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(::llvm::OptimizationLevel::O2);
  mpm.run(module, mam);
}

} // namespace halfway::codegen::llvm
