#include "storage.hpp"

#include "halfway/ir/analysis/uniformity.hpp"

#include <map>

namespace halfway::codegen::llvm::detail {

namespace {

// Assignments of each local, by kind.
struct Writes {
  std::vector<const ir::Stmt*> lets, assigns, others; // others: for loops and atomics
};

std::vector<Writes> writes_of(const ir::Kernel& k) {
  std::vector<Writes> w(k.locals.size());
  ir::for_each_stmt(k.body, [&](const ir::Stmt& s) {
    if (s.local == ir::kNone)
      return;
    if (s.kind == ir::StmtKind::Let)
      w[s.local].lets.push_back(&s);
    else if (s.kind == ir::StmtKind::Assign)
      w[s.local].assigns.push_back(&s);
    else
      w[s.local].others.push_back(&s);
  });
  return w;
}

// An integer expression that reads nothing but builtins, parameters, constants and `ok` locals,
// and cannot fail (no division, remainder or shift, which checked mode reports).
bool pure_int(const ir::Kernel& k, ir::ExprId id, const std::vector<LocalStorage>& storage) {
  const ir::Expr& e = k.expr(id);
  if (ir::is_float(e.type))
    return false;
  switch (e.op) {
  case ir::Op::Load:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Shl:
  case ir::Op::Shr:
    return false;
  case ir::Op::LocalGet:
    return storage[e.ref] == LocalStorage::Remat;
  case ir::Op::Convert:
  case ir::Op::Bitcast:
    if (ir::is_float(k.expr(e.args[0]).type))
      return false;
    break;
  case ir::Op::Const:
  case ir::Op::ParamGet:
  case ir::Op::GlobalId:
  case ir::Op::LocalId:
  case ir::Op::GroupId:
  case ir::Op::GroupSize:
  case ir::Op::NumGroups:
  case ir::Op::BufferLen:
  case ir::Op::Pack:
  case ir::Op::Unpack:
  case ir::Op::Add:
  case ir::Op::Sub:
  case ir::Op::Mul:
  case ir::Op::Neg:
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
  case ir::Op::Select:
    break;
  }
  for (int i = 0; i < e.nargs; ++i)
    if (!pure_int(k, e.args[i], storage))
      return false;
  return true;
}

void collect_lanes_stmts(const std::vector<Part>& parts,
                         std::map<const ir::Stmt*, std::pair<const Part*, size_t>>& top) {
  for (const Part& p : parts) {
    if (p.kind == Part::Kind::Lanes)
      for (size_t i = 0; i < p.stmts.size(); ++i)
        top[p.stmts[i]] = {&p, i};
    collect_lanes_stmts(p.body, top);
    collect_lanes_stmts(p.else_body, top);
  }
}

class UsageCounter {
public:
  UsageCounter(const ir::Kernel& k, std::vector<LocalStorage>& storage)
      : k_(k), storage_(storage), parts_(k.locals.size()) {}

  void run(const std::vector<Part>& parts) {
    visit(parts);
    for (size_t i = 0; i < storage_.size(); ++i) {
      if (storage_[i] != LocalStorage::Unused)
        continue;
      if (parts_[i].size() == 1)
        storage_[i] = LocalStorage::LaneScalar;
      else if (parts_[i].size() > 1)
        storage_[i] = LocalStorage::PerLane;
    }
  }

private:
  void visit(const std::vector<Part>& parts) {
    for (const Part& p : parts) {
      if (p.kind == Part::Kind::Lanes) {
        for (const ir::Stmt* s : p.stmts)
          stmt(*s, p.id);
        continue;
      }
      if (p.kind == Part::Kind::Uniform) {
        stmt(*p.stmt, p.id);
        continue;
      }
      for (ir::ExprId e : ir::stmt_exprs(*p.stmt))
        expr(e, p.id);
      if (p.kind == Part::Kind::For)
        storage_[p.stmt->local] = LocalStorage::Workgroup;
      visit(p.body);
      visit(p.else_body);
    }
  }
  void stmt(const ir::Stmt& s, uint32_t part) {
    if (s.local != ir::kNone)
      parts_[s.local].insert(part);
    for (ir::ExprId e : ir::stmt_exprs(s))
      expr(e, part);
    for (const ir::Stmt& c : s.body)
      stmt(c, part);
    for (const ir::Stmt& c : s.else_body)
      stmt(c, part);
  }
  void expr(ir::ExprId id, uint32_t part) {
    const ir::Expr& e = k_.expr(id);
    if (e.op == ir::Op::LocalGet)
      parts_[e.ref].insert(part);
    for (int i = 0; i < e.nargs; ++i)
      expr(e.args[i], part);
  }

  const ir::Kernel& k_;
  std::vector<LocalStorage>& storage_;
  std::vector<std::set<uint32_t>> parts_;
};

} // namespace

StoragePlan plan_storage(const ir::Kernel& k) {
  StoragePlan plan;
  plan.storage.assign(k.locals.size(), LocalStorage::Unused);
  plan.remat.assign(k.locals.size(), ir::kNone);
  std::vector<Writes> writes = writes_of(k);

  // Remat: one let, nothing else; locals are declared before use, so one pass in id order of
  // the lets suffices for chains (base = gid * cols).
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t l = 0; l < k.locals.size(); ++l) {
      const Writes& w = writes[l];
      if (plan.storage[l] == LocalStorage::Remat || w.lets.size() != 1 || !w.assigns.empty() ||
          !w.others.empty() || ir::is_float(k.locals[l].type))
        continue;
      if (!pure_int(k, w.lets[0]->a, plan.storage))
        continue;
      plan.storage[l] = LocalStorage::Remat;
      plan.remat[l] = w.lets[0]->a;
      changed = true;
    }
  }

  // Uniform locals whose every write is a let or assignment at the top of a Lanes part, with no
  // escape before it in that part.
  const ir::UniformityAnalysis uniformity(k);
  std::vector<Part> unsplit = partition(k.body);
  std::map<const ir::Stmt*, std::pair<const Part*, size_t>> top;
  collect_lanes_stmts(unsplit, top);
  for (uint32_t l = 0; l < k.locals.size(); ++l) {
    const Writes& w = writes[l];
    // A value read from memory stays in the lanes: lifted to the top of its part, it would be
    // read before the lane code ahead of it, which may store to the element.
    const ir::UniformValue u = uniformity.local(l);
    if (plan.storage[l] != LocalStorage::Unused || u.level == ir::Uniformity::Lane || u.memory ||
        !w.others.empty())
      continue;
    std::vector<const ir::Stmt*> all = w.lets;
    all.insert(all.end(), w.assigns.begin(), w.assigns.end());
    if (all.empty())
      continue;
    bool ok = true;
    for (const ir::Stmt* s : all) {
      auto it = top.find(s);
      if (it == top.end()) {
        ok = false;
        break;
      }
      const auto& [part, index] = it->second;
      for (size_t i = 0; i < index && ok; ++i)
        ok = !escapes(*part->stmts[i]);
      if (!ok)
        break;
    }
    if (!ok)
      continue;
    plan.storage[l] = LocalStorage::Workgroup;
    plan.hoisted.insert(all.begin(), all.end());
  }

  plan.parts = partition(k.body, plan.hoisted);
  UsageCounter(k, plan.storage).run(plan.parts);
  return plan;
}

} // namespace halfway::codegen::llvm::detail
