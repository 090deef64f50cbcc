#pragma once
// How a fused kernel's budget comes about, for `halfway sites` and reports: its parts, each
// part's own budget with its reason, and the meet.

#include <string>
#include <string_view>

namespace halfway::policy {
class Registry;
}

namespace halfway::pipeline {

// Empty for a kernel that is not registered as fused. Otherwise, e.g.
//     fused from: group_norm, silu
//       part group_norm: single rounding: held (R); relaxed accumulation: not held
//       part silu: single rounding: not held; relaxed accumulation: not held
//     meet: an opt-in holds only when every part holds it; a scope naming the fused kernel
//     covers nothing
std::string describe_fused(std::string_view name, const policy::Registry& registry);

} // namespace halfway::pipeline
