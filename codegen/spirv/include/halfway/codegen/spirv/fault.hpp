#pragma once
// Test-only faults in the SPIR-V code generator, to prove that the differential campaign catches
// on Vulkan the mistakes it exists for (tests/kernelgen/fault_test.cpp), as
// codegen/llvm/fault.hpp does for the CPU device. No command-line option reaches this: only a C++
// caller that includes this header. While a fault is injected, every module the backend generates
// carries it. The fault is not part of the Vulkan device's launch memo key: make the device after
// injecting (or removing) a fault, so that no module generated under another setting is reused.

#include <cstdint>

namespace halfway::codegen::spirv::testing {

enum class Fault : uint8_t {
  None,
  // Every narrowing site that needs a barrier is emitted as if single rounding were accepted:
  // its producing ops lose NoContraction (and the opaque identity), so a driver may fuse
  // a*b + c into one FMA before the narrowing. lavapipe never fuses (rt::DeviceInfo::may_fuse),
  // so no campaign on lavapipe can find this one: the fault test checks the module instead.
  DropNoContraction,
  // Every float-to-float narrowing at nearest-even rounds toward zero instead.
  NarrowTowardZero,
  // Float subtraction computes b - a.
  SwapSub,
  // Shifting a signed integer right is logical (zeros in) instead of arithmetic.
  LogicalShiftRight,
};

// Process-wide; not thread-safe with concurrent code generation. Tests set it, run, and reset
// it to Fault::None.
void inject_fault(Fault fault);
Fault injected_fault();

} // namespace halfway::codegen::spirv::testing
