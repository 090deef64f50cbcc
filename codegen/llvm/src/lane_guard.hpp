#pragma once
// Lane guards: a Lanes part that is just `if (lane < n) { ... }` (local_id(0) < stride in a tree
// reduction, global_id(0) < len(y) in an element-wise kernel) runs its lane loop over [0, n)
// instead of testing every lane: no masked loads and stores, and no iterations for idle lanes.
// n must be lane-invariant and unable to fail: constants, parameters, buffer lengths, group sizes,
// counts, workgroup locals and integer arithmetic on them.

#include "storage.hpp"

#include <optional>
#include <unordered_map>

namespace halfway::codegen::llvm::detail {

struct LaneGuard {
  const ir::Stmt* branch = nullptr; // the if: its body is what the lanes run
  ir::ExprId bound = ir::kNone;     // n, a u32
  bool global = false;              // compares global_id(0) (flat mode), not local_id(0)
  // `if (local_id(0) == 0)` (bound kNone): the lanes with local_id(0) = 0 only, as [0, 1).
  bool first = false;
};

// Locals whose one write in the kernel is a let at the top level of the Lanes part at hand,
// with its expression: read later in that part, such a local is that expression (edge_guard.hpp).
using PartLets = std::unordered_map<uint32_t, ir::ExprId>;

// The expression behind remat locals (storage.hpp), and behind `lets` when given.
ir::ExprId resolve_remat(const ir::Kernel& k, ir::ExprId id, const StoragePlan& s,
                         const PartLets* lets = nullptr);

// Where an expression must be the same for every lane: the whole workgroup (any mode), or one row
// of the x lane loop of a part not in flat mode, where group ids and the y and z coordinates are
// fixed. True only for integer (and comparison) expressions that cannot fail.
enum class Over : uint8_t { Workgroup, Row };
bool lane_invariant(const ir::Kernel& k, ir::ExprId id, const StoragePlan& s, Over over,
                    const PartLets* lets = nullptr);

// `flat`: the part runs in flat mode, where the lane coordinate is global_id(0).
std::optional<LaneGuard> match_lane_guard(const ir::Kernel& k, const Part& part,
                                          const StoragePlan& storage, bool flat);

} // namespace halfway::codegen::llvm::detail
