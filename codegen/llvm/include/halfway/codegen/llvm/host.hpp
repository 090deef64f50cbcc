#pragma once
// The machine the CPU device compiles for: the host, as LLVM sees it (sys::getHostCPUName and
// getHostCPUFeatures). The JIT and the pass pipeline both take it from here, so the cost model
// that decides vector widths is the one of the CPU the code runs on.

#include <string>

namespace halfway::codegen::llvm {

struct HostTarget {
  std::string triple;   // e.g. x86_64-pc-linux-gnu
  std::string cpu;      // e.g. znver5, sapphirerapids
  std::string features; // "+avx512f,+f16c,-amx-tile,..." (LLVM's subtarget feature string)
  bool avx512 = false;  // AVX-512F: zmm registers, masked loads and stores
  bool f16c = false;    // F16C: vcvtps2ph / vcvtph2ps

  // Detected once per process.
  static const HostTarget& host();
};

} // namespace halfway::codegen::llvm
