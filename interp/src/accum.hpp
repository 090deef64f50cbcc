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
  // A node of a step's term e, in postorder (root last). A leaf reads a register.
  struct TreeOp {
    ir::Op op = ir::Op::Const;
    bool leaf = false;
    uint32_t reg = 0;
    ir::ScalarType type = ir::ScalarType::F32;
    std::array<int, 3> args{-1, -1, -1};
  };
  enum class Kind : uint8_t {
    Define,     // a plain definition of a tracked local: the sum restarts from its value
    Step,       // an accumulation step: adds the monomials of `tree`
    Invalidate, // the local's value can no longer be bounded (a tainted definition, an atomic)
    Store,      // a store of a tracked local (or a float conversion of it): records
    None,       // only `clear`
  };
  struct Action {
    Kind kind = Kind::None;
    uint32_t slot = 0;                         // the tracked local's slot
    uint32_t reg = 0;                          // Define: the value's register
    ir::ScalarType type = ir::ScalarType::F32; // Define: the value's type
    std::vector<TreeOp> tree;                  // Step
    uint64_t terms = 0;                        // Step: monomials of the term
    uint32_t depth = 0;                        // Step: most multiplications in one monomial
    bool clear = false; // a store or atomic to memory that accumulation stores target
  };
  std::vector<uint32_t> locals; // slot -> local
  std::vector<Action> actions;  // CStmt::acc indexes this
};

// Null when the kernel has no accumulation. Sets CStmt::acc on the statements with an action.
std::shared_ptr<const AccPlan> make_acc_plan(const ir::Kernel& k, std::vector<Node>& nodes,
                                             std::vector<CStmt>& body);

// Runs the action of `cs` on the active lanes of `m` (Define and Step before the assignment,
// Store and clears after the memory access).
void acc_action(Exec& x, const CStmt& cs, const LaneMask& m);

} // namespace halfway::interp
