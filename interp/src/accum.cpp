// Accumulation bookkeeping for relaxed accumulation (shadow.hpp, AccumulationRecord).
#include "accum.hpp"

#include "access.hpp"
#include "exec.hpp"
#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "slots.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace halfway::interp {

namespace {

using ir::is_float;

class Planner {
public:
  Planner(const ir::Kernel& k, const std::vector<Node>& nodes) : k_(k), nodes_(nodes) {
    for (const ir::Accumulation& a : ir::accumulations(k))
      if (std::find(plan_.locals.begin(), plan_.locals.end(), a.local) == plan_.locals.end())
        plan_.locals.push_back(a.local);
  }
  bool empty() const { return plan_.locals.empty(); }

  void targets(const std::vector<CStmt>& block) {
    for (const CStmt& cs : block) {
      const ir::Stmt& s = *cs.stmt;
      if (s.kind == ir::StmtKind::Store && stored_slot(s.b) >= 0)
        targeted_.insert({static_cast<int>(s.space), s.mem});
      targets(cs.body);
      targets(cs.else_body);
    }
  }

  void annotate(std::vector<CStmt>& block) {
    for (CStmt& cs : block) {
      const ir::Stmt& s = *cs.stmt;
      AccPlan::Action a;
      bool act = false;
      switch (s.kind) {
      case ir::StmtKind::Let:
      case ir::StmtKind::Assign: {
        const int slot = slot_of(s.local);
        if (slot < 0)
          break;
        act = true;
        a.slot = static_cast<uint32_t>(slot);
        if (const auto step = ir::match_step(k_, s)) {
          const ir::ExprId term = step->term;
          a.kind = AccPlan::Kind::Step;
          const ir::Expr& e = k_.expr(s.a);
          if (e.op == ir::Op::Fma) {
            if (reads_tracked(e.args[0]) || reads_tracked(e.args[1])) {
              a.kind = AccPlan::Kind::Invalidate;
              break;
            }
            int x = tree(e.args[0], a), y = tree(e.args[1], a);
            AccPlan::TreeOp mul;
            mul.op = ir::Op::Mul;
            mul.args = {x, y, -1};
            a.tree.push_back(mul);
            const auto& [cx, dx] = shape_[x];
            const auto& [cy, dy] = shape_[y];
            shape_.push_back({cx * cy, dx + dy + 1});
          } else {
            if (reads_tracked(term)) {
              a.kind = AccPlan::Kind::Invalidate;
              break;
            }
            tree(term, a);
          }
          a.terms = shape_.back().first;
          a.depth = shape_.back().second;
          shape_.clear();
        } else if (reads_tracked(s.a)) {
          a.kind = AccPlan::Kind::Invalidate;
        } else {
          a.kind = AccPlan::Kind::Define;
          a.reg = nodes_[s.a].reg;
          a.type = k_.expr(s.a).type;
        }
        break;
      }
      case ir::StmtKind::Store: {
        const int slot = stored_slot(s.b);
        if (slot >= 0) {
          act = true;
          a.kind = AccPlan::Kind::Store;
          a.slot = static_cast<uint32_t>(slot);
        } else if (targeted_.count({static_cast<int>(s.space), s.mem})) {
          act = true;
          a.clear = true;
        }
        break;
      }
      case ir::StmtKind::Atomic: {
        if (s.local != ir::kNone && slot_of(s.local) >= 0) {
          act = true;
          a.kind = AccPlan::Kind::Invalidate;
          a.slot = static_cast<uint32_t>(slot_of(s.local));
        }
        if (targeted_.count({static_cast<int>(s.space), s.mem})) {
          act = true;
          a.clear = true;
        }
        break;
      }
      default:
        break;
      }
      if (act) {
        cs.acc = static_cast<uint32_t>(plan_.actions.size());
        plan_.actions.push_back(std::move(a));
      }
      annotate(cs.body);
      annotate(cs.else_body);
    }
  }

