#pragma once
// What the precision budget changes in the generated code (specs/f16-narrowing-barrier.md §3-§5).
// Strict (nothing held): no fast-math flag on any instruction. Single rounding held: the
// producing ops of every barriered narrowing site get `contract` while the site's operand is
// lowered, or the site is computed with one rounding through round-to-odd (Exact mode).
// Relaxed accumulation held: the ops of every accumulation get `reassoc contract`.

#include "halfway/codegen/llvm/options.hpp"
#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/policy/budget.hpp"

#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

namespace halfway::codegen::llvm::detail {

// A narrowed value of the form (+-)x*y (+- z): what the round-to-odd path computes exactly.
using ir::MulAdd;

struct PrecisionPlan {
  std::vector<ir::NarrowingSite> sites;
  // Barriered sites whose barrier the budget lifts, by their Convert node.
  std::unordered_map<ir::ExprId, const ir::NarrowingSite*> lifted;
  // Sites computed by the round-to-odd path, by their Convert node.
  std::unordered_map<ir::ExprId, MulAdd> exact;
  // Relaxed accumulations: (local, assigned expression) -> the ops that get reassoc contract.
  std::map<std::pair<uint32_t, ir::ExprId>, std::vector<ir::ExprId>> accumulations;
};

PrecisionPlan plan_precision(const ir::Kernel& k, const policy::Budget& budget,
                             SingleRoundingMode mode);

} // namespace halfway::codegen::llvm::detail
