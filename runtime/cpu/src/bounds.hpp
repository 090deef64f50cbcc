#pragma once
// A launch-time proof that no access of a kernel can be out of bounds, so that the CPU device
// may skip saving the written buffers (the snapshot is one memcpy of every written byte, as
// much as a whole saxpy pass costs again).
//
// Interval analysis over the kernel's unsigned integer values with this launch's facts: the grid,
// the workgroup size, every buffer's length and every scalar's value. Locals get the join of
// everything assigned to them (a fixpoint, widened to "unknown" when it keeps growing);
// conditions `lt`/`le`/`gt`/`ge` on a builtin or on a local assigned exactly once narrow it
// inside the branch (and in a for loop's body, its variable is below the bound). Any addition or
// multiplication that may wrap, any signed or float value, any loaded value is unknown. The
// proof holds only when every load, store and atomic index has a known range below its buffer's
// or shared array's length. It is conservative: "no" only costs the snapshot.

#include "halfway/ir/verifier.hpp"
#include "halfway/runtime/buffer.hpp"

#include <span>

namespace halfway::rt::cpu_detail {

bool accesses_provably_in_bounds(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args);

// The same answer, remembered per thread for the last few (kernel, grid, buffer lengths, scalar
// values): the analysis reads nothing else, and a stream of launches of one kernel on the same
// shapes (a memo hit) then pays a comparison of a few words instead of microseconds of analysis.
// Kernels are told apart by their structural hash, as the launch memo tells their code apart.
bool provably_in_bounds_cached(const ir::VerifiedKernel& kernel, const Grid& grid,
                               std::span<const Arg> args);

} // namespace halfway::rt::cpu_detail
