#include "lane_guard.hpp"

namespace halfway::codegen::llvm::detail {

ir::ExprId resolve_remat(const ir::Kernel& k, ir::ExprId id, const StoragePlan& s,
                         const PartLets* lets) {
  for (;;) {
    const ir::Expr& e = k.expr(id);
    if (e.op != ir::Op::LocalGet)
      return id;
    if (s.storage[e.ref] == LocalStorage::Remat) {
      id = s.remat[e.ref];
      continue;
    }
    if (!lets)
      return id;
    auto it = lets->find(e.ref);
    if (it == lets->end())
      return id;
    id = it->second;
  }
}

bool lane_invariant(const ir::Kernel& k, ir::ExprId id, const StoragePlan& s, Over over,
                    const PartLets* lets) {
  id = resolve_remat(k, id, s, lets);
  const ir::Expr& e = k.expr(id);
  switch (e.op) {
  case ir::Op::Const:
  case ir::Op::ParamGet:
  case ir::Op::BufferLen:
  case ir::Op::GroupSize:
  case ir::Op::NumGroups:
    return true;
  case ir::Op::GroupId:
    return over == Over::Row;
  case ir::Op::GlobalId:
  case ir::Op::LocalId:
    return over == Over::Row && e.imm != 0;
  case ir::Op::LocalGet:
    return s.storage[e.ref] == LocalStorage::Workgroup;
  case ir::Op::Add:
  case ir::Op::Sub:
  case ir::Op::Mul:
  case ir::Op::Min:
  case ir::Op::Max:
  case ir::Op::Clamp:
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Not:
  case ir::Op::Neg:
  case ir::Op::Select:
  case ir::Op::Eq:
  case ir::Op::Ne:
  case ir::Op::Lt:
  case ir::Op::Le:
  case ir::Op::Gt:
  case ir::Op::Ge:
    break;
  case ir::Op::Convert:
    if (!ir::is_int(e.type) || !ir::is_int(k.expr(e.args[0]).type))
      return false;
    break;
  case ir::Op::Load:
  case ir::Op::Bitcast:
  case ir::Op::Pack:
  case ir::Op::Unpack:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Abs:
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
  case ir::Op::Shl:
  case ir::Op::Shr:
    return false;
  }
  for (int i = 0; i < e.nargs; ++i)
    if (!lane_invariant(k, e.args[i], s, over, lets))
      return false;
  return true;
}

std::optional<LaneGuard> match_lane_guard(const ir::Kernel& k, const Part& part,
                                          const StoragePlan& s, bool flat) {
  if (part.kind != Part::Kind::Lanes || part.stmts.empty())
    return std::nullopt;
  for (size_t i = 0; i + 1 < part.stmts.size(); ++i) {
    const ir::Stmt& let = *part.stmts[i];
    if (let.kind != ir::StmtKind::Let || s.storage[let.local] != LocalStorage::Remat)
      return std::nullopt;
  }
  const ir::Stmt& branch = *part.stmts.back();
  if (branch.kind != ir::StmtKind::If || !branch.else_body.empty())
    return std::nullopt;
  const ir::Expr& c = k.expr(branch.a);
  if (c.op == ir::Op::Eq && !flat && k.expr(c.args[0]).type == ir::ScalarType::U32) {
    // local_id(0) == 0, either way round
    for (int side = 0; side < 2; ++side) {
      const ir::Expr& lane = k.expr(resolve_remat(k, c.args[side], s));
      const ir::Expr& zero = k.expr(resolve_remat(k, c.args[1 - side], s));
      if (lane.op == ir::Op::LocalId && lane.imm == 0 && zero.op == ir::Op::Const && zero.imm == 0)
        return LaneGuard{&branch, ir::kNone, false, true};
    }
    return std::nullopt;
  }
  if (c.op != ir::Op::Lt || k.expr(c.args[0]).type != ir::ScalarType::U32)
    return std::nullopt;
  const ir::Expr& lane = k.expr(resolve_remat(k, c.args[0], s));
  ir::Op coordinate = flat ? ir::Op::GlobalId : ir::Op::LocalId;
  if (lane.op != coordinate || lane.imm != 0)
    return std::nullopt;
  if (!lane_invariant(k, c.args[1], s, Over::Workgroup))
    return std::nullopt;
  return LaneGuard{&branch, c.args[1], flat};
}

} // namespace halfway::codegen::llvm::detail
