#include "edge_guard.hpp"

#include <algorithm>

namespace halfway::codegen::llvm::detail {

namespace {

// `c + x` modulo 2^32 with c row-invariant: the x coordinate plus or minus invariant values.
bool lane_operand(const ir::Kernel& k, ir::ExprId id, const StoragePlan& s, const PartLets& lets,
                  int depth = 0) {
  id = resolve_remat(k, id, s, &lets);
  const ir::Expr& e = k.expr(id);
  if (e.type != ir::ScalarType::U32 || depth > 32)
    return false;
  switch (e.op) {
  case ir::Op::LocalId:
  case ir::Op::GlobalId:
    return e.imm == 0;
  case ir::Op::Add:
    return (lane_operand(k, e.args[0], s, lets, depth + 1) &&
            lane_invariant(k, e.args[1], s, Over::Row, &lets)) ||
           (lane_invariant(k, e.args[0], s, Over::Row, &lets) &&
            lane_operand(k, e.args[1], s, lets, depth + 1));
  case ir::Op::Sub:
    return lane_operand(k, e.args[0], s, lets, depth + 1) &&
           lane_invariant(k, e.args[1], s, Over::Row, &lets);
  default:
    return false;
  }
}

// Appends the lane operands of a guard's condition; false when it is not one.
bool guard_terms(const ir::Kernel& k, ir::ExprId id, const StoragePlan& s, const PartLets& lets,
                 std::vector<ir::ExprId>& operands, int depth = 0) {
  if (depth > 32)
    return false;
  id = resolve_remat(k, id, s, &lets);
  const ir::Expr& e = k.expr(id);
  if (e.type != ir::ScalarType::Bool)
    return false;
  switch (e.op) {
  case ir::Op::And:
    return guard_terms(k, e.args[0], s, lets, operands, depth + 1) &&
           guard_terms(k, e.args[1], s, lets, operands, depth + 1);
  case ir::Op::Lt:
  case ir::Op::Le:
  case ir::Op::Gt:
  case ir::Op::Ge:
    if (k.expr(e.args[0]).type != ir::ScalarType::U32)
      break;
    for (int side = 0; side < 2; ++side)
      if (lane_operand(k, e.args[side], s, lets) &&
          lane_invariant(k, e.args[1 - side], s, Over::Row, &lets)) {
        operands.push_back(e.args[side]);
        return true;
      }
    break;
  default:
    break;
  }
  return lane_invariant(k, id, s, Over::Row, &lets);
}

void visit(const ir::Kernel& k, const ir::Body& body, const StoragePlan& s, EdgeGuards& out);

void visit(const ir::Kernel& k, const ir::Stmt& st, const StoragePlan& s, EdgeGuards& out) {
  if (st.kind == ir::StmtKind::If) {
    std::vector<ir::ExprId> operands;
    // A guard compares the x coordinate at least once: a row-invariant condition is as likely
    // false as true and would only keep rows out of the fast version.
    if (guard_terms(k, st.a, s, out.lets, operands) && !operands.empty()) {
      out.ifs.push_back(&st);
      for (ir::ExprId op : operands)
        if (std::find(out.lane_operands.begin(), out.lane_operands.end(), op) ==
            out.lane_operands.end())
          out.lane_operands.push_back(op);
    }
  }
  visit(k, st.body, s, out);
  visit(k, st.else_body, s, out);
}

void visit(const ir::Kernel& k, const ir::Body& body, const StoragePlan& s, EdgeGuards& out) {
  for (const ir::Stmt& st : body)
    visit(k, st, s, out);
}

} // namespace

std::optional<EdgeGuards> match_edge_guards(const ir::Kernel& k, const Part& part,
                                            const StoragePlan& s) {
  if (part.kind != Part::Kind::Lanes)
    return std::nullopt;
  EdgeGuards guards;
  // The part's top-level lets of locals written nowhere else.
  std::vector<uint32_t> writes(k.locals.size(), 0);
  ir::for_each_stmt(k.body, [&](const ir::Stmt& st) {
    if (st.local != ir::kNone)
      ++writes[st.local];
  });
  for (const ir::Stmt* st : part.stmts)
    if (st->kind == ir::StmtKind::Let && writes[st->local] == 1 &&
        s.storage[st->local] != LocalStorage::Remat)
      guards.lets.emplace(st->local, st->a);
  for (const ir::Stmt* st : part.stmts)
    visit(k, *st, s, guards);
  if (guards.ifs.empty())
    return std::nullopt;
  return guards;
}

} // namespace halfway::codegen::llvm::detail
