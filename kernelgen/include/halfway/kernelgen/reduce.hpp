#pragma once
// Shrinking a failing kernel while it keeps failing (specs/kernelgen.md): greedy passes to a
// fixpoint, each candidate re-verified before it is tried:
//  - delete statements: top-level runs of halves, quarters, ... first, then single statements at
//    any depth, last first (so that a local's uses go before its declaration);
//  - replace an if by its then or else block;
//  - replace an expression that is not a leaf by one of its operands of the same type, or by the
//    constant 0 of its type (loop bounds included, which shrinks trip counts), parents first so
//    that one success drops a whole subtree;
//  - shrink the grid along x, y and z: one workgroup along the dimension, then halve the
//    workgroup's extent there.
// The candidate is kept when `still_fails` says so; the result fails by construction.

#include "halfway/ir/kernel.hpp"
#include "halfway/ir/verifier.hpp"

#include <array>
#include <cstdint>
#include <functional>

namespace halfway::kernelgen {

// Lanes along x, y and z (RunSetup's lanes, lanes_y, lanes_z).
using Lanes = std::array<uint32_t, 3>;

// Whether a verified candidate (run over `lanes`) still shows the failure.
using StillFails = std::function<bool(const ir::VerifiedKernel& kernel, const Lanes& lanes)>;

struct Reduced {
  ir::Kernel kernel;
  Lanes lanes{0, 0, 0};
  size_t statements_before = 0, statements = 0; // count_statements
  uint64_t attempts = 0;                        // candidates tried (verified ones)
};

struct ReduceOptions {
  uint64_t max_attempts = 20000;
  // The expression pass: the slowest (a candidate per node), and not needed to count statements.
  bool expressions = true;
};

// Each of `lanes` must be a multiple of the kernel's workgroup extent along its dimension. The
// kernel is returned as given when nothing smaller fails; the caller checks first that it fails at
// all.
Reduced reduce(const ir::Kernel& kernel, const Lanes& lanes, const StillFails& still_fails,
               const ReduceOptions& options = {});

} // namespace halfway::kernelgen