  AccPlan take() { return std::move(plan_); }

private:
  int slot_of(uint32_t local) const {
    auto it = std::find(plan_.locals.begin(), plan_.locals.end(), local);
    return it == plan_.locals.end() ? -1 : static_cast<int>(it - plan_.locals.begin());
  }
  // The slot of the local a store's value is, directly or through one float conversion.
  int stored_slot(ir::ExprId id) const {
    const ir::Expr& e = k_.expr(id);
    if (e.op == ir::Op::LocalGet)
      return slot_of(e.ref);
    if (e.op == ir::Op::Convert && is_float(e.type) && is_float(k_.expr(e.args[0]).type) &&
        k_.expr(e.args[0]).op == ir::Op::LocalGet)
      return slot_of(k_.expr(e.args[0]).ref);
    return -1;
  }
  bool reads_tracked(ir::ExprId id) const {
    const ir::Expr& e = k_.expr(id);
    if (e.op == ir::Op::LocalGet && slot_of(e.ref) >= 0)
      return true;
    for (int i = 0; i < e.nargs; ++i)
      if (reads_tracked(e.args[i]))
        return true;
    return false;
  }
  // Appends the producer tree of `id` in postorder; returns the root's index. shape_ follows
  // `a.tree`: (monomials, most multiplications in one).
  int tree(ir::ExprId id, AccPlan::Action& a) {
    const ir::Expr& e = k_.expr(id);
    AccPlan::TreeOp op;
    op.op = e.op;
    const bool inner = ir::is_producer(e);
    std::pair<uint64_t, uint32_t> shape{1, 0};
    if (!inner) {
      op.leaf = true;
      op.reg = nodes_[id].reg;
      op.type = e.type;
    } else {
      for (int i = 0; i < e.nargs; ++i)
        op.args[i] = tree(e.args[i], a);
      auto sh = [&](int i) { return shape_[op.args[i]]; };
      switch (e.op) {
      case ir::Op::Add:
      case ir::Op::Sub:
        shape = {sh(0).first + sh(1).first, std::max(sh(0).second, sh(1).second)};
        break;
      case ir::Op::Neg:
        shape = sh(0);
        break;
      case ir::Op::Mul:
        shape = {sh(0).first * sh(1).first, sh(0).second + sh(1).second + 1};
        break;
      case ir::Op::Const:
      case ir::Op::LocalGet:
      case ir::Op::ParamGet:
      case ir::Op::GlobalId:
      case ir::Op::LocalId:
      case ir::Op::GroupId:
      case ir::Op::GroupSize:
      case ir::Op::NumGroups:
      case ir::Op::BufferLen:
      case ir::Op::Load:
      case ir::Op::Convert:
      case ir::Op::Bitcast:
      case ir::Op::Pack:
      case ir::Op::Unpack:
      case ir::Op::Div:
      case ir::Op::Rem:
      case ir::Op::Abs:
      case ir::Op::Min:
      case ir::Op::Max:
      case ir::Op::Clamp:
      case ir::Op::Fma:
      case ir::Op::Sqrt:
      case ir::Op::Rsqrt:
      case ir::Op::Exp:
      case ir::Op::Exp2:
      case ir::Op::Log:
      case ir::Op::Log2:
      case ir::Op::Sin:
      case ir::Op::Cos:
      case ir::Op::Tan:
      case ir::Op::Tanh:
      case ir::Op::Pow:
      case ir::Op::Erf:
      case ir::Op::Atan2:
      case ir::Op::Atan:
      case ir::Op::Floor:
      case ir::Op::Ceil:
      case ir::Op::Fract:
      case ir::Op::Copysign:
      case ir::Op::Eq:
      case ir::Op::Ne:
      case ir::Op::Lt:
      case ir::Op::Le:
      case ir::Op::Gt:
      case ir::Op::Ge:
      case ir::Op::And:
      case ir::Op::Or:
      case ir::Op::Xor:
      case ir::Op::Not:
      case ir::Op::Shl:
      case ir::Op::Shr:
      case ir::Op::Select: // only fma reaches here: chains hold add, sub, neg, mul and fma
        shape = {sh(0).first * sh(1).first + sh(2).first,
                 std::max(sh(0).second + sh(1).second + 1, sh(2).second)};
        break;
      }
    }
    a.tree.push_back(op);
    shape_.push_back(shape);
    return static_cast<int>(a.tree.size()) - 1;
  }

  const ir::Kernel& k_;
  const std::vector<Node>& nodes_;
  AccPlan plan_;
  std::set<std::pair<int, uint32_t>> targeted_;
  std::vector<std::pair<uint64_t, uint32_t>> shape_;
};

double magnitude(Exec& x, uint32_t reg, ir::ScalarType type, uint32_t lane) {
  if (!is_float(type))
    return std::numeric_limits<double>::quiet_NaN();
  const uint64_t bits = get_slot(x.reg<std::byte>(reg), slot_bytes(type), lane);
  return std::fabs(num::to_double(ir::format_of(type), bits));
}

} // namespace

std::shared_ptr<const AccPlan> make_acc_plan(const ir::Kernel& k, std::vector<Node>& nodes,
                                             std::vector<CStmt>& body) {
  Planner planner(k, nodes);
  if (planner.empty())
    return nullptr;
  planner.targets(body);
  planner.annotate(body);
  return std::make_shared<const AccPlan>(planner.take());
}

