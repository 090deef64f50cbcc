#pragma once
// The ORC LLJIT instance of one CPU device: compiles lowered kernels for the host (CPU name and
// features from sys::getHostCPUName / getHostCPUFeatures, CodeGenOptLevel::Aggressive) after the
// host's O2 pipeline, and keeps their code until the device is destroyed.

#include "halfway/codegen/llvm/abi.hpp"
#include "halfway/codegen/llvm/lower.hpp"

#include <memory>
#include <mutex>

namespace llvm::orc {
class LLJIT;
}

namespace halfway::rt::cpu_detail {

struct CompileTimes {
  double optimize_ms = 0;
  double codegen_ms = 0; // instruction selection, register allocation and linking
  double optimize_cpu_ms = 0, codegen_cpu_ms = 0; // the same in this thread's CPU time
};

class Jit {
public:
  Jit();
  ~Jit();
  // Thread-safe (compilations are serialised).
  codegen::llvm::EntryFn compile(codegen::llvm::LoweredKernel& lowered, CompileTimes& times);

private:
  std::mutex mutex_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

} // namespace halfway::rt::cpu_detail
