#include "analysis.hpp"

#include <algorithm>
#include <set>

namespace halfway::pipeline::analysis {
namespace {

using ir::ExprId;
using ir::Op;
using ir::StmtKind;

bool loads(const ir::Expr& x) {
  return x.op == Op::Load;
}
bool floats(const ir::Expr& x) {
  return ir::is_float(x.type);
}

bool assigns(const ir::Stmt& s) {
  return s.kind == StmtKind::Assign || s.kind == StmtKind::For ||
         (s.kind == StmtKind::Atomic && s.local != ir::kNone);
}

} // namespace

std::vector<ExprId> subexprs(const ir::Kernel& k, ExprId root) {
  std::vector<ExprId> out, stack{root};
  std::set<ExprId> seen;
  while (!stack.empty()) {
    ExprId e = stack.back();
    stack.pop_back();
    if (e == ir::kNone || !seen.insert(e).second)
      continue;
    out.push_back(e);
    const ir::Expr& x = k.expr(e);
    for (uint8_t a = 0; a < x.nargs; ++a)
      stack.push_back(x.args[a]);
  }
  return out;
}

LaunchView::LaunchView(const Pipeline& p, const Launch& l)
    : l_(&l), k_(&l.kernel.kernel()), sizes_(k_->params.size(), 0),
      own_locals_(k_->locals.size(), false) {
  for (uint32_t j = 0; j < k_->params.size(); ++j) {
    if (const BufferDecl* b = p.bound(l, j))
      sizes_[j] = b->size;
  }
  // Own-index locals: `let L = global_id(0)` and nothing else ever assigns L.
  std::vector<bool> reassigned(k_->locals.size(), false);
  ir::for_each_stmt(k_->body, [&](const ir::Stmt& s) {
    if (assigns(s))
      reassigned[s.local] = true;
    if (s.kind == StmtKind::Let) {
      const ir::Expr& v = k_->expr(s.a);
      if (v.op == Op::GlobalId && v.imm == 0)
        own_locals_[s.local] = true;
    }
  });
  for (size_t i = 0; i < own_locals_.size(); ++i)
    own_locals_[i] = own_locals_[i] && !reassigned[i];

  tainted_locals_ = taint(true, loads);
  float_locals_ = taint(false, floats);
}

std::vector<bool> LaunchView::taint(bool atomics, Leaf leaf) {
  // To a fixed point: a local is tainted when any value assigned to it is, or when it is assigned
  // under control flow that is.
  std::vector<bool> tainted(k_->locals.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    std::function<void(const ir::Body&, bool)> walk = [&](const ir::Body& block, bool control) {
      for (const ir::Stmt& s : block) {
        bool value = control;
        for (ExprId e : ir::stmt_exprs(s))
          value = value || depends(tainted, leaf, e);
        if (s.kind == StmtKind::Atomic && atomics)
          value = true;
        if ((s.kind == StmtKind::Let || assigns(s)) && s.local != ir::kNone && value &&
            !tainted[s.local]) {
          tainted[s.local] = true;
          changed = true;
        }
        bool inner = control || (s.kind != StmtKind::Let && s.kind != StmtKind::Assign &&
                                 s.kind != StmtKind::Store && value);
        walk(s.body, inner);
        walk(s.else_body, inner);
      }
    };
    walk(k_->body, false);
  }
  return tainted;
}

bool LaunchView::depends(const std::vector<bool>& tainted, Leaf leaf, ExprId e) const {
  for (ExprId x : subexprs(*k_, e)) {
    const ir::Expr& n = k_->expr(x);
    if (leaf(n) || (n.op == Op::LocalGet && tainted[n.ref]))
      return true;
  }
  return false;
}

bool LaunchView::one_dimensional() const {
  const auto& g = l_->grid.groups;
  const auto& w = k_->workgroup;
  return g[1] == 1 && g[2] == 1 && w[1] == 1 && w[2] == 1;
}

uint64_t LaunchView::lanes() const {
  return uint64_t{l_->grid.groups[0]} * k_->workgroup[0];
}

bool LaunchView::is_own_index(ExprId e) const {
  const ir::Expr& x = k_->expr(e);
  if (x.op == Op::GlobalId)
    return x.imm == 0;
  return x.op == Op::LocalGet && own_locals_[x.ref];
}

std::optional<uint64_t> LaunchView::guard_bound(ExprId cond) const {
  const ir::Expr& c = k_->expr(cond);
  auto limit = [&](ExprId e) -> std::optional<uint64_t> {
    const ir::Expr& x = k_->expr(e);
    if (x.op == Op::BufferLen && x.space == ir::Space::Buffer && sizes_[x.ref] != 0)
      return sizes_[x.ref];
    if (x.op == Op::Const && ir::is_int(x.type) && !ir::info(x.type).is_signed)
      return x.imm;
    return std::nullopt;
  };
  if (c.op == Op::Lt && is_own_index(c.args[0]))
    return limit(c.args[1]);
  if (c.op == Op::Gt && is_own_index(c.args[1]))
    return limit(c.args[0]);
  if (c.op == Op::And && c.type == ir::ScalarType::Bool) {
    auto a = guard_bound(c.args[0]), b = guard_bound(c.args[1]);
    if (a && b)
      return std::min(*a, *b);
    return a ? a : b;
  }
  return std::nullopt;
}

bool LaunchView::data_dependent(ExprId e) const {
  return depends(tainted_locals_, loads, e);
}

bool LaunchView::float_dependent(ExprId e) const {
  return depends(float_locals_, floats, e);
}

std::vector<Site> sites(const LaunchView& v) {
  std::vector<Site> out;
  std::function<void(const ir::Body&, std::optional<uint64_t>)> walk =
      [&](const ir::Body& block, std::optional<uint64_t> bound) {
        for (const ir::Stmt& s : block) {
          out.push_back({&s, bound});
          std::optional<uint64_t> inner = bound;
          if (s.kind == StmtKind::If) {
            if (auto g = v.guard_bound(s.a))
              inner = bound ? std::min(*bound, *g) : *g;
          }
          walk(s.body, inner);
          walk(s.else_body, bound);
        }
      };
  walk(v.kernel().body, std::nullopt);
  return out;
}

} // namespace halfway::pipeline::analysis
