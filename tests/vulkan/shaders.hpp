#pragma once
// Hand-written GLSL baselines. `precise` keeps drivers that contract from fusing (lavapipe never
// does), so the host's two-step f32 reference is bit-exact.

namespace halfway::vk::testing {

inline constexpr const char* kSaxpy = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { float a; uint n; } p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= p.n) return;
  precise float r = p.a * x[i] + y[i];
  y[i] = r;
}
)";

// Narrowing store: f16(round32(round32(a*b) + c)). glslang declares StorageBuffer16BitAccess
// only, so the kernel needs storageBuffer16BitAccess and nothing else.
inline constexpr const char* kNarrowF16 = R"(#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer C { float c[]; };
layout(std430, binding = 3) writeonly buffer Out { float16_t out16[]; };
layout(push_constant) uniform Push { uint n; } p;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= p.n) return;
  precise float r = a[i] * b[i] + c[i];
  out16[i] = float16_t(r);
}
)";

// One partial sum per workgroup of 256: a tree in shared memory with a barrier per level.
inline constexpr const char* kReduce = R"(#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer In { float v[]; };
layout(std430, binding = 1) writeonly buffer Out { float sums[]; };
layout(push_constant) uniform Push { uint n; } p;
shared float partial[256];
void main() {
  uint lid = gl_LocalInvocationID.x;
  uint i = gl_WorkGroupID.x * 256u + lid;
  partial[lid] = i < p.n ? v[i] : 0.0;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (lid < s) {
      precise float t = partial[lid] + partial[lid + s];
      partial[lid] = t;
    }
    barrier();
  }
  if (lid == 0u) sums[gl_WorkGroupID.x] = partial[0];
}
)";

// The 2D-dispatch convention the codegen follows: linearise the group id and guard the total.
inline constexpr const char* kIota2D = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform Push { uint total_groups; uint n; } p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint i = group * 64u + gl_LocalInvocationID.x;
  if (i < p.n) o[i] = i * 3u + 1u;
}
)";

} // namespace halfway::vk::testing
