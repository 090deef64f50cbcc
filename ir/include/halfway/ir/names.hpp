#pragma once
#include <string_view>

namespace halfway {

// The name every kernel built without one gets. The precision policy refuses it as a scope: an
// opt-in naming it would silently cover every unnamed kernel.
inline constexpr std::string_view kDefaultKernelName = "unnamed_kernel";

} // namespace halfway
