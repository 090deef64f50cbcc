#pragma once
// A halfway kernel against its hand-written GLSL twin (compiled with shaderc) on one Vulkan device,
// through the same runtime over the same device buffers, timed by GPU timestamps in interleaved
// dispatches. vulkan_bench and workloads_bench both measure their GLSL cases with it.
//
// The GLSL follows the generated code's dispatch convention (glsl_baselines.hpp): the linear group
// is gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x, the shader returns past the push
// constant `total_groups`, which comes first, followed by `glsl_push`.

#include "halfway/ir/verifier.hpp"
#include "halfway/runtime/vulkan/device.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace halfway::bench {

struct GlslCase {
  std::string name;
  const ir::VerifiedKernel* kernel;
  const char* glsl;
  uint32_t lanes;                             // workgroup size of both
  uint64_t items;                             // lanes to run (elements, or rows for a GEMV)
  std::vector<uint64_t> scalars;              // halfway scalars by parameter
  std::vector<std::vector<std::byte>> inputs; // initial contents, by buffer binding
  std::vector<uint32_t> glsl_push;            // after total_groups
  size_t compare_binding;                     // the output both must agree on, bit for bit
  // A 2-D or 3-D launch: the logical grid, which both sides dispatch as it is (the GLSL reads
  // gl_WorkGroupID); all zero: 1-D, ceil(items / lanes) groups in the linear convention above.
  std::array<uint32_t, 3> groups{0, 0, 0};
};

struct GlslComparison {
  // Medians of `runs` interleaved dispatches (ms, GPU timestamps where the queue has them).
  double halfway_ms = 0, glsl_ms = 0, unchecked_ms = 0;
  // The first dispatch of each (Mesa compiles lazily there).
  double halfway_first_ms = 0, glsl_first_ms = 0;
  double halfway_pipeline_ms = 0, glsl_pipeline_ms = 0; // vkCreateShaderModule .. pipeline
  double codegen_ms = 0, shaderc_ms = 0;                // SPIR-V generation against shaderc
  size_t checked_sites = 0;
  uint32_t elided_checks = 0;
  // The output of the halfway kernel after its first dispatch (from the inputs).
  std::vector<std::byte> output;
};

// Runs both modules (and halfway's kernel generated without checks) once from `c.inputs`, compares
// the output binding, then times `runs` rounds. Throws std::runtime_error naming the case and the
// first differing byte when the three results are not bit-identical.
GlslComparison compare_with_glsl(rt::VulkanDevice& device, const GlslCase& c, int runs);

// GLSL -> SPIR-V with shaderc (Vulkan 1.2, optimised for performance); `ms` gets the compile time.
std::vector<uint32_t> compile_glsl(const char* name, const char* source, double* ms);

} // namespace halfway::bench
