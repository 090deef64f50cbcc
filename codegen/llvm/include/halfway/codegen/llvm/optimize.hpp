#pragma once
// LLVM's O2 pipeline (optimize.cpp says why not O3), run with the host's TargetMachine so that
// the loop vectoriser sees the x86 cost model (without it nothing vectorises;
// docs/measured.md).

#include "halfway/codegen/llvm/host.hpp"

namespace llvm {
class Module;
}

namespace halfway::codegen::llvm {

// Sets the module's data layout and triple for `target` and optimises it in place.
void optimize_module(::llvm::Module& module, const HostTarget& target);

} // namespace halfway::codegen::llvm
