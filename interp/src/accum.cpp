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
using Arith = AccPlan::Arith;
using Source = AccPlan::Source;

class Planner {
public:
  Planner(const ir::Kernel& k, const std::vector<Node>& nodes) : k_(k), nodes_(nodes) {
    for (const ir::Accumulation& a : ir::accumulations(k))
      if (std::find(plan_.locals.begin(), plan_.locals.end(), a.local) == plan_.locals.end())
        plan_.locals.push_back(a.local);
  }
  bool empty() const { return plan_.locals.empty(); }

  // The shared arrays that hold partial sums: those a store of an accumulation local or of a
  // value that reads partial sums writes, to a fixpoint (a tree reduction reads the array it
  // writes; a second stage may read the first's array).
  void shared_arrays(const std::vector<CStmt>& body) {
    for (bool changed = true; changed;) {
      changed = false;
      ir::for_each_stmt(k_.body, [&](const ir::Stmt& s) {
        if (s.kind == ir::StmtKind::Store && s.space == ir::Space::Shared &&
            shared_slot(s.mem) < 0 && is_float(k_.shared[s.mem].type) &&
            (stored_slot(s.b) >= 0 || reads_state(s.b))) {
          plan_.shared.push_back(s.mem);
          changed = true;
        }
      });
    }
    targets(body);
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
            AccPlan::TreeOp mul;
            mul.op = Arith::Mul;
            mul.args = {tree(e.args[0], a, false), tree(e.args[1], a, false), -1};
            a.tree.push_back(mul);
          } else {
            if (reads_tracked(term)) {
              a.kind = AccPlan::Kind::Invalidate;
              break;
            }
            tree(term, a, true);
          }
          if (a.unbounded)
            a.kind = AccPlan::Kind::Invalidate;
        } else if (reads_tracked(s.a)) {
          a.kind = AccPlan::Kind::Invalidate;
        } else if (reads_state(s.a)) {
          // A sum seeded from partial sums in shared memory carries their terms on.
          a.kind = AccPlan::Kind::Define;
          a.dynamic = true;
          tree(s.a, a, true);
          if (a.unbounded)
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
        const int dest = s.space == ir::Space::Shared ? shared_slot(s.mem) : -1;
        if (slot >= 0) {
          act = true;
          a.kind = AccPlan::Kind::Store;
          a.slot = static_cast<uint32_t>(slot);
          a.shared = dest;
          // A partial sum narrowed into shared memory has lost more than the bound counts.
          a.unbounded = dest >= 0 && k_.expr(s.b).op != ir::Op::LocalGet;
        } else if (dest >= 0 || reads_state(s.b)) {
          act = true;
          a.kind = AccPlan::Kind::Combine;
          a.shared = dest;
          ir::ExprId root = s.b;
          if (dest < 0 && float_conversion(root))
            root = k_.expr(root).args[0]; // the store narrows the sum, as `y[row] = acc` may
          a.type = k_.expr(root).type;
          locals_are_state_ = true;
          tree(root, a, true);
          locals_are_state_ = false;
          a.unbounded = a.unbounded || !is_float(a.type);
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
        if (s.space == ir::Space::Shared && shared_slot(s.mem) >= 0) {
          act = true;
          a.shared = shared_slot(s.mem);
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
  void targets(const std::vector<CStmt>& block) {
    for (const CStmt& cs : block) {
      const ir::Stmt& s = *cs.stmt;
      if (s.kind == ir::StmtKind::Store && (stored_slot(s.b) >= 0 || reads_state(s.b)))
        targeted_.insert({static_cast<int>(s.space), s.mem});
      targets(cs.body);
      targets(cs.else_body);
    }
  }
  int slot_of(uint32_t local) const {
    auto it = std::find(plan_.locals.begin(), plan_.locals.end(), local);
    return it == plan_.locals.end() ? -1 : static_cast<int>(it - plan_.locals.begin());
  }
  int shared_slot(uint32_t array) const {
    auto it = std::find(plan_.shared.begin(), plan_.shared.end(), array);
    return it == plan_.shared.end() ? -1 : static_cast<int>(it - plan_.shared.begin());
  }
  bool float_conversion(ir::ExprId id) const {
    const ir::Expr& e = k_.expr(id);
    return e.op == ir::Op::Convert && is_float(e.type) && is_float(k_.expr(e.args[0]).type);
  }
  // The slot of the local a store's value is, directly or through one float conversion.
  int stored_slot(ir::ExprId id) const {
    const ir::Expr& e = k_.expr(id);
    if (e.op == ir::Op::LocalGet)
      return slot_of(e.ref);
    if (float_conversion(id) && k_.expr(e.args[0]).op == ir::Op::LocalGet)
      return slot_of(k_.expr(e.args[0]).ref);
    return -1;
  }
  // Whether `id` reads an accumulation local.
  bool reads_tracked(ir::ExprId id) const {
    const ir::Expr& e = k_.expr(id);
    if (e.op == ir::Op::LocalGet && slot_of(e.ref) >= 0)
      return true;
    for (int i = 0; i < e.nargs; ++i)
      if (reads_tracked(e.args[i]))
        return true;
    return false;
  }
  // Whether `id` reads a partial sum: an accumulation local or an element of a tracked shared
  // array.
  bool reads_state(ir::ExprId id) const {
    const ir::Expr& e = k_.expr(id);
    if (e.op == ir::Op::Load && e.space == ir::Space::Shared && shared_slot(e.ref) >= 0)
      return true;
    if (e.op == ir::Op::LocalGet && slot_of(e.ref) >= 0)
      return true;
    for (int i = 0; i < e.nargs; ++i)
      if (reads_state(e.args[i]))
        return true;
    return false;
  }
  // Appends the producer tree of `id` in postorder; returns the root's index. `sum`: the path
  // from the root holds only add, sub and neg (and an fma's addend), so a partial sum read here is
  // added, term by term, into the value; one read anywhere else makes the action unbounded.
  int tree(ir::ExprId id, AccPlan::Action& a, bool sum) {
    const ir::Expr& e = k_.expr(id);
    AccPlan::TreeOp op;
    op.expr = id;
    op.reg = nodes_[id].reg;
    op.type = e.type;
    if (e.op == ir::Op::Load && e.space == ir::Space::Shared && shared_slot(e.ref) >= 0) {
      op.source = Source::Shared;
      op.slot = static_cast<uint32_t>(shared_slot(e.ref));
    } else if (locals_are_state_ && e.op == ir::Op::LocalGet && slot_of(e.ref) >= 0) {
      op.source = Source::Local;
      op.slot = static_cast<uint32_t>(slot_of(e.ref));
    } else if (is_float(e.type) && (e.op == ir::Op::Add || e.op == ir::Op::Sub)) {
      op.op = Arith::Add;
    } else if (is_float(e.type) && e.op == ir::Op::Neg) {
      op.op = Arith::Neg;
    } else if (is_float(e.type) && e.op == ir::Op::Mul) {
      op.op = Arith::Mul;
    } else if (is_float(e.type) && e.op == ir::Op::Fma) {
      op.op = Arith::Fma;
    } else if (reads_state(id)) {
      a.unbounded = true; // a partial sum through a conversion, min, select, ...: not followed
    }
    if (op.source != Source::Value && !sum)
      a.unbounded = true;
    if (op.op != Arith::Leaf)
      for (int i = 0; i < e.nargs; ++i)
        op.args[i] =
            tree(e.args[i], a, sum && (op.op == Arith::Add || op.op == Arith::Neg || i == 2));
    a.tree.push_back(op);
    return static_cast<int>(a.tree.size()) - 1;
  }

  const ir::Kernel& k_;
  const std::vector<Node>& nodes_;
  AccPlan plan_;
  std::set<std::pair<int, uint32_t>> targeted_;
  bool locals_are_state_ = false; // tree(): accumulation locals are partial sums (Combine)
};

double magnitude(Exec& x, uint32_t reg, ir::ScalarType type, uint32_t lane) {
  if (!is_float(type))
    return std::numeric_limits<double>::quiet_NaN();
  const uint64_t bits = get_slot(x.reg<std::byte>(reg), slot_bytes(type), lane);
  return std::fabs(num::to_double(ir::format_of(type), bits));
}

// The underflow weight of a product p*q of two sums of monomials (shadow.hpp): an underflow
// inside p_i is scaled by q_j's factors and one inside q_j by p_i's, and the product's own
// rounding adds one unscaled eta per pair, unless it cannot be subnormal on any device: both
// sides single monomials (no cancellation, so |p*q| is their |product|) at least twice the
// smallest normal (a device's partial products differ from ours by far less than a factor 2), or
// exactly zero.
double product_weight(const AccLane& p, const AccLane& q, ir::ScalarType type) {
  const double product = p.sum * q.sum; // (an exact zero has no rounding error)
  const bool normal =
      p.terms == 1 && q.terms == 1 &&
      (product == 0 || product >= 2 * num::info(ir::format_of(type)).min_normal_value);
  return p.weight * q.big + p.big * q.weight +
         (normal ? 0.0 : static_cast<double>(p.terms) * static_cast<double>(q.terms));
}

// Counts the monomials of `tree` on `lane` (shadow.hpp): a leaf is one term of its |value|, or
// the partial sum it reads; sums add their terms, products multiply them (each monomial one
// multiplication deeper), an fma does both.
// The result is Unbounded when a partial sum it reads is not Valid.
AccLane evaluate(Exec& x, const std::vector<AccPlan::TreeOp>& tree, uint32_t lane) {
  constexpr AccLane kUnbounded{0, 0, 0, AccLane::Unbounded, 0};
  const AccPlan& plan = *x.program().accum;
  std::vector<AccLane>& v = x.acc_scratch();
  v.resize(tree.size());
  for (size_t i = 0; i < tree.size(); ++i) {
    const AccPlan::TreeOp& op = tree[i];
    auto arg = [&](int k) -> const AccLane& { return v[static_cast<size_t>(op.args[k])]; };
    auto state = [&](int n) {
      for (int k = 0; k < n; ++k)
        if (arg(k).state != AccLane::Valid)
          return AccLane::Unbounded;
      return AccLane::Valid;
    };
    switch (op.op) {
    case Arith::Leaf:
      if (op.source == Source::Value) {
        const double m = magnitude(x, op.reg, op.type, lane);
        v[i] = {0, 1, 0, AccLane::Valid, m, 0, std::max(1.0, m)};
      } else if (op.source == Source::Local) {
        v[i] = x.acc_lanes()[size_t{lane} * plan.locals.size() + op.slot];
      } else {
        const std::vector<AccLane>& elements = x.acc_shared(op.slot);
        const uint64_t e = loaded_element(x, x.program().kernel->expr(op.expr), lane);
        v[i] = e < elements.size() ? elements[e] : kUnbounded;
      }
      if (v[i].state != AccLane::Valid)
        v[i] = kUnbounded;
      break;
    case Arith::Add:
      v[i] = {arg(0).steps + arg(1).steps,
              arg(0).terms + arg(1).terms,
              std::max(arg(0).depth, arg(1).depth),
              state(2),
              arg(0).sum + arg(1).sum,
              arg(0).weight + arg(1).weight,
              arg(0).big + arg(1).big};
      break;
    case Arith::Neg:
      v[i] = arg(0);
      break;
    case Arith::Mul:
      v[i] = {arg(0).steps + arg(1).steps,     arg(0).terms * arg(1).terms,
              arg(0).depth + arg(1).depth + 1, state(2),
              arg(0).sum * arg(1).sum,         product_weight(arg(0), arg(1), op.type),
              arg(0).big * arg(1).big};
      break;
    case Arith::Fma:
      v[i] = {arg(0).steps + arg(1).steps + arg(2).steps,
              arg(0).terms * arg(1).terms + arg(2).terms,
              std::max(arg(0).depth + arg(1).depth + 1, arg(2).depth),
              state(3),
              arg(0).sum * arg(1).sum + arg(2).sum,
              product_weight(arg(0), arg(1), op.type) + arg(2).weight,
              arg(0).big * arg(1).big + arg(2).big};
      break;
    }
  }
  return v.back();
}

AccLane unless(AccLane l, bool unbounded) {
  if (unbounded)
    l.state = AccLane::Unbounded;
  return l;
}

} // namespace

std::shared_ptr<const AccPlan> make_acc_plan(const ir::Kernel& k, std::vector<Node>& nodes,
                                             std::vector<CStmt>& body) {
  Planner planner(k, nodes);
  if (planner.empty())
    return nullptr;
  planner.shared_arrays(body);
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
  auto bounded = [](AccumulationRecord& r, const AccLane& l) {
    r.bounded = l.state == AccLane::Valid;
    if (r.bounded) {
      r.steps = l.steps;
      r.terms = l.terms;
      r.depth = l.depth;
      r.abs_sum = l.sum;
      r.underflow_weight = l.weight;
    }
  };
  // The tracked shared element a store or atomic of `lane` wrote, or null (out of range: the
  // access failed).
  auto shared_element = [&](uint32_t lane) -> AccLane* {
    std::vector<AccLane>& elements = x.acc_shared(static_cast<uint32_t>(a.shared));
    const uint64_t e = stored_element(x, s, lane);
    return e < elements.size() ? &elements[e] : nullptr;
  };
  switch (a.kind) {
  case AccPlan::Kind::Define:
    for_active(m, [&](uint32_t lane) {
      AccLane& l = lanes[static_cast<size_t>(lane) * slots + a.slot];
      if (a.dynamic) {
        l = evaluate(x, a.tree, lane);
      } else {
        const double v = magnitude(x, a.reg, a.type, lane);
        l = AccLane{0, 1, 0, AccLane::Valid, v, 0, std::max(1.0, v)};
      }
    });
    break;
  case AccPlan::Kind::Step:
    for_active(m, [&](uint32_t lane) {
      AccLane& l = lanes[static_cast<size_t>(lane) * slots + a.slot];
      if (l.state != AccLane::Valid)
        return;
      const AccLane t = evaluate(x, a.tree, lane);
      if (t.state != AccLane::Valid) {
        l.state = AccLane::Unbounded;
        return;
      }
      l.steps += 1 + t.steps;
      l.terms += t.terms;
      l.depth = std::max(l.depth, t.depth);
      l.sum += t.sum;
      l.weight += t.weight;
      l.big += t.big;
    });
    break;
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
      bounded(r, l);
      if (a.shared >= 0)
        if (AccLane* e = shared_element(lane))
          *e = unless(l, a.unbounded || l.state != AccLane::Valid);
    });
    break;
  case AccPlan::Kind::Combine: {
    // Every lane reads the partial sums before any writes one (`sh[lid] = sh[lid] + sh[lid + s]`
    // reads the element it writes).
    std::vector<std::pair<uint32_t, AccLane>> done;
    for_active(m, [&](uint32_t lane) {
      if (!x.stopped(lane))
        done.emplace_back(lane, unless(evaluate(x, a.tree, lane), a.unbounded));
    });
    for (const auto& [lane, l] : done) {
      if (a.shared >= 0) {
        if (AccLane* e = shared_element(lane))
          *e = l;
        continue;
      }
      AccumulationRecord& r = record(lane);
      r.type = a.type;
      bounded(r, l);
    }
    break;
  }
  case AccPlan::Kind::None:
    break;
  }
  if (s.kind == ir::StmtKind::Atomic && a.shared >= 0)
    for_active(m, [&](uint32_t lane) {
      if (AccLane* e = shared_element(lane))
        e->state = AccLane::Unbounded;
    });
  if (a.clear)
    for_active(m, [&](uint32_t lane) {
      if (!x.stopped(lane))
        record(lane);
    });
}

} // namespace halfway::interp
