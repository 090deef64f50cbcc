#pragma once
// Everything the LLVM lowering decides about a kernel before it emits an instruction, computed
// once from the kernel, the budget and the options and read-only afterwards. Emission
// (lowering.hpp) reads the plan; it never changes it, so the order in which parts and statements
// are emitted cannot change a decision.

#include "halfway/codegen/llvm/abi.hpp"
#include "halfway/codegen/llvm/lower.hpp"
#include "halfway/ir/analysis/uniformity.hpp"
#include "nan_state.hpp"
#include "precision.hpp"
#include "storage.hpp"

#include <cstdint>
#include <vector>

namespace halfway::codegen::llvm::detail {

struct LoweringPlan {
  LoweringPlan(const ir::Kernel& k, const policy::Budget& budget, const LlvmOptions& options);

  StoragePlan storage;       // where each local lives, and the kernel's parts
  PrecisionPlan precision;   // lifted narrowing sites, exact sites, relaxed accumulations
  std::vector<AbiParam> abi; // the groups function's parameters (abi.hpp)
  // NaN states (nan_state.hpp): per local, the join over its assignments; per node, from its
  // operands and the locals. The emitted code satisfies exactly these.
  std::vector<NanState> local_nan, node_nan;
  std::vector<bool> observable; // observable_locals(): which lets keep their loads
  // Which values LLVM may see as the same in every lane (LoadLevel::Address):
  // lane_loop_metadata's "LLVM 19: uniform predicated division".
  ir::UniformityAnalysis address_uniformity;
  uint32_t lanes = 1; // lanes per workgroup
  // The per-thread scratch: shared arrays, then private arrays, each 64-byte aligned. It is
  // zeroed per workgroup, which is the start of each of its lanes. A private array is
  // element-major (element i of lane l at private_offset[a] + (i * lanes + l) * bytes), so that
  // a lane loop reading acc[i] reads consecutive addresses and vectorises across lanes; or, when
  // private_lane_major[a], lane-major (at private_offset[a] + (l * size + i) * bytes): every
  // access is inside a loop and some access indexes by its innermost loop's variable, so it is a
  // lane's own loop over the array that the vectoriser widens (attention's `acc[t] = acc[t] *
  // corr + p * v[..]`, gathers and scatters element-major). Only addresses differ.
  std::vector<uint64_t> shared_offset, private_offset;
  std::vector<bool> private_lane_major;
  uint64_t scratch_bytes = 0;
  // Flat mode: a kernel that is one Lanes part, 1-D workgroups, no shared or private memory runs
  // each row of workgroups as one loop over t = group_x * X + lane, so the vectoriser sees one
  // long loop (private arrays are indexed by the lane within the workgroup, which flat mode does
  // not keep).
  bool flat = false;
};

} // namespace halfway::codegen::llvm::detail
