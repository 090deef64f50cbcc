#pragma once
// Hand-written GLSL twins of the workloads for the vulkan rows, in the generated code's dispatch
// convention (bench/vulkan/glsl_baselines.hpp): total_groups first in the push constants, the
// linear group id.y * num.x + id.x, and `precise` wherever the generated code has NoContraction,
// so that both compute the same bits (glsl_compare.hpp checks that they do). Loops the kernels
// unroll in C++ (attention's 64 accumulators, conv3x3's 4 x 4 tile) are [[unroll]] here too:
// besides matching the generated code, lavapipe ends an outermost loop, nested iterations included,
// after 65,535 iterations per invocation (codegen::spirv::Target::loop_limit), which attention's
// key loop with two rolled 64-step loops inside passes at 512 keys, silently giving a wrong result.

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

// examples/gemv.hpp (f32 weights): one 64-lane workgroup per row, lane l summing, for positions
// j = l, l + 64, ... of a quarter row, columns j, j + q, j + 2q, j + 3q, then a halving tree in
// shared memory.
inline constexpr const char* kGemvF32 = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push { uint total_groups; uint rows; uint cols; } p;
shared float partial[64];
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint row = group, lid = gl_LocalInvocationID.x, quarter = p.cols >> 2;
  precise float acc = 0.0;
  if (row < p.rows) {
    for (uint j = lid; j < quarter; j += 64u) {
      uint base = row * p.cols + j;
      for (uint e = 0u; e < 4u; ++e) {
        precise float t = w[base + e * quarter] * x[j + e * quarter];
        acc = acc + t;
      }
    }
  }
  partial[lid] = acc;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (lid < s) {
      precise float t = partial[lid] + partial[lid + s];
      partial[lid] = t;
    }
    barrier();
  }
  if (lid == 0u && row < p.rows) y[row] = partial[0];
}
)";

// examples/matmul_tiled.hpp: 16 x 16 workgroups over a 2-D grid, 16 x 16 shared tiles of stride
// 17, k ascending per element.
inline constexpr const char* kMatmul = R"(#version 450
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Push { uint total_groups; uint m; uint n; uint k; } p;
shared float ta[16 * 17];
shared float tb[16 * 17];
void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint col = gl_WorkGroupID.x * 16u + tx, row = gl_WorkGroupID.y * 16u + ty;
  precise float acc = 0.0;
  uint steps = (p.k + 15u) / 16u;
  for (uint s = 0u; s < steps; ++s) {
    uint ka = s * 16u + tx, kb = s * 16u + ty;
    ta[ty * 17u + tx] = (row < p.m && ka < p.k) ? a[row * p.k + ka] : 0.0;
    tb[ty * 17u + tx] = (kb < p.k && col < p.n) ? b[kb * p.n + col] : 0.0;
    barrier();
    for (uint j = 0u; j < 16u; ++j) {
      precise float t = ta[ty * 17u + j] * tb[j * 17u + tx];
      acc = acc + t;
    }
    barrier();
  }
  if (row < p.m && col < p.n) c[row * p.n + col] = acc;
}
)";

