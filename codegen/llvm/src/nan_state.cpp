#include "nan_state.hpp"

#include "halfway/ir/bits.hpp"

#include <set>

namespace halfway::codegen::llvm::detail {

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
  case ir::Op::Clamp:
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
      return (e.type == ir::ScalarType::F32 || e.type == ir::ScalarType::F64) &&
                     fp8_widening_keeps_nan_sign(from)
                 ? NanState::SignedPayload
                 : NanState::Clean;
    if (!ir::widens_exactly(from, e.type))
      return NanState::Clean; // narrowings canonicalise
    return args[0] == NanState::Dirty ? NanState::Dirty : NanState::SignedPayload;
  }
  case ir::Op::GlobalId:
  case ir::Op::LocalId:
  case ir::Op::GroupId:
  case ir::Op::GroupSize:
  case ir::Op::NumGroups:
  case ir::Op::BufferLen:
  case ir::Op::Pack:
  case ir::Op::Add:
  case ir::Op::Sub:
  case ir::Op::Mul:
  case ir::Op::Div:
  case ir::Op::Rem:
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
    return NanState::Dirty;
  }
  ir::invalid_op(e.op);
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

} // namespace halfway::codegen::llvm::detail
