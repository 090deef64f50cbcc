#pragma once
// Test-only faults in the CPU code generator, to prove that the differential campaign catches
// the mistakes it exists for (tests/kernelgen/fault_test.cpp). No command-line option reaches
// this: only a C++ caller that includes this header. While a fault is injected, every kernel the
// LLVM backend lowers carries it, and LlvmOptions::variant() differs, so code generated before
// or after is never shared with it through the launch memo.

#include <cstdint>

namespace halfway::codegen::llvm::testing {

enum class Fault : uint8_t {
  None,
  // Every barriered narrowing site is lowered as if single rounding were accepted: its producing
  // ops get `contract` (x86 then fuses a*b + c into one FMA before the narrowing).
  DropBarrier,
  // Every float narrowing at nearest-even rounds toward zero instead.
  NarrowTowardZero,
  // Float subtraction computes b - a.
  SwapSub,
};

// Process-wide; not thread-safe with concurrent code generation. Tests set it, run, and reset
// it to Fault::None.
void inject_fault(Fault fault);
Fault injected_fault();

} // namespace halfway::codegen::llvm::testing
