#pragma once
// Hand-written GLSL twins of the workloads for the vulkan rows, in the generated code's dispatch
// convention (bench/vulkan/glsl_baselines.hpp): total_groups first in the push constants, the
// linear group id.y * num.x + id.x, and `precise` wherever the generated code has NoContraction,
// so that both compute the same bits (glsl_compare.hpp checks that they do).

namespace halfway::bench::workloads {

// y = exp(x): GLSL's exp is GLSL.std.450 Exp, the instruction halfway's exp lowers to on Vulkan.
inline constexpr const char* kExpF32 = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint total_groups; uint n; } p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint i = group * 64u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  y[i] = exp(x[i]);
}
)";

// y = W x, W row-major f32, one lane per row, acc = acc + w * x in column order (bench/cpu's
// gemv_f32 kernel).
inline constexpr const char* kGemvF32 = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint total_groups; uint rows; uint cols; } p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint row = group * 64u + gl_LocalInvocationID.x;
  if (row >= p.rows) return;
  uint base = row * p.cols;
  precise float acc = 0.0;
  for (uint j = 0u; j < p.cols; ++j) {
    precise float t = w[base + j] * x[j];
    acc = acc + t;
  }
  y[row] = acc;
}
)";

} // namespace halfway::bench::workloads
