#include "precision.hpp"

namespace halfway::codegen::detail {

std::optional<MulAdd> match_mul_add(const ir::Kernel& k, ir::ExprId producer) {
  const ir::Expr& e = k.expr(producer);
  auto is_mul = [&](ir::ExprId id) { return k.expr(id).op == ir::Op::Mul; };
  MulAdd m;
  switch (e.op) {
  case ir::Op::Mul:
    m.x = e.args[0], m.y = e.args[1];
    return m;
  case ir::Op::Fma:
    m.x = e.args[0], m.y = e.args[1], m.z = e.args[2];
    return m;
  case ir::Op::Add:
  case ir::Op::Sub:
    for (int p = 0; p < 2; ++p) {
      if (!is_mul(e.args[p]))
        continue;
      const ir::Expr& mul = k.expr(e.args[p]);
      m.x = mul.args[0], m.y = mul.args[1], m.z = e.args[1 - p];
      m.negate_z = e.op == ir::Op::Sub && p == 0;
      m.negate_product = e.op == ir::Op::Sub && p == 1;
      m.z_first = p == 1;
      return m;
    }
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

PrecisionPlan plan_precision(const ir::Kernel& k, const policy::Budget& budget,
                             SingleRoundingMode mode) {
  PrecisionPlan plan;
  if (budget.holds(policy::OptIn::SingleRounding)) {
    plan.sites = ir::narrowing_sites(k);
    for (const ir::NarrowingSite& s : plan.sites) {
      if (!s.needs_barrier())
        continue;
      plan.lifted.emplace(s.convert, &s);
      bool shape = s.shape == ir::SiteShape::Product || s.shape == ir::SiteShape::MulAdd;
      bool types = s.from == ir::ScalarType::F32 &&
                   (s.to == ir::ScalarType::F16 || s.to == ir::ScalarType::BF16);
      bool nearest = k.expr(s.convert).rounding == ir::RoundingMode::NearestEven;
      if (mode == SingleRoundingMode::Exact && shape && types && nearest)
        if (auto m = match_mul_add(k, s.producer))
          plan.exact.emplace(s.convert, *m);
    }
  }
  if (budget.holds(policy::OptIn::RelaxedAccumulation)) {
    for (ir::Accumulation& a : ir::accumulations(k)) {
      if (a.ops.empty())
        continue;
      ir::ExprId root = a.ops.front();
      plan.accumulations[{a.local, root}] = std::move(a.ops);
    }
  }
  return plan;
}

} // namespace halfway::codegen::detail
