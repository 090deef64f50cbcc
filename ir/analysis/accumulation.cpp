#include "halfway/ir/analysis/accumulation.hpp"

namespace halfway::ir {

namespace {

bool reads_local(const Kernel& k, ExprId id, uint32_t local) {
  const Expr& e = k.expr(id);
  return e.op == Op::LocalGet && e.ref == local;
}

void accumulations(const Kernel& k, const Body& block, bool in_loop,
                   std::vector<Accumulation>& out) {
  for (const Stmt& s : block) {
    if (in_loop) {
      if (auto step = match_step(k, s)) {
        Accumulation& a = out.emplace_back();
        a.local = step->local;
        producers(k, s.a, a.ops);
      }
    }
    const bool loop = s.kind == StmtKind::For || s.kind == StmtKind::While;
    accumulations(k, s.body, in_loop || loop, out);
    accumulations(k, s.else_body, in_loop, out);
  }
}

} // namespace

bool is_producer(const Expr& e) {
  return is_float(e.type) && (e.op == Op::Add || e.op == Op::Sub || e.op == Op::Mul ||
                              e.op == Op::Fma || e.op == Op::Neg);
}

void producers(const Kernel& k, ExprId id, std::vector<ExprId>& out) {
  const Expr& e = k.expr(id);
  if (!is_producer(e))
    return;
  out.push_back(id);
  for (int i = 0; i < e.nargs; ++i)
    producers(k, e.args[i], out);
}

std::optional<MulAdd> match_mul_add(const Kernel& k, ExprId id) {
  const Expr& e = k.expr(id);
  MulAdd m;
  if (e.op == Op::Mul) {
    m.x = e.args[0], m.y = e.args[1];
    return m;
  }
  if (e.op == Op::Fma) {
    m.x = e.args[0], m.y = e.args[1], m.z = e.args[2];
    return m;
  }
  if (e.op != Op::Add && e.op != Op::Sub)
    return std::nullopt;
  for (int p = 0; p < 2; ++p) {
    const Expr& mul = k.expr(e.args[p]);
    if (mul.op != Op::Mul)
      continue;
    m.x = mul.args[0], m.y = mul.args[1], m.z = e.args[1 - p];
    m.negate_z = e.op == Op::Sub && p == 0;
    m.negate_product = e.op == Op::Sub && p == 1;
    m.z_first = p == 1;
    return m;
  }
  return std::nullopt;
}

std::optional<Step> match_step(const Kernel& k, const Stmt& s) {
  if (s.kind != StmtKind::Assign || !is_float(k.locals[s.local].type))
    return std::nullopt;
  const Expr& e = k.expr(s.a);
  Step step;
  step.local = s.local;
  if (e.op == Op::Add && reads_local(k, e.args[0], s.local))
    step.term = e.args[1];
  else if (e.op == Op::Add && reads_local(k, e.args[1], s.local))
    step.term = e.args[0];
  else if (e.op == Op::Sub && reads_local(k, e.args[0], s.local))
    step.term = e.args[1], step.negative = true;
  else if (e.op != Op::Fma || !reads_local(k, e.args[2], s.local))
    return std::nullopt;
  return step;
}

std::vector<Accumulation> accumulations(const Kernel& k) {
  std::vector<Accumulation> out;
  accumulations(k, k.body, false, out);
  return out;
}

} // namespace halfway::ir
