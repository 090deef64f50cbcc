#pragma once
// Hand-written GLSL for the benchmark cases, following the same 2D-dispatch convention as the
// generated code (linear group = id.y * num.x + id.x, return past `total_groups`), and `precise`
// wherever the generated code has NoContraction, so that both compute the same bits.

namespace halfway::bench {

inline constexpr const char* kSaxpy = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };
layout(push_constant) uniform Push { uint total_groups; uint n; float a; } p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint i = group * 64u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  precise float r = p.a * x[i] + y[i];
  y[i] = r;
}
)";

inline constexpr const char* kNarrowF16 = R"(#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer C { float c[]; };
layout(std430, binding = 3) writeonly buffer Out { float16_t out16[]; };
layout(push_constant) uniform Push { uint total_groups; uint n; } p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint i = group * 64u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  precise float r = a[i] * b[i] + c[i];
  out16[i] = float16_t(r);
}
)";

inline constexpr const char* kReduce = R"(#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer In { float v[]; };
layout(std430, binding = 1) writeonly buffer Out { float sums[]; };
layout(push_constant) uniform Push { uint total_groups; uint n; } p;
shared float partial[256];
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint lid = gl_LocalInvocationID.x;
  uint i = group * 256u + lid;
  partial[lid] = i < p.n ? v[min(i, p.n - 1u)] : 0.0;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (lid < s) {
      precise float t = partial[lid] + partial[lid + s];
      partial[lid] = t;
    }
    barrier();
  }
  if (lid == 0u) sums[group] = partial[0];
}
)";

// y = W x, W as OCP E4M3 bytes packed four per u32, one lane per row, f32 accumulation in the
// same order as examples/gemv_fp8_rows.hpp.
inline constexpr const char* kGemvE4M3 = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { uint w[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint total_groups; uint rows; uint cols; } p;
float e4m3(uint b) {
  uint e = (b >> 3) & 15u, m = b & 7u;
  float v;
  if ((b & 0x7fu) == 0x7fu) v = uintBitsToFloat(0x7fc00000u);
  else if (e == 0u) v = float(m) * (1.0 / 512.0);
  else v = uintBitsToFloat(((e + 120u) << 23) | (m << 20));
  return (b & 0x80u) != 0u ? -v : v;
}
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint row = group * 64u + gl_LocalInvocationID.x;
  if (row >= p.rows) return;
  uint words = p.cols >> 2;
  precise float acc = 0.0;
  for (uint j = 0u; j < words; ++j) {
    uint word = w[row * words + j];
    for (uint lane = 0u; lane < 4u; ++lane) {
      precise float t = e4m3((word >> (8u * lane)) & 255u) * x[j * 4u + lane];
      acc = acc + t;
    }
  }
  y[row] = acc;
}
)";

} // namespace halfway::bench
