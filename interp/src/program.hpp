#pragma once
// A verified kernel compiled for lockstep execution: every expression node gets a register (one
// slot per lane) and an evaluation function chosen once from its op and types, and every
// statement gets the list of nodes to evaluate, in dependency order, before it acts.
//
// Register layout: node e writes register e. LocalGet nodes do not compute anything: they read
// the local's register (kernel.exprs.size() + local) directly. Constants, scalar parameters,
// buffer lengths and the group-size builtins are filled once per executor ("fixed" nodes);
// global_id, local_id and group_id once per batch ("lane" nodes).

#include "halfway/interp/interp.hpp"
#include "halfway/ir/narrowing.hpp"

#include <memory>
#include <vector>

namespace halfway::interp {

class Exec;
struct Node;
struct ExactSite;
using EvalFn = void (*)(Exec& x, const Node& n);

struct Node {
  ir::ExprId id = ir::kNone;
  const ir::Expr* expr = nullptr;
  ir::Op op = ir::Op::Const;
  ir::ScalarType type = ir::ScalarType::F32;     // result type
  ir::ScalarType arg_type = ir::ScalarType::F32; // type of the first operand (when there is one)
  uint8_t nargs = 0;
  std::array<uint32_t, 4> arg{}; // operand registers
  uint32_t reg = 0;              // result register
  EvalFn eval = nullptr;
  const ExactSite* site = nullptr; // set when this node is a narrowing convert
};

enum class NodeClass : uint8_t { Computed, Fixed, Lane, LocalAlias };

struct CStmt {
  const ir::Stmt* stmt = nullptr;
  std::vector<uint32_t> eval; // nodes to evaluate before the statement acts (all its roots; For: a)
  std::vector<uint32_t> bound; // For: b, evaluated before every iteration
  std::vector<uint32_t> step;  // For: c, evaluated after every iteration
  std::vector<CStmt> body, else_body;
  uint32_t acc = ir::kNone; // the statement's AccPlan action (accum.hpp), if any
  uint32_t barrier = 0;     // Barrier: its number, from 1 (0 stands for the batch's start)
  uint32_t dot = ir::kNone; // For: its DotLoop in Program::dots, when it has that shape (dot.cpp)
};

// One load of a dot loop (dot.cpp): from a buffer or a shared array, with 32-bit indices that
// the planner proved affine in the loop's counter (see DotLoop).
struct DotLoad {
  uint32_t node = 0; // the Load node
  ir::Space space = ir::Space::Shared;
  uint32_t mem = 0;
  uint32_t rank = 1;
  std::array<uint32_t, 3> reg{};        // each index's register
  std::array<ir::ScalarType, 3> type{}; // each index's type (I32 or U32)
  // Each index: a value the loop leaves unchanged, the counter itself, or another expression
  // affine in it (which dot.cpp learns by evaluating it).
  enum class Index : uint8_t { Invariant, Counter, Affine };
  std::array<Index, 3> how{};
};

// One statement acc = add(acc, mul(x, y)) (either order of the add's operands) of a dot loop.
struct DotTerm {
  uint32_t acc = 0; // the accumulator local
  bool acc_first = true;
  uint32_t add = 0, mul = 0; // nodes
  uint32_t x = 0, y = 0;     // mul's operands, as indices into DotLoop::loads (x == y for v * v)
  // The statement's other nodes (its loads' index expressions), in evaluation order.
  std::vector<uint32_t> index_nodes;
};

// A `for` loop with a 32-bit counter and fixed bound and step whose body is a sequence of
//  - index lets: a 32-bit integer local, assigned once in the body, set to an index expression;
//  - terms: acc = add(acc, mul(x, y)) on f32 or f64 (one type for the loop), x and y loads;
// where every index expression (of a let or a load) is affine in the counter modulo 2^32: add,
// sub, neg, not, a mul with one side free of the counter and shl by a constant, over the counter,
// the lets assigned before it in the body, and values the loop does not change (fixed and lane
// nodes, locals the body does not assign), which may also be combined by and, or, xor, min, max
// and shr by a constant. Nothing in such an expression can fail, so dot.cpp can evaluate it at
// the first two iterations to learn each lane's index as a linear function of the iteration, and
// run the loop as one fused pass per term and iteration when its preconditions hold at run time.
struct DotLoop {
  ir::ScalarType type = ir::ScalarType::F32;
  std::vector<DotLoad> loads; // every load of an iteration, in the order the general path reads
  std::vector<DotTerm> terms;
  std::vector<uint32_t> body_term; // per body statement: its term, or kNone for an index let
  bool affine = false;             // some load has an Affine index
};

struct AccPlan;

struct Program {
  const ir::Kernel* kernel = nullptr;
  Options options;
  std::vector<Node> nodes; // indexed by ExprId
  std::vector<NodeClass> cls;
  std::vector<uint32_t> lane_nodes; // builtins computed per batch
  uint32_t registers = 0;           // exprs + locals
  std::vector<CStmt> body;
  std::vector<DotLoop> dots; // the loops CStmt::dot names
  uint32_t dot_loads = 0;    // the most loads a loop of `dots` has (Exec's scratch for them)
  std::vector<std::shared_ptr<ExactSite>> sites; // shared_ptr: ExactSite is incomplete here
  // Accumulation bookkeeping (accum.hpp): with Options::shadow, for kernels with accumulations.
  std::shared_ptr<const AccPlan> accum;
  bool has_barrier = false;
  uint32_t barriers = 0; // barrier statements, numbered 1..barriers
  uint32_t wg_lanes = 1;
  // Workgroups per lockstep batch: 1 for kernels with barriers or shared memory.
  uint32_t batch_groups = 1;

  uint32_t local_reg(uint32_t local) const {
    return static_cast<uint32_t>(kernel->exprs.size()) + local;
  }
};

Program compile(const ir::VerifiedKernel& kernel, const Options& options);

// Finds the dot loops of p.body and sets their CStmt::dot (dot.cpp).
void plan_dot_loops(Program& p);

// The evaluation function for a node (eval_select.cpp), and per family.
EvalFn select_eval(const Program& p, const Node& n);
EvalFn float_eval(const Program& p, const Node& n);
EvalFn int_eval(const Program& p, const Node& n);
EvalFn logic_eval(const Program& p, const Node& n);
EvalFn convert_eval(const Program& p, const Node& n);
EvalFn memory_eval(const Program& p, const Node& n);

} // namespace halfway::interp
