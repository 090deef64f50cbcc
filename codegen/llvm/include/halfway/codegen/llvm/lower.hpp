#pragma once
// Lowering a verified kernel to an LLVM module: the CPU device's code generator.
//
// Execution model (specs: issue 5, "Execution"):
//  - One entry function runs a range of workgroups (abi.hpp). A workgroup runs its lanes in
//    loops: no stack switching and no thread per lane.
//  - Barriers split the body into parts. A part without barriers is one loop over the lanes that
//    runs the part's scalar code for each lane in turn, divergent control flow included; that loop
//    is what LLVM's loop vectoriser turns into SIMD code. A statement that contains a barrier
//    (if / while / for) has uniform control (the verifier guarantees it), so it is run once per
//    workgroup, its condition evaluated for lane 0, around the parts inside it. Locals used in
//    more than one part live in per-lane arrays; the rest are plain registers.
//  - break / continue / return that leave a part (always uniform when they do) set a workgroup
//    flag that the code after the lane loop acts on.
//
// Precision (specs/f16-narrowing-barrier.md §3-§5): no fast-math flags anywhere by default, so
// the result is the interpreter's bit for bit. With the budget's single-rounding opt-in, the
// producing ops of barriered narrowing sites get `contract` (or the round-to-odd path, see
// SingleRoundingMode); with relaxed accumulation, accumulation ops get `reassoc contract`.
// Never llvm.arithmetic.fence or constrained intrinsics.

#include "halfway/codegen/llvm/abi.hpp"
#include "halfway/codegen/llvm/host.hpp"
#include "halfway/codegen/llvm/options.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/policy/budget.hpp"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace halfway::codegen::llvm {

struct LoweredKernel {
  LoweredKernel();
  LoweredKernel(LoweredKernel&&) noexcept;
  LoweredKernel& operator=(LoweredKernel&&) noexcept;
  ~LoweredKernel();

  std::unique_ptr<::llvm::LLVMContext> context;
  std::unique_ptr<::llvm::Module> module; // owned by `context`'s lifetime: destroyed first
  std::string entry;                      // name of the EntryFn in `module`
  std::vector<CheckSite> sites;           // ErrorRecord::site indexes this
  uint64_t shared_bytes = 0;              // scratch the entry needs for shared arrays
  policy::Budget budget;                  // what the code was generated under
};

// `entry` names the entry function (the JIT gives every kernel its own). Throws halfway::Error
// (Unsupported) for a construct the backend cannot express; there is none at present.
LoweredKernel lower_kernel(const ir::VerifiedKernel& kernel, const policy::Budget& budget,
                           const LlvmOptions& options, const HostTarget& target,
                           const std::string& entry = "halfway_entry");

} // namespace halfway::codegen::llvm
