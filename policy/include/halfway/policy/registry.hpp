#pragma once
// The record of opt-ins, and the one place that decides which kernels they cover.
//
// Rules (specs/f16-narrowing-barrier.md §4):
// - accept() records (kind, scope) -> reason. The first accepted reason for a (kind, scope) is
//   kept; later calls for it succeed and change nothing. Nothing revokes an opt-in: a budget can
//   only gain opt-ins, which is what lets the launch memo key on it.
// - A refused call (Refusal) records nothing.
// - A plain kernel's reason is its own Kernel scope's, else the all-kernels one, else none.
// - A fused kernel (register_fused) is read through its parts, recursively, and never through its
//   own name: a Kernel scope naming it is recorded and reported but covers nothing. It holds an
//   opt-in when every leaf (the distinct non-fused kernels it is built from, nested fusions
//   flattened, in depth-first order of first appearance) holds it. All-kernels covers every leaf,
//   so it covers fused kernels too. Its reason then reads
//       "fused from L1, L2: L1: R1; L2: R2"
//   where Ri is leaf Li's own reason as above.
// - A name is read through parts from the moment it is registered; the fusion pass registers a
//   kernel when it creates it, before its code is first generated.
//
// Thread safety: every member may be called concurrently. Readers share a lock and allocate only
// to return reasons (budget_key() does not allocate for a plain kernel); writers are rare.
// Logging happens outside the lock: every accepted opt-in once, at info, with its scope and
// reason; every refusal and every failed registration at warn.

#include "halfway/policy/budget.hpp"
#include "halfway/policy/fused.hpp"
#include "halfway/policy/opt_in.hpp"
#include "halfway/policy/refusal.hpp"
#include "halfway/policy/scope.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <spdlog/fwd.h>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::policy {

class Registry {
public:
  // Logs through `logger`; a null logger means spdlog's default logger at the time of each message,
  // so that a program may replace the default logger after the registry exists.
  explicit Registry(std::shared_ptr<spdlog::logger> logger = nullptr);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  AcceptOutcome accept(OptIn kind, const Scope& scope, std::string_view reason);
  AcceptOutcome accept_single_rounding(const Scope& scope, std::string_view reason) {
    return accept(OptIn::SingleRounding, scope, reason);
  }
  AcceptOutcome accept_relaxed_accumulation(const Scope& scope, std::string_view reason) {
    return accept(OptIn::RelaxedAccumulation, scope, reason);
  }

  // The reason `kind` holds for the kernel named `kernel`, per the rules above; none when it does
  // not hold.
  std::optional<std::string> reason(OptIn kind, std::string_view kernel) const;
  std::optional<std::string> single_rounding_reason(std::string_view kernel) const {
    return reason(OptIn::SingleRounding, kernel);
  }
  std::optional<std::string> relaxed_accumulation_reason(std::string_view kernel) const {
    return reason(OptIn::RelaxedAccumulation, kernel);
  }

  // Both opt-ins, read under one lock so that they come from the same moment.
  Budget budget(std::string_view kernel) const;
  // budget(kernel).key() without building the reasons: the launch memo's fast path.
  uint64_t budget_key(std::string_view kernel) const;

  // Declares that the kernel named `fused_name` was built from `parts` (names of plain or fused
  // kernels). Registering the same name with the same parts again succeeds and changes nothing.
  FuseOutcome register_fused(std::string_view fused_name, std::vector<std::string> parts);
  // The parts `name` was registered with; none for a kernel that is not fused.
  std::optional<std::vector<std::string>> fused_parts(std::string_view name) const;

  // Human-readable: every opt-in in force (kind, scope, reason), then every fused registration.
  std::string report() const;

private:
  struct State;
  std::shared_ptr<spdlog::logger> logger() const;

  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<State> state_;
};

} // namespace halfway::policy
