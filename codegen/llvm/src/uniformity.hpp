#pragma once
// Which locals hold the same value in every lane of a workgroup. A local is lane-variant when it
// is ever assigned a value that depends on global_id or local_id, on memory (loads, atomics: the
// lowering may move a uniform statement, so memory is never trusted to be uniform), or on a
// lane-variant local; or when it is assigned under lane-variant control (inside an if, while or
// for whose condition or bounds are variant, after a return taken under such control, or in a
// loop that some lanes leave early). The analysis is flow-insensitive over locals and iterates to
// a fixpoint, like the verifier's, and is conservative: a uniform local really is uniform.

#include "halfway/ir/kernel.hpp"

#include <vector>

namespace halfway::codegen::detail {

std::vector<bool> lane_variant_locals(const ir::Kernel& k);

} // namespace halfway::codegen::detail
