#pragma once
// What the code generator reads for one kernel: which opt-ins hold, and why. The decision to emit
// narrowing barriers (or to relax accumulations) is taken from the budget when a kernel's code is
// generated, and compiled code is memoised by (structural hash, device, budget.key()). Because
// opt-ins are one-way, a kernel generated before an opt-in gets a new key afterwards and is
// regenerated at its next launch.

#include "halfway/policy/opt_in.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace halfway::policy {

struct Budget {
  // Set when the opt-in holds; the text is the reason recorded for it (registry.hpp says which
  // reason, for a fused kernel).
  std::optional<std::string> single_rounding;
  std::optional<std::string> relaxed_accumulation;

  bool holds(OptIn kind) const { return reason(kind).has_value(); }
  const std::optional<std::string>& reason(OptIn kind) const {
    return kind == OptIn::SingleRounding ? single_rounding : relaxed_accumulation;
  }
  std::optional<std::string>& reason(OptIn kind) {
    return kind == OptIn::SingleRounding ? single_rounding : relaxed_accumulation;
  }
  bool holds_any() const { return single_rounding || relaxed_accumulation; }

  // The launch memo's budget component. Bit 0: single rounding holds; bit 1: relaxed accumulation
  // holds; 0 when nothing holds. It is the same in every process and on every platform.
  //
  // Reasons are deliberately not part of the key: generated code depends only on which opt-ins
  // hold, and a fused kernel's combined reason can still change (a part's own-kernel reason takes
  // over from the all-kernels one) without anything in the code changing. Code that embeds the
  // reason text (e.g. as a comment) must therefore not be memoised on key() alone.
  uint64_t key() const {
    return (single_rounding ? uint64_t{1} : 0) | (relaxed_accumulation ? uint64_t{2} : 0);
  }

  friend bool operator==(const Budget&, const Budget&) = default;
};

// One line per opt-in: "single rounding: held (REASON)" or "single rounding: not held".
std::string to_string(const Budget& budget);

} // namespace halfway::policy
