#include "halfway/ir/analysis/uniformity.hpp"

namespace halfway::ir {

namespace {

constexpr UniformValue kGrid{Uniformity::Grid, false};
constexpr UniformValue kWorkgroup{Uniformity::Workgroup, false};
constexpr UniformValue kLane{Uniformity::Lane, false};

} // namespace

std::string_view name(Uniformity u) {
  switch (u) {
  case Uniformity::Grid:
    return "grid";
  case Uniformity::Workgroup:
    return "workgroup";
  case Uniformity::Lane:
    return "lane";
  }
  return "lane";
}

UniformityAnalysis::UniformityAnalysis(const Kernel& k, LoadLevel loads)
    : k_(k), loads_(loads), locals_(k.locals.size()) {
  // Levels only rise, so the passes end; the last one changed nothing, so the control it
  // recorded for every statement is the fixpoint's.
  do {
    changed_ = false;
    returned_ = kGrid;
    divergent_barrier_ = nullptr;
    flow(k_.body, kGrid);
  } while (changed_);
}

UniformValue UniformityAnalysis::expr(ExprId id) const {
  const Expr& e = k_.expr(id);
  UniformValue v = kGrid;
  switch (info(e.op).family) {
  case OpFamily::Leaf:
    return e.op == Op::LocalGet ? locals_[e.ref] : kGrid;
  case OpFamily::Builtin:
    if (e.op == Op::GlobalId || e.op == Op::LocalId) {
      if (loads_ == LoadLevel::Address && e.imm < 3 && k_.workgroup[e.imm] == 1)
        return e.op == Op::LocalId ? kGrid : kWorkgroup;
      return kLane;
    }
    return e.op == Op::GroupId ? kWorkgroup : kGrid;
  case OpFamily::Memory:
    // specs/ir.md, "Uniformity": which memory every lane sees alike.
    if (e.space == Space::Private || (loads_ == LoadLevel::Visible && e.space == Space::Buffer &&
                                      k_.params[e.ref].access != Access::Read))
      return {Uniformity::Lane, true};
    v = {e.space == Space::Shared ? Uniformity::Workgroup : Uniformity::Grid, true};
    break;
  case OpFamily::Convert:
  case OpFamily::Bits:
  case OpFamily::Arith:
  case OpFamily::Sign:
  case OpFamily::MinMax:
  case OpFamily::Fma:
  case OpFamily::Math:
  case OpFamily::Integral:
  case OpFamily::Compare:
  case OpFamily::Logic:
  case OpFamily::Shift:
  case OpFamily::Select:
    break;
  }
  for (int i = 0; i < e.nargs; ++i)
    v = v.join(expr(e.args[i]));
  return v;
}

void UniformityAnalysis::assign(uint32_t local, UniformValue v) {
  if (local == kNone)
    return;
  UniformValue joined = locals_[local].join(v);
  if (joined == locals_[local])
    return;
  locals_[local] = joined;
  changed_ = true;
}

void UniformityAnalysis::leave(const Stmt* loop, UniformValue v) {
  UniformValue& l = left_early_[loop];
  UniformValue joined = l.join(v);
  if (joined == l)
    return;
  l = joined;
  changed_ = true;
}

void UniformityAnalysis::flow(const Body& block, UniformValue control) {
  for (const Stmt& s : block) {
    const UniformValue d = control.join(returned_);
    if (s.kind == StmtKind::Barrier && d.level == Uniformity::Lane && !divergent_barrier_)
      divergent_barrier_ = &s; // flow visits statements in program order
    switch (s.kind) {
    case StmtKind::Let:
    case StmtKind::Assign:
      assign(s.local, d.join(expr(s.a)));
      break;
    case StmtKind::Atomic:
      assign(s.local, {Uniformity::Lane, true});
      break;
    case StmtKind::If: {
      const UniformValue c = d.join(expr(s.a));
      flow(s.body, c);
      flow(s.else_body, c);
      break;
    }
    case StmtKind::For:
    case StmtKind::While: {
      UniformValue c = d;
      if (auto it = left_early_.find(&s); it != left_early_.end())
        c = c.join(it->second);
      // A for loop's variable, assigned in the body, decides the iterations like its bounds.
      if (s.kind == StmtKind::For)
        c = c.join(locals_[s.local]);
      for (ExprId e : stmt_exprs(s))
        c = c.join(expr(e));
      if (s.kind == StmtKind::For)
        assign(s.local, c);
      loops_.push_back(&s);
      flow(s.body, c);
      loops_.pop_back();
      break;
    }
    case StmtKind::Break:
    case StmtKind::Continue:
      // The lanes that take it run fewer iterations than the others.
      if (!loops_.empty())
        leave(loops_.back(), d);
      break;
    case StmtKind::Return:
      returned_ = returned_.join(d);
      for (const Stmt* l : loops_)
        leave(l, d);
      break;
    case StmtKind::Store:
    case StmtKind::Barrier:
      break;
    }
  }
}

} // namespace halfway::ir
