#include "observable.hpp"

namespace halfway::codegen::llvm::detail {

std::vector<bool> observable_locals(const ir::Kernel& k) {
  std::vector<bool> observable(k.locals.size(), false);
  // Nodes may be shared (a DAG): each pass visits a node once.
  std::vector<uint32_t> seen(k.exprs.size(), 0);
  uint32_t pass = 0;
  bool changed = true;
  auto mark = [&](ir::ExprId root) {
    std::vector<ir::ExprId> stack{root};
    while (!stack.empty()) {
      const ir::ExprId id = stack.back();
      stack.pop_back();
      if (id == ir::kNone || id >= k.exprs.size() || seen[id] == pass)
        continue;
      seen[id] = pass;
      const ir::Expr& e = k.exprs[id];
      if (e.op == ir::Op::LocalGet && e.ref < observable.size() && !observable[e.ref]) {
        observable[e.ref] = true;
        changed = true;
      }
      for (int i = 0; i < e.nargs; ++i)
        stack.push_back(e.args[i]);
    }
  };
  while (changed) {
    changed = false;
    ++pass;
    ir::for_each_stmt(k.body, [&](const ir::Stmt& s) {
      const bool sets = s.kind == ir::StmtKind::Let || s.kind == ir::StmtKind::Assign;
      if (sets && !observable[s.local])
        return; // its expression matters only once the local does
      for (ir::ExprId e : ir::stmt_exprs(s))
        mark(e);
    });
  }
  return observable;
}

} // namespace halfway::codegen::llvm::detail
