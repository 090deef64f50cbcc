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
    case ir::Op::Const:
    case ir::Op::ParamGet:
    case ir::Op::GroupId:
    case ir::Op::GroupSize:
    case ir::Op::NumGroups:
    case ir::Op::BufferLen:
    case ir::Op::Convert:
    case ir::Op::Bitcast:
    case ir::Op::Pack:
    case ir::Op::Unpack:
    case ir::Op::Add:
    case ir::Op::Sub:
    case ir::Op::Mul:
    case ir::Op::Div:
    case ir::Op::Rem:
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
    case ir::Op::Shl:
    case ir::Op::Shr:
    case ir::Op::Select:
      for (int i = 0; i < e.nargs; ++i)
        if (variant(e.args[i]))
          return true;
      return false;
    }
    ir::invalid_op(e.op);
  }

  void taint(uint32_t local) {
    if (local == ir::kNone || variant_[local])
      return;
    variant_[local] = true;
    changed_ = true;
  }

  void flow(const ir::Body& block, bool divergent) {
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
