#pragma once
// Lane guards: a Lanes part that is just `if (lane < n) { ... }` (local_id(0) < stride in a tree
// reduction, global_id(0) < len(y) in an element-wise kernel) runs its lane loop over [0, n)
// instead of testing every lane: no masked loads and stores, and no iterations for idle lanes.
// n must be lane-invariant and unable to fail: constants, parameters, buffer lengths, group sizes,
// counts, workgroup locals and integer arithmetic on them.

#include "storage.hpp"

#include <optional>

namespace halfway::codegen::llvm::detail {

struct LaneGuard {
  const ir::Stmt* branch = nullptr; // the if: its body is what the lanes run
  ir::ExprId bound = ir::kNone;     // n, a u32
  bool global = false;              // compares global_id(0) (flat mode), not local_id(0)
  // `if (local_id(0) == 0)` (bound kNone): the lanes with local_id(0) = 0 only, as [0, 1).
  bool first = false;
};

// `flat`: the part runs in flat mode, where the lane coordinate is global_id(0).
std::optional<LaneGuard> match_lane_guard(const ir::Kernel& k, const Part& part,
                                          const StoragePlan& storage, bool flat);

} // namespace halfway::codegen::llvm::detail
