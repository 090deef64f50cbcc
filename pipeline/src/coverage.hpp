#pragma once
// The epilogue's coverage proof (specs/fusion.md §2, "Coverage"): that A's launch stores every
// element of the temporary exactly once, whatever the buffers hold.

#include "analysis.hpp"

#include <optional>
#include <string>

namespace halfway::pipeline::coverage {

// Proves that the launch `a` executes `store` (its one store to buffer parameter `t`, whose index
// does not depend on memory) exactly once for each element of t's `size` elements, for any
// contents of the buffers. Returns why not when it cannot: the reason names `t_name`.
std::optional<std::string> refute(const analysis::LaunchView& a, const ir::Stmt& store, uint32_t t,
                                  const std::string& t_name, uint64_t size);

} // namespace halfway::pipeline::coverage
