#include "halfway/policy/policy.hpp"

namespace halfway::policy {

Registry& global_registry() {
  static Registry registry;
  return registry;
}

AcceptOutcome accept(OptIn kind, const Scope& scope, std::string_view reason) {
  return global_registry().accept(kind, scope, reason);
}
AcceptOutcome accept_single_rounding(const Scope& scope, std::string_view reason) {
  return global_registry().accept_single_rounding(scope, reason);
}
AcceptOutcome accept_relaxed_accumulation(const Scope& scope, std::string_view reason) {
  return global_registry().accept_relaxed_accumulation(scope, reason);
}

std::optional<std::string> reason(OptIn kind, std::string_view kernel) {
  return global_registry().reason(kind, kernel);
}
std::optional<std::string> single_rounding_reason(std::string_view kernel) {
  return global_registry().single_rounding_reason(kernel);
}
std::optional<std::string> relaxed_accumulation_reason(std::string_view kernel) {
  return global_registry().relaxed_accumulation_reason(kernel);
}

Budget budget(std::string_view kernel) {
  return global_registry().budget(kernel);
}
uint64_t budget_key(std::string_view kernel) {
  return global_registry().budget_key(kernel);
}

FuseOutcome register_fused(std::string_view fused_name, std::vector<std::string> parts) {
  return global_registry().register_fused(fused_name, std::move(parts));
}

std::string report() {
  return global_registry().report();
}

} // namespace halfway::policy
