#pragma once
// The bookkeeping of accumulation locals under Options::shadow (shadow.hpp, AccumulationRecord):
// a plan made once per launch that gives some statements an action, and the actions themselves.

#include "program.hpp"

#include <array>
#include <memory>
#include <vector>

namespace halfway::interp {

class Exec;
class LaneMask;

struct AccPlan {
  // Where a leaf's bookkeeping comes from: its own |value| as one term, or the partial sum a
  // tracked shared element or accumulation local holds (its terms, depth and sum carry on).
  enum class Source : uint8_t { Value, Shared, Local };
  // How a tree node combines its arguments' bookkeeping (an fma: a*b + c).
  enum class Arith : uint8_t { Leaf, Add, Neg, Mul, Fma };
  // A node of a step's term e, in postorder (root last). A leaf reads a register.
  struct TreeOp {
    Arith op = Arith::Leaf;
    Source source = Source::Value;
    uint32_t reg = 0;
    uint32_t slot = 0;           // Shared: the tracked array's slot; Local: the local's slot
    ir::ExprId expr = ir::kNone; // Shared: the load, for the element it reads
    ir::ScalarType type = ir::ScalarType::F32;
    std::array<int, 3> args{-1, -1, -1};
  };
  enum class Kind : uint8_t {
    Define,     // a plain definition of a tracked local: the sum restarts from its value
    Step,       // an accumulation step: adds the monomials of `tree`
    Invalidate, // the local's value can no longer be bounded (a tainted definition, an atomic)
    Store,      // a store of a tracked local (or a float conversion of it): records
    Combine,    // a store of a sum of partial sums (a tree over tracked shared elements or locals),
                // or any store to a tracked shared array: records, or sets the element's sum
    None,       // only `clear`
  };
  struct Action {
    Kind kind = Kind::None;
    uint32_t slot = 0;                         // the tracked local's slot
    uint32_t reg = 0;                          // Define: the value's register
    ir::ScalarType type = ir::ScalarType::F32; // Define: the value's type; Combine: the sum's
    std::vector<TreeOp> tree;                  // Step, Combine, and Define when `dynamic`
    bool clear = false; // a store or atomic to memory that accumulation stores target
    // Define: the value reads partial sums (Source Shared leaves), so the sum restarts from their
    // bookkeeping rather than from one term.
    bool dynamic = false;
    // A partial sum reaches the value through an op other than add, sub and neg (a product, a
    // conversion into shared memory): the result cannot be bounded (Store, Combine).
    bool unbounded = false;
    int32_t shared = -1; // Store, Combine, Atomic: the tracked shared array's slot it writes
  };
  std::vector<uint32_t> locals; // slot -> local
  // Tracked shared arrays (slot -> array id): float arrays that hold partial sums, stored from an
  // accumulation local or from a sum of partial sums (specs/f16-narrowing-barrier.md §5).
  std::vector<uint32_t> shared;
  std::vector<Action> actions; // CStmt::acc indexes this
};

// Null when the kernel has no accumulation. Sets CStmt::acc on the statements with an action.
std::shared_ptr<const AccPlan> make_acc_plan(const ir::Kernel& k, std::vector<Node>& nodes,
                                             std::vector<CStmt>& body);

// Runs the action of `cs` on the active lanes of `m` (Define and Step before the assignment,
// Store, Combine and clears after the memory access).
void acc_action(Exec& x, const CStmt& cs, const LaneMask& m);

} // namespace halfway::interp
