#include "halfway/policy/budget.hpp"

namespace halfway::policy {

std::string to_string(const Budget& budget) {
  std::string out;
  for (OptIn kind : kAllOptIns) {
    if (!out.empty())
      out += '\n';
    out += opt_in_name(kind);
    const auto& reason = budget.reason(kind);
    out += reason ? ": held (" + *reason + ")" : ": not held";
  }
  return out;
}

} // namespace halfway::policy
