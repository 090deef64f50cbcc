#include "halfway/pipeline/fused_budget.hpp"

#include "halfway/policy/registry.hpp"

namespace halfway::pipeline {

std::string describe_fused(std::string_view name, const policy::Registry& registry) {
  auto parts = registry.fused_parts(name);
  if (!parts)
    return {};
  std::string out = "fused from: ";
  for (size_t i = 0; i < parts->size(); ++i)
    out += (i ? ", " : "") + (*parts)[i];
  out += "\n";
  for (const auto& part : *parts) {
    out += "  part " + part + ":";
    const char* sep = " ";
    for (policy::OptIn kind : policy::kAllOptIns) {
      auto reason = registry.reason(kind, part);
      out += sep + std::string(policy::opt_in_name(kind)) +
             (reason ? ": held (" + *reason + ")" : ": not held");
      sep = "; ";
    }
    out += "\n";
  }
  out += "meet: an opt-in holds only when every part holds it; a scope naming the fused kernel "
         "covers nothing\n";
  return out;
}

} // namespace halfway::pipeline
