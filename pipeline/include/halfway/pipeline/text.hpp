#pragma once
// Pipelines as text: the `pipeline NAME { ... }` block of a .hk file (specs/fusion.md).
//
//     pipeline group_norm_then_silu {
//       buffer x: f32[2592];
//       temp t: f32[2592];
//       buffer y: f32[2592];
//       launch group_norm(x, gamma, beta, t, 16:u32, 4:u32, 81:u32, 1e-05:f32) groups(8, 1, 1);
//       launch silu(t, y) groups(11, 1, 1);
//     }

#include "halfway/pipeline/fuse.hpp"
#include "halfway/pipeline/pipeline.hpp"
#include "halfway/text/kernel_file.hpp"

#include <optional>
#include <string>
#include <vector>

namespace halfway::policy {
class Registry;
}

namespace halfway::pipeline {

// The pipeline `name` of `file` (its only one when `name` is empty), bound to the file's kernels
// and checked (check()). Errors name the file and line of the launch or buffer at fault. Kernels
// named in the fused form (fused_parts) are registered with `registry` (the process-wide one when
// null) as fused from their parts, so that a printed fused pipeline keeps its policy when read
// back.
Pipeline from_text(const text::KernelFile& file, std::string_view name = {},
                   policy::Registry* registry = nullptr);

// A .hk text holding every kernel the pipeline launches (each once, in order of first launch) and
// then the pipeline block; from_text reads it back to the same pipeline.
std::string print(const Pipeline& p);

// Registers every name among `names` of the fused form (fused_parts, fuse.hpp) as fused from its
// parts.
void register_fused_names(const std::vector<std::string>& names, policy::Registry* registry);

} // namespace halfway::pipeline