// examples/group_norm_silu.hpp: one 256-lane workgroup per (batch, group), tree sums of the
// values and of the squared deviations, then y = silu((x - mean) * rsqrt(var + eps) * gamma +
// beta). `total` is len(y).
inline constexpr const char* kGroupNormSilu = R"(#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 2) readonly buffer Beta { float beta[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint total_groups; uint channels; uint groups; uint hw; float eps; uint total;
} p;
shared float red[256];
void tree() {
  uint lid = gl_LocalInvocationID.x;
  barrier();
  for (uint s = 128u; s > 0u; s >>= 1) {
    if (lid < s) {
      precise float t = red[lid] + red[lid + s];
      red[lid] = t;
    }
    barrier();
  }
}
void main() {
  uint gi = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (gi >= p.total_groups) return;
  uint lid = gl_LocalInvocationID.x;
  uint per_group = p.channels / p.groups, count = per_group * p.hw;
  bool live = gi < p.total / count;
  uint first_channel = (gi % p.groups) * per_group, base = gi * count;
  float n = float(count);
  precise float sum = 0.0;
  if (live)
    for (uint i = lid; i < count; i += 256u) sum = sum + x[base + i];
  red[lid] = sum;
  tree();
  precise float mean = red[0] / n;
  barrier();
  precise float sq = 0.0;
  if (live)
    for (uint i = lid; i < count; i += 256u) {
      precise float d = x[base + i] - mean;
      sq = sq + d * d;
    }
  red[lid] = sq;
  tree();
  precise float inv_std = inversesqrt(red[0] / n + p.eps);
  if (live)
    for (uint i = lid; i < count; i += 256u) {
      uint c = first_channel + i / p.hw;
      precise float v = (x[base + i] - mean) * inv_std * gamma[c] + beta[c];
      precise float r = v / (1.0 + exp(-v));
      y[base + i] = r;
    }
}
)";

// examples/attention.hpp: one lane per (head, query), head_dim 64, online softmax started from
// the first key. `lanes` is len(o) / 64.
inline constexpr const char* kAttention = R"(#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push { uint total_groups; uint seq; float scale; uint lanes; } p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint lane = group * 64u + gl_LocalInvocationID.x;
  if (lane >= p.lanes) return;
  if (p.seq == 0u) return;
  uint head = lane / p.seq, qbase = lane * 64u, kv0 = head * p.seq * 64u;
  // The first key sets m, l = 1 and acc = its values, as the kernel does (exp(-inf) has no
  // documented bound on Vulkan, so a start from m = -inf would differ on a real driver).
  precise float dot0 = 0.0;
  for (uint d = 0u; d < 64u; ++d) dot0 = dot0 + q[qbase + d] * k[kv0 + d];
  precise float m = dot0 * p.scale;
  precise float l = 1.0;
  precise float acc[64];
  [[unroll]] for (uint d = 0u; d < 64u; ++d) acc[d] = v[kv0 + d];
  for (uint j = 1u; j < p.seq; ++j) {
    uint kbase = kv0 + j * 64u;
    precise float dot = 0.0;
    for (uint d = 0u; d < 64u; ++d) dot = dot + q[qbase + d] * k[kbase + d];
    precise float s = dot * p.scale;
    float m_new = max(m, s);
    precise float corr = exp(m - m_new);
    precise float pj = exp(s - m_new);
    l = l * corr + pj;
    [[unroll]] for (uint d = 0u; d < 64u; ++d) acc[d] = acc[d] * corr + pj * v[kbase + d];
    m = m_new;
  }
  [[unroll]] for (uint d = 0u; d < 64u; ++d) {
    precise float r = acc[d] / l;
    o[qbase + d] = r;
  }
}
)";

