#pragma once
// Shrinking a failing kernel while it keeps failing (specs/kernelgen.md): greedy passes to a
// fixpoint, each candidate re-verified before it is tried:
//  - delete statements: top-level runs of halves, quarters, ... first, then single statements at
//    any depth, last first (so that a local's uses go before its declaration);
//  - replace an if by its then or else block;
//  - replace an expression that is not a leaf by one of its operands of the same type, or by the
//    constant 0 of its type (loop bounds included, which shrinks trip counts), parents first so
//    that one success drops a whole subtree;
//  - shrink the grid: one workgroup, then halve the workgroup size.
// The candidate is kept when `still_fails` says so; the result fails by construction.

#include "halfway/ir/kernel.hpp"
#include "halfway/ir/verifier.hpp"

#include <cstdint>
#include <functional>

namespace halfway::kernelgen {

// Whether a verified candidate (run over `lanes` lanes) still shows the failure.
using StillFails = std::function<bool(const ir::VerifiedKernel& kernel, uint32_t lanes)>;

struct Reduced {
  ir::Kernel kernel;
  uint32_t lanes = 0;
  size_t statements_before = 0, statements = 0; // count_statements
  uint64_t attempts = 0;                        // candidates tried (verified ones)
};

struct ReduceOptions {
  uint64_t max_attempts = 20000;
  // The expression pass: the slowest (a candidate per node), and not needed to count statements.
  bool expressions = true;
};

// `lanes` must be a multiple of the kernel's workgroup size along x. The kernel is returned as
// given when nothing smaller fails; the caller checks first that it fails at all.
Reduced reduce(const ir::Kernel& kernel, uint32_t lanes, const StillFails& still_fails,
               const ReduceOptions& options = {});

} // namespace halfway::kernelgen
