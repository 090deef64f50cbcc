#include "nan_state.hpp"

#include "halfway/ir/bits.hpp"

#include <set>

namespace halfway::codegen::detail {

NanState result_nan_state(const ir::Kernel& k, const ir::Expr& e, const NanState* args) {
  if (!ir::is_float(e.type) || ir::is_fp8(e.type))
    return NanState::Clean;
  switch (e.op) {
  case ir::Op::Const: {
    double v = ir::widen_to_double(e.type, e.imm);
    return v == v ? NanState::NoNan : NanState::Clean;
  }
  case ir::Op::ParamGet:
  case ir::Op::Load:
  case ir::Op::Unpack:
  case ir::Op::Bitcast:
  case ir::Op::Neg:
  case ir::Op::Abs:
  case ir::Op::Copysign:
  case ir::Op::Min:
  case ir::Op::Max:
    return NanState::Clean;
  case ir::Op::LocalGet:
    return NanState::Clean; // the caller substitutes the local's state
  case ir::Op::Select: {
    bool agree;
    return merge(args[1], args[2], agree);
  }
  case ir::Op::Convert: {
    ir::ScalarType from = k.expr(e.args[0]).type;
    if (!ir::is_float(from))
      return NanState::NoNan;
    if (ir::is_fp8(from))
      return NanState::Clean;
    if (!ir::widens_exactly(from, e.type))
      return NanState::Clean; // narrowings canonicalise
    return args[0] == NanState::Dirty ? NanState::Dirty : NanState::SignedPayload;
  }
  default:
    return NanState::Dirty;
  }
}

namespace {

class Fixpoint {
public:
  explicit Fixpoint(const ir::Kernel& k) : k_(k), locals_(k.locals.size(), NanState::NoNan) {}

  std::vector<NanState> run() {
    do {
      changed_ = false;
      ir::for_each_stmt(k_.body, [&](const ir::Stmt& s) { visit(s); });
    } while (changed_);
    return locals_;
  }

private:
  NanState expr(ir::ExprId id) {
    const ir::Expr& e = k_.expr(id);
    if (e.op == ir::Op::LocalGet)
      return locals_[e.ref];
    NanState args[4] = {};
    for (int i = 0; i < e.nargs; ++i)
      args[i] = expr(e.args[i]);
    return result_nan_state(k_, e, args);
  }

  // A local only ever moves up: NoNan, then one state, then Clean for good once two disagree.
  void assign(uint32_t local, ir::ExprId value) {
    if (mixed_.count(local))
      return;
    bool agree;
    NanState s = merge(locals_[local], expr(value), agree);
    if (!agree)
      mixed_.insert(local);
    if (s != locals_[local] || !agree)
      locals_[local] = s, changed_ = true;
  }

  void visit(const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Let || s.kind == ir::StmtKind::Assign)
      assign(s.local, s.a);
  }

  const ir::Kernel& k_;
  std::vector<NanState> locals_;
  std::set<uint32_t> mixed_;
  bool changed_ = false;
};

} // namespace

std::vector<NanState> local_nan_states(const ir::Kernel& k) {
  return Fixpoint(k).run();
}

} // namespace halfway::codegen::detail
