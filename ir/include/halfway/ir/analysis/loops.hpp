#pragma once
// Loops whose iterations are known before they run: the trip count of a `for` with constant
// bounds, and which loops may go without a cancel poll of their own. Both code generators poll a
// cancel word in loops (so that a timeout or an interrupt ends a running launch); a short loop with
// constant bounds and no loop inside needs no poll, since the code around it polls, and a poll per
// iteration (a volatile load) keeps LLVM's vectoriser off the loop and costs lavapipe a load and a
// test per iteration.

#include "halfway/ir/kernel.hpp"

#include <cstdint>
#include <optional>

namespace halfway::ir {

// The most iterations a for loop may run without a cancel poll of its own.
inline constexpr uint64_t kUnpolledTrips = 4096;

// The trip count of a for loop whose variable is an integer of at most 32 bits, whose start, end
// and step are constants, the step positive, and whose increments cannot wrap; nullopt otherwise.
std::optional<uint64_t> constant_trips(const Kernel& k, const Stmt& loop);

// A for loop that needs no cancel poll of its own: constant_trips at most kUnpolledTrips, and a
// body with no loop and no write to the variable.
bool bounded_without_poll(const Kernel& k, const Stmt& loop);

} // namespace halfway::ir