void acc_action(Exec& x, const CStmt& cs, const LaneMask& m) {
  const AccPlan& plan = *x.program().accum;
  const AccPlan::Action& a = plan.actions[cs.acc];
  const uint32_t slots = static_cast<uint32_t>(plan.locals.size());
  AccLane* lanes = x.acc_lanes();
  const ir::Stmt& s = *cs.stmt;
  const uint32_t wg_lanes = x.program().wg_lanes;
  auto record = [&](uint32_t lane) -> AccumulationRecord& {
    AccumulationRecord& r = x.accumulations().emplace_back();
    r.workgroup = x.workgroup_of(lane);
    r.lane = x.local_of(lane);
    r.global_lane = r.workgroup * wg_lanes + r.lane;
    r.destination = Destination{s.space, s.mem, stored_element(x, s, lane)};
    return r;
  };
  switch (a.kind) {
  case AccPlan::Kind::Define:
    for_active(m, [&](uint32_t lane) {
      AccLane& l = lanes[static_cast<size_t>(lane) * slots + a.slot];
      l = AccLane{0, 1, 0, AccLane::Valid, magnitude(x, a.reg, a.type, lane)};
    });
    break;
  case AccPlan::Kind::Step: {
    std::vector<double>& v = x.acc_scratch();
    v.resize(a.tree.size());
    for_active(m, [&](uint32_t lane) {
      AccLane& l = lanes[static_cast<size_t>(lane) * slots + a.slot];
      if (l.state != AccLane::Valid)
        return;
      for (size_t i = 0; i < a.tree.size(); ++i) {
        const AccPlan::TreeOp& op = a.tree[i];
        if (op.leaf) {
          v[i] = magnitude(x, op.reg, op.type, lane);
          continue;
        }
        switch (op.op) {
        case ir::Op::Add:
        case ir::Op::Sub:
          v[i] = v[op.args[0]] + v[op.args[1]];
          break;
        case ir::Op::Neg:
          v[i] = v[op.args[0]];
          break;
        case ir::Op::Mul:
          v[i] = v[op.args[0]] * v[op.args[1]];
          break;
        case ir::Op::Const:
        case ir::Op::LocalGet:
        case ir::Op::ParamGet:
        case ir::Op::GlobalId:
        case ir::Op::LocalId:
        case ir::Op::GroupId:
        case ir::Op::GroupSize:
        case ir::Op::NumGroups:
        case ir::Op::BufferLen:
        case ir::Op::Load:
        case ir::Op::Convert:
        case ir::Op::Bitcast:
        case ir::Op::Pack:
        case ir::Op::Unpack:
        case ir::Op::Div:
        case ir::Op::Rem:
        case ir::Op::Abs:
        case ir::Op::Min:
        case ir::Op::Max:
        case ir::Op::Clamp:
        case ir::Op::Fma:
        case ir::Op::Sqrt:
        case ir::Op::Rsqrt:
        case ir::Op::Exp:
        case ir::Op::Exp2:
        case ir::Op::Log:
        case ir::Op::Log2:
        case ir::Op::Sin:
        case ir::Op::Cos:
        case ir::Op::Tan:
        case ir::Op::Tanh:
        case ir::Op::Pow:
        case ir::Op::Erf:
        case ir::Op::Atan2:
        case ir::Op::Atan:
        case ir::Op::Floor:
        case ir::Op::Ceil:
        case ir::Op::Fract:
        case ir::Op::Copysign:
        case ir::Op::Eq:
        case ir::Op::Ne:
        case ir::Op::Lt:
        case ir::Op::Le:
        case ir::Op::Gt:
        case ir::Op::Ge:
        case ir::Op::And:
        case ir::Op::Or:
        case ir::Op::Xor:
        case ir::Op::Not:
        case ir::Op::Shl:
        case ir::Op::Shr:
        case ir::Op::Select: // only fma reaches here: chains hold add, sub, neg, mul and fma
          v[i] = v[op.args[0]] * v[op.args[1]] + v[op.args[2]];
          break;
        }
      }
      l.steps += 1;
      l.terms += a.terms;
      l.depth = std::max(l.depth, a.depth);
      l.sum += v.back();
    });
    break;
  }
  case AccPlan::Kind::Invalidate:
    for_active(m, [&](uint32_t lane) {
      lanes[static_cast<size_t>(lane) * slots + a.slot].state = AccLane::Unbounded;
    });
    break;
  case AccPlan::Kind::Store:
    for_active(m, [&](uint32_t lane) {
      if (x.stopped(lane))
        return;
      const AccLane& l = lanes[static_cast<size_t>(lane) * slots + a.slot];
      AccumulationRecord& r = record(lane);
      r.local = plan.locals[a.slot];
      r.type = x.program().kernel->locals[r.local].type;
      r.bounded = l.state == AccLane::Valid;
      if (r.bounded) {
        r.steps = l.steps;
        r.terms = l.terms;
        r.depth = l.depth;
        r.abs_sum = l.sum;
      }
    });
    break;
  case AccPlan::Kind::None:
    break;
  }
  if (a.clear)
    for_active(m, [&](uint32_t lane) {
      if (!x.stopped(lane))
        record(lane);
    });
}

} // namespace halfway::interp
