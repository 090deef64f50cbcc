#include "precision.hpp"

#include "halfway/codegen/llvm/fault.hpp"

namespace halfway::codegen::llvm::detail {

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
        if (auto m = ir::match_mul_add(k, s.producer))
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

} // namespace halfway::codegen::llvm::detail