// examples/conv3x3.hpp: each lane 4 output channels x 4 x-pixels, a 3 x 6 input window per input
// channel, per output bias then ci, ky, kx ascending. `xlen` is len(x).
inline constexpr const char* kConv3x3 = R"(#version 450
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint total_groups; uint cin; uint cout; uint height; uint width; uint xlen;
} p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint t = group * 64u + gl_LocalInvocationID.x;
  uint xtiles = (p.width + 3u) / 4u, otiles = (p.cout + 3u) / 4u;
  if (t >= xtiles * p.height * otiles) return;
  uint x0 = (t % xtiles) * 4u, row = (t / xtiles) % p.height, o0 = (t / (xtiles * p.height)) * 4u;
  uint oc[4];
  [[unroll]] for (uint o = 0u; o < 4u; ++o) oc[o] = min(o0 + o, p.cout - 1u);
  precise float acc[16];
  [[unroll]] for (uint o = 0u; o < 4u; ++o)
    [[unroll]] for (uint q = 0u; q < 4u; ++q) acc[o * 4u + q] = bias[oc[o]];
  for (uint ci = 0u; ci < p.cin; ++ci) {
    float win[18];
    [[unroll]] for (uint ky = 0u; ky < 3u; ++ky) {
      uint pr = row + ky;
      [[unroll]] for (uint j = 0u; j < 6u; ++j) {
        uint pc = x0 + j;
        bool inside = pr >= 1u && pr <= p.height && pc >= 1u && pc <= p.width;
        uint at = (ci * p.height + pr - 1u) * p.width + pc - 1u;
        win[ky * 6u + j] = inside ? x[min(at, p.xlen - 1u)] : 0.0;
      }
    }
    [[unroll]] for (uint ky = 0u; ky < 3u; ++ky)
      [[unroll]] for (uint kx = 0u; kx < 3u; ++kx)
        [[unroll]] for (uint o = 0u; o < 4u; ++o) {
          float wv = w[((oc[o] * p.cin + ci) * 3u + ky) * 3u + kx];
          [[unroll]] for (uint q = 0u; q < 4u; ++q)
            acc[o * 4u + q] = acc[o * 4u + q] + wv * win[ky * 6u + q + kx];
        }
  }
  [[unroll]] for (uint o = 0u; o < 4u; ++o)
    [[unroll]] for (uint q = 0u; q < 4u; ++q)
      if (o0 + o < p.cout && x0 + q < p.width)
        y[((o0 + o) * p.height + row) * p.width + x0 + q] = acc[o * 4u + q];
}
)";

// examples/act.hpp, act<f32>: o = |w*w - 1| + clamp(w, 0, 1).
inline constexpr const char* kActF32 = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { float w[]; };
layout(std430, binding = 1) writeonly buffer O { float o[]; };
layout(push_constant) uniform Push { uint total_groups; uint n; } p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint i = group * 64u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  float v = w[i];
  precise float r = abs(v * v - 1.0) + min(max(v, 0.0), 1.0);
  o[i] = r;
}
)";

// act<f16>: the same in f16 arithmetic (every op rounds to binary16).
inline constexpr const char* kActF16 = R"(#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer W { float16_t w[]; };
layout(std430, binding = 1) writeonly buffer O { float16_t o[]; };
layout(push_constant) uniform Push { uint total_groups; uint n; } p;
void main() {
  uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (group >= p.total_groups) return;
  uint i = group * 64u + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  float16_t v = w[i];
  precise float16_t r = abs(v * v - float16_t(1.0)) + min(max(v, float16_t(0.0)), float16_t(1.0));
  o[i] = r;
}
)";

// examples/softmax_f16out.hpp: one 64-lane workgroup per row, tree max and tree sum, the f32
// product exp(x - max) * (1 / sum) narrowed to f16 at the store. `total` is len(y).
inline constexpr const char* kSoftmaxF16Out = R"(#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float16_t y[]; };
layout(push_constant) uniform Push { uint total_groups; uint cols; uint total; } p;
shared float red[64];
void main() {
  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (row >= p.total_groups) return;
  uint lid = gl_LocalInvocationID.x;
  bool live = row < p.total / p.cols;
  uint base = row * p.cols;
  float m = uintBitsToFloat(0xff800000u);
  if (live)
    for (uint c = lid; c < p.cols; c += 64u) m = max(m, x[base + c]);
  red[lid] = m;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (lid < s) red[lid] = max(red[lid], red[lid + s]);
    barrier();
  }
  float row_max = red[0];
  barrier();
  precise float sum = 0.0;
  if (live)
    for (uint c = lid; c < p.cols; c += 64u) sum = sum + exp(x[base + c] - row_max);
  red[lid] = sum;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (lid < s) {
      precise float t = red[lid] + red[lid + s];
      red[lid] = t;
    }
    barrier();
  }
  precise float inv = 1.0 / red[0];
  if (live)
    for (uint c = lid; c < p.cols; c += 64u) {
      precise float r = exp(x[base + c] - row_max) * inv;
      y[base + c] = float16_t(r);
    }
}
)";

} // namespace halfway::bench::workloads
