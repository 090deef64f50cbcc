#pragma once
// The two ways a kernel's author may let a device round differently from the interpreter. They are
// separate on purpose: each lifts a different guarantee, with a different error bound
// (specs/f16-narrowing-barrier.md §4 and §5), so accepting one never accepts the other.

#include <array>
#include <string_view>

namespace halfway::policy {

enum class OptIn {
  // No narrowing barriers: a device may round a narrowed expression once, from its exact value,
  // where the interpreter rounds to f32 and then to f16. Within one f16 ulp (+ |a*b|*2^-24 for a
  // fused multiply-add) of the interpreter, and never less accurate.
  SingleRounding,
  // Loop-carried accumulations (reductions, dot products) may be reassociated and contracted.
  RelaxedAccumulation,
};

inline constexpr std::array<OptIn, 2> kAllOptIns = {OptIn::SingleRounding,
                                                    OptIn::RelaxedAccumulation};

// "single rounding", "relaxed accumulation": for logs, reports and error messages.
std::string_view opt_in_name(OptIn kind);
// "--accept-single-rounding", "--accept-relaxed-accumulation": the CLI flag (see flag.hpp).
std::string_view opt_in_flag(OptIn kind);

} // namespace halfway::policy
