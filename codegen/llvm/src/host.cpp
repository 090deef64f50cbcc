#include "halfway/codegen/llvm/host.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

namespace halfway::codegen::llvm {

const HostTarget& HostTarget::host() {
  static const HostTarget target = [] {
    ::llvm::InitializeNativeTarget();
    ::llvm::InitializeNativeTargetAsmPrinter();
    HostTarget t;
    t.triple = ::llvm::sys::getProcessTriple();
    t.cpu = ::llvm::sys::getHostCPUName().str();
    ::llvm::SubtargetFeatures features;
    for (const auto& f : ::llvm::sys::getHostCPUFeatures()) {
      features.AddFeature(f.getKey(), f.getValue());
      if (f.getValue() && f.getKey() == "avx512f")
        t.avx512 = true;
      if (f.getValue() && f.getKey() == "f16c")
        t.f16c = true;
    }
    t.features = features.getString();
    return t;
  }();
  return target;
}

} // namespace halfway::codegen::llvm
