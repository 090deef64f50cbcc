#include "precision.hpp"

#include "halfway/codegen/llvm/fault.hpp"

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
  case ir::Op::Const:
  case ir::Op::LocalGet:
  case ir::Op::ParamGet:
  case ir::Op::GlobalId:
  case ir::Op::LocalId:
  case ir::Op::GroupId:
  case ir::Op::GroupSize:
  case ir::Op::NumGroups:
  case ir::Op::BufferLen:
  case ir::Op::Load:
  case ir::Op::Convert:
  case ir::Op::Bitcast:
  case ir::Op::Pack:
  case ir::Op::Unpack:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Neg:
  case ir::Op::Abs:
  case ir::Op::Min:
  case ir::Op::Max:
  case ir::Op::Clamp:
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
    return std::nullopt;
  }
  ir::invalid_op(e.op);
}

PrecisionPlan plan_precision(const ir::Kernel& k, const policy::Budget& budget,
                             SingleRoundingMode mode) {
  PrecisionPlan plan;
  if (budget.holds(policy::OptIn::SingleRounding) ||
      testing::injected_fault() == testing::Fault::DropBarrier) {
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
