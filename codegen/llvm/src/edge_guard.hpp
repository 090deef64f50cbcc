#pragma once
// Edge guards: in a Lanes part outside flat mode, an `if` whose condition bounds the lane's x
// coordinate (`if (row < m && ka < k)` around a matmul tile's load, `if (i < n)` around a
// reduction's) holds for every lane of most rows and fails only at the grid's edge. The lane loop
// then runs in two versions (emit_lanes): one that takes such ifs as true, chosen when a test
// before the row's x loop proves that every lane of the row takes them, and the general one.
// Without it the vectoriser turns the guarded accesses into masked loads and stores.
//
// A guard's condition is a conjunction (`and`) of terms. A term either has one value along the
// row (lane_invariant, Over::Row) or compares (lt, le, gt, ge on u32) a lane operand with such a
// value, where a lane operand is `c + x` modulo 2^32 for a row-invariant c: local_id(0) or
// global_id(0), plus or minus row-invariant values. While `c + x` does not wrap along the row it
// grows with x, each comparison is monotone in x, and a conjunction of monotone terms that holds
// at the row's first and last lanes holds at every lane between. The test is exactly that: each
// condition at x = 0 and x = X - 1, and each lane operand at X - 1 not below its value at 0.
// Nothing in such a condition can fail or read memory, so evaluating it before the loop, for
// lanes that may never reach the if, is harmless. Besides remat locals, a condition may read
// locals whose one write in the kernel is a let at the top level of the same part (a matmul's
// `ka = t0 * 16 + tx` inside the barrier loop over tiles): the test recomputes their expressions,
// whose inputs (workgroup values, which a Lanes part never writes, and the lane's coordinates) are
// the same before the loop as at the let.

#include "lane_guard.hpp"

#include <optional>
#include <vector>

namespace halfway::codegen::llvm::detail {

struct EdgeGuards {
  std::vector<const ir::Stmt*> ifs;      // the ifs the fast version takes as true
  std::vector<ir::ExprId> lane_operands; // every `c + x` their conditions compare
  PartLets lets;                         // the part's single lets, recomputed by the test
};

// The part's edge guards, anywhere in its statements, or nullopt when it has none.
std::optional<EdgeGuards> match_edge_guards(const ir::Kernel& k, const Part& part,
                                            const StoragePlan& s);

} // namespace halfway::codegen::llvm::detail
