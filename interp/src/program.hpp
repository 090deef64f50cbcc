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

// One load of a dot loop: every index is either the loop's counter or a value the loop leaves
// unchanged (a local it does not assign, a fixed or a lane node), all 32-bit.
struct DotLoad {
  uint32_t node = 0; // the Load node
  ir::Space space = ir::Space::Shared;
  uint32_t mem = 0;
  uint32_t rank = 1;
  std::array<uint32_t, 3> reg{};        // each index's register
  std::array<bool, 3> counter{};        // whether the index is the loop's counter
  std::array<ir::ScalarType, 3> type{}; // each index's type (I32 or U32)
};

// A `for` loop whose body is the single statement acc = add(acc, mul(x, y)) (either order of the
// add's operands) on f32 or f64, with x and y loads of the form above: dot.cpp runs it as one
// fused pass per iteration when its preconditions hold at run time.
struct DotLoop {
  uint32_t acc = 0; // the accumulator local
  ir::ScalarType type = ir::ScalarType::F32;
  bool acc_first = true;       // add(acc, product), not add(product, acc)
  uint32_t add = 0, mul = 0;   // nodes
  std::array<DotLoad, 2> load; // mul's operands, in order (the same node twice for x * x)
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
  std::vector<DotLoop> dots;                     // the loops CStmt::dot names
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
