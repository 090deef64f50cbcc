#pragma once
// Where each local lives in generated code, and the parts (partition.hpp) that follow from it.
// A value that must survive from one part to another is kept per lane, in an array indexed by the
// lane, which the lane loops access consecutively so that they still vectorise. Cheaper forms
// come first:
//  - Remat: a local set once, by a let of an integer expression of builtins, parameters,
//    constants and other such locals (gid = global_id(0), base = row * cols): recomputed where it
//    is read, so it needs no storage at all and stays a plain induction for the vectoriser.
//  - Uniform: a local every lane holds the same value of (ir/analysis/uniformity.hpp) and that
//    does not depend on memory, set only by lets and assignments at the top of a part, with no
//    break, continue or return before them in the part: those statements are lifted out of the
//    lane loops and run once per workgroup (a tree reduction's `stride = stride >> 1`), and the
//    local is one workgroup value.
//  - The loop variable of a for that contains a barrier is a workgroup value too.
//  - LaneScalar: used in one Lanes part only; an ordinary scalar that mem2reg turns into SSA.
//  - PerLane: everything else.

#include "partition.hpp"

#include <set>
#include <vector>

namespace halfway::codegen::llvm::detail {

enum class LocalStorage : uint8_t {
  Unused,
  Remat,      // recomputed from its let's expression at every read
  Workgroup,  // one value per workgroup: uniform locals and barrier loops' variables
  LaneScalar, // used in one Lanes part only
  PerLane,    // [lanes x T]
};

struct StoragePlan {
  std::vector<LocalStorage> storage;
  std::vector<ir::ExprId> remat;     // Remat locals: the expression of their let
  std::set<const ir::Stmt*> hoisted; // statements run once per workgroup (Part::Uniform)
  std::vector<Part> parts;           // the kernel's parts, hoisted statements split out
};

StoragePlan plan_storage(const ir::Kernel& kernel);

} // namespace halfway::codegen::llvm::detail
