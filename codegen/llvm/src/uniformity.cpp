#include "uniformity.hpp"

#include <set>

namespace halfway::codegen::detail {

namespace {

class Uniformity {
public:
  explicit Uniformity(const ir::Kernel& k) : k_(k), variant_(k.locals.size(), false) {}

  std::vector<bool> run() {
    do {
      changed_ = false;
      returned_ = false;
      flow(k_.body, false);
    } while (changed_);
    return variant_;
  }

private:
  bool variant(ir::ExprId id) const {
    const ir::Expr& e = k_.expr(id);
    switch (e.op) {
    case ir::Op::GlobalId:
    case ir::Op::LocalId:
    case ir::Op::Load:
      return true;
    case ir::Op::LocalGet:
      return variant_[e.ref];
    default:
      for (int i = 0; i < e.nargs; ++i)
        if (variant(e.args[i]))
          return true;
      return false;
    }
  }

  void taint(uint32_t local) {
    if (local == ir::kNone || variant_[local])
      return;
    variant_[local] = true;
    changed_ = true;
  }

  void flow(const std::vector<ir::Stmt>& block, bool divergent) {
    for (const ir::Stmt& s : block) {
      bool d = divergent || returned_;
      switch (s.kind) {
      case ir::StmtKind::Let:
      case ir::StmtKind::Assign:
        if (d || variant(s.a))
          taint(s.local);
        break;
      case ir::StmtKind::Atomic:
        taint(s.local);
        break;
      case ir::StmtKind::If: {
        bool c = d || variant(s.a);
        flow(s.body, c);
        flow(s.else_body, c);
        break;
      }
      case ir::StmtKind::For:
      case ir::StmtKind::While: {
        bool c = d || leaky_.count(&s) > 0;
        for (ir::ExprId e : ir::stmt_exprs(s))
          c = c || variant(e);
        if (s.kind == ir::StmtKind::For && c)
          taint(s.local);
        loops_.push_back(&s);
        flow(s.body, c);
        loops_.pop_back();
        break;
      }
      case ir::StmtKind::Break:
      case ir::StmtKind::Continue:
        if (d && !loops_.empty() && leaky_.insert(loops_.back()).second)
          changed_ = true;
        break;
      case ir::StmtKind::Return:
        if (d) {
          returned_ = true;
          for (const ir::Stmt* l : loops_)
            if (leaky_.insert(l).second)
              changed_ = true;
        }
        break;
      case ir::StmtKind::Store:
      case ir::StmtKind::Barrier:
        break;
      }
    }
  }

  const ir::Kernel& k_;
  std::vector<bool> variant_;
  std::set<const ir::Stmt*> leaky_; // loops that some lanes leave early
  std::vector<const ir::Stmt*> loops_;
  bool changed_ = false, returned_ = false;
};

} // namespace

std::vector<bool> lane_variant_locals(const ir::Kernel& k) {
  return Uniformity(k).run();
}

} // namespace halfway::codegen::detail
