#pragma once
// The process-wide policy. A kernel's author opts in once, anywhere in the program (or through
// the CLI flags in flag.hpp); every code generator in the process reads the same record. These
// functions forward to global_registry(); code that should not see the process's opt-ins (tests,
// tools comparing policies) constructs its own Registry and passes it along instead.

#include "halfway/policy/budget.hpp"
#include "halfway/policy/fused.hpp"
#include "halfway/policy/opt_in.hpp"
#include "halfway/policy/refusal.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/policy/scope.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::policy {

// The one registry of the process, created on first use; it logs through spdlog's default logger.
Registry& global_registry();

AcceptOutcome accept(OptIn kind, const Scope& scope, std::string_view reason);
AcceptOutcome accept_single_rounding(const Scope& scope, std::string_view reason);
AcceptOutcome accept_relaxed_accumulation(const Scope& scope, std::string_view reason);

std::optional<std::string> reason(OptIn kind, std::string_view kernel);
std::optional<std::string> single_rounding_reason(std::string_view kernel);
std::optional<std::string> relaxed_accumulation_reason(std::string_view kernel);

Budget budget(std::string_view kernel);
uint64_t budget_key(std::string_view kernel);

FuseOutcome register_fused(std::string_view fused_name, std::vector<std::string> parts);

std::string report();

} // namespace halfway::policy
