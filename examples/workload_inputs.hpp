#pragma once
// Inputs for the workloads (examples.hpp, workloads()): buffers, scalars and the grid of one
// launch, shaped as each kernel's comment says, at two sizes: Scale::Test (small and ragged: every
// dimension leaves a partial tile or workgroup) and Scale::Demo (what `halfway demo` runs).
//
// Realistic: finite values only (no NaN or infinity in weights or activations), fp8 weights drawn
// as f32 values rounded to the format (so every finite code near the weights' range appears),
// in-range shapes. Tie-stressing: the f32 data mixes values over many binades with powers of two
// down to 2^-24 of the others and near-cancelling pairs, so that most f32 additions round and
// many round exactly at a tie: any change of summation order, any contraction into an fma, any
// reassociation shows as a different bit pattern. act<f16> runs on every finite f16 value.

#include "halfway/ir/kernel.hpp"
#include "halfway/ir/names.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/support/error.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace halfway::examples {

enum class Scale { Test, Demo };

struct WorkloadInputs {
  std::map<std::string, rt::HostBuffer> buffers; // by parameter name, every buffer parameter
  std::map<std::string, uint64_t> scalars;       // bit patterns, every scalar parameter
  rt::Grid grid;

  // One rt::Arg per parameter of `k`, pointing into `buffers` (which must outlive them).
  std::vector<rt::Arg> args(const ir::Kernel& k) {
    std::vector<rt::Arg> out;
    for (const auto& p : k.params)
      out.push_back(p.is_buffer() ? rt::Arg::of(buffers.at(p.name))
                                  : rt::Arg::bits(scalars.at(p.name)));
    return out;
  }
};

namespace detail_inputs {

inline uint64_t f32_bits(float v) {
  return std::bit_cast<uint32_t>(v);
}

// Values over the binades 2^lo .. 2^hi, as the header describes: a quarter uniform over the
// binades, a quarter powers of two from 2^(lo-24) up (each an exact tie or near one against the
// larger values it meets), a quarter with low fraction bits set (1 + k·2^-23), a quarter cancelling
// an earlier value up to its last bits.
inline std::vector<float> stress(size_t n, uint64_t seed, int lo = -4, int hi = 4) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](uint64_t m) { return rng() % m; };
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    float sign = uniform(2) ? -1.0f : 1.0f;
    int e = lo + static_cast<int>(uniform(static_cast<uint64_t>(hi - lo + 1)));
    float frac = 1.0f + static_cast<float>(uniform(1u << 23)) * 0x1p-23f;
    switch (i % 4) {
    case 0:
      v[i] = sign * std::ldexp(frac, e);
      break;
    case 1:
      v[i] = sign * std::ldexp(1.0f, e - static_cast<int>(uniform(25)));
      break;
    case 2:
      v[i] = sign * std::ldexp(1.0f + static_cast<float>(1 + uniform(7)) * 0x1p-23f, e);
      break;
    default:
      v[i] = i >= 3 ? -v[i - 3] * (1.0f + static_cast<float>(uniform(4)) * 0x1p-23f)
                    : sign * std::ldexp(frac, e);
    }
  }
  return v;
}

// Uniform values in [lo, hi).
inline std::vector<float> uniform(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = lo + (hi - lo) * static_cast<float>(rng() >> 40) * 0x1p-24f;
  return v;
}

inline rt::HostBuffer f32_buffer(const std::vector<float>& v) {
  rt::HostBuffer b(ir::ScalarType::F32, v.size());
  for (size_t i = 0; i < v.size(); ++i)
    b.set_bits(i, f32_bits(v[i]));
  return b;
}

// Weights in `format` (f32, f16, e4m3 or e5m2): `v` rounded to the format, fp8 packed four per
// u32 word with element 0 in the low byte.
inline rt::HostBuffer weight_buffer(ir::ScalarType format, const std::vector<float>& v) {
  using ir::ScalarType;
  if (format == ScalarType::F32)
    return f32_buffer(v);
  if (format == ScalarType::F16) {
    rt::HostBuffer b(ScalarType::F16, v.size());
    for (size_t i = 0; i < v.size(); ++i)
      b.set_bits(i, num::f32_to_f16(std::bit_cast<uint32_t>(v[i])));
    return b;
  }
  rt::HostBuffer b(ScalarType::U32, v.size() / 4);
  for (size_t i = 0; i < b.size(); ++i) {
    uint64_t word = 0;
    for (size_t e = 0; e < 4; ++e) {
      uint32_t bits = std::bit_cast<uint32_t>(v[i * 4 + e]);
      uint64_t code = format == ScalarType::E4M3 ? num::f32_to_e4m3(bits) : num::f32_to_e5m2(bits);
      word |= code << (8 * e);
    }
    b.set_bits(i, word);
  }
  return b;
}

inline rt::Grid groups(uint64_t x, uint64_t y = 1) {
  return rt::Grid{{static_cast<uint32_t>(x), static_cast<uint32_t>(y), 1}};
}

} // namespace detail_inputs

// The inputs of workload `k` (by kernel name). A Usage error names a kernel that is not one.
inline WorkloadInputs workload_inputs(const ir::Kernel& k, Scale scale, uint64_t seed = 1) {
  using namespace detail_inputs;
  using ir::ScalarType;
  const bool demo = scale == Scale::Demo;
  const std::string& name = k.name;
  WorkloadInputs in;
  auto zeros = [](ScalarType t, size_t n) { return rt::HostBuffer(t, n); };
  auto u32 = [&](const char* p, uint32_t v) { in.scalars[p] = v; };
  if (name == "matmul_tiled") {
    const uint32_t m = demo ? 128 : 37, n = demo ? 128 : 45, kk = demo ? 128 : 53;
    in.buffers["a"] = f32_buffer(stress(size_t{m} * kk, seed));
    in.buffers["b"] = f32_buffer(stress(size_t{kk} * n, seed + 1));
    in.buffers["c"] = zeros(ScalarType::F32, size_t{m} * n);
    u32("m", m);
    u32("n", n);
    u32("k", kk);
    in.grid = groups((n + 15) / 16, (m + 15) / 16);
  } else if (name == "group_norm_silu") {
    // Test: 324 values per group, more than the 256 lanes; demo: 64 channels of 32 x 32.
    const uint32_t batch = 2, channels = demo ? 64 : 16, ngroups = demo ? 32 : 4,
                   hw = demo ? 1024 : 81;
    const size_t n = size_t{batch} * channels * hw;
    in.buffers["x"] = f32_buffer(stress(n, seed, -3, 3));
    in.buffers["gamma"] = f32_buffer(uniform(channels, seed + 1, 0.5f, 1.5f));
    in.buffers["beta"] = f32_buffer(uniform(channels, seed + 2, -0.5f, 0.5f));
    in.buffers["y"] = zeros(ScalarType::F32, n);
    u32("channels", channels);
    u32("groups", ngroups);
    u32("hw", hw);
    in.scalars["eps"] = f32_bits(1e-5f);
    in.grid = groups(size_t{batch} * ngroups);
  } else if (name == "attention") {
    const uint32_t heads = demo ? 4 : 2, seq = demo ? 128 : 37;
    const size_t n = size_t{heads} * seq * 64;
    in.buffers["q"] = f32_buffer(uniform(n, seed, -2, 2));
    in.buffers["k"] = f32_buffer(uniform(n, seed + 1, -2, 2));
    in.buffers["v"] = f32_buffer(stress(n, seed + 2, -2, 2));
    in.buffers["o"] = zeros(ScalarType::F32, n);
    u32("seq", seq);
    in.scalars["scale"] = f32_bits(0.125f); // 1 / sqrt(64)
    in.grid = groups((size_t{heads} * seq + 63) / 64);
  } else if (name == "conv3x3") {
    const uint32_t cin = demo ? 16 : 5, cout = demo ? 32 : 10, h = demo ? 32 : 7,
                   w = demo ? 32 : 13;
    in.buffers["x"] = f32_buffer(stress(size_t{cin} * h * w, seed, -2, 2));
    in.buffers["w"] = f32_buffer(stress(size_t{cout} * cin * 9, seed + 1, -4, 0));
    in.buffers["bias"] = f32_buffer(uniform(cout, seed + 2, -0.25f, 0.25f));
    in.buffers["y"] = zeros(ScalarType::F32, size_t{cout} * h * w);
    u32("cin", cin);
    u32("cout", cout);
    u32("height", h);
    u32("width", w);
    const size_t lanes = size_t{(w + 3) / 4} * h * ((cout + 3) / 4);
    in.grid = groups((lanes + 63) / 64);
  } else if (name.rfind("gemv_", 0) == 0) {
    // One workgroup per row. Weights in [-2, 2] rounded to the format, x tie-stressing.
    const uint32_t rows = demo ? 512 : 75, cols = demo ? 1024 : 4 * 97;
    ScalarType format = name == "gemv_f32"         ? ScalarType::F32
                        : name == "gemv_f16"       ? ScalarType::F16
                        : name == "gemv_fp8<e4m3>" ? ScalarType::E4M3
                                                   : ScalarType::E5M2;
    in.buffers["w"] = weight_buffer(format, uniform(size_t{rows} * cols, seed, -2, 2));
    in.buffers["x"] = f32_buffer(stress(cols, seed + 1));
    in.buffers["y"] = zeros(ScalarType::F32, rows);
    u32("cols", cols);
    in.grid = groups(rows);
  } else if (name == "act<f32>") {
    // Tie-stressing values, and every f32 around 0 and 1 where the clamp and |w·w − 1| turn.
    std::vector<float> v = stress(demo ? 1u << 20 : 20000, seed, -8, 3);
    for (size_t i = 0; i < v.size(); i += 5)
      v[i] = std::nextafter(1.0f, i % 2 ? 2.0f : 0.0f) * (i % 3 ? 1.0f : -1.0f);
    in.buffers["w"] = f32_buffer(v);
    in.buffers["o"] = zeros(ScalarType::F32, v.size());
    in.grid = groups((v.size() + 63) / 64);
  } else if (name == "act<f16>") {
    // Every finite f16 value (both zeros, subnormals, the largest): each rounding of w·w and of
    // w·w − 1 in f16 happens somewhere, ties included.
    std::vector<uint16_t> codes;
    for (uint32_t c = 0; c < 0x10000; ++c)
      if ((c & 0x7c00) != 0x7c00)
        codes.push_back(static_cast<uint16_t>(c));
    rt::HostBuffer w(ScalarType::F16, codes.size());
    for (size_t i = 0; i < codes.size(); ++i)
      w.set_bits(i, codes[i]);
    in.buffers["w"] = std::move(w);
    in.buffers["o"] = zeros(ScalarType::F16, codes.size());
    in.grid = groups((codes.size() + 63) / 64);
  } else if (name == "softmax_f16out") {
    // Logits in [-8, 8) with repeated maxima (a row's largest value appears several times).
    const uint32_t rows = demo ? 256 : 9, cols = demo ? 1024 : 203;
    std::vector<float> x = uniform(size_t{rows} * cols, seed, -8, 8);
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t c = r % 7; c < cols; c += 41)
        x[size_t{r} * cols + c] = 7.9375f;
    in.buffers["x"] = f32_buffer(x);
    in.buffers["y"] = zeros(ScalarType::F16, size_t{rows} * cols);
    u32("cols", cols);
    in.grid = groups(rows);
  } else {
    throw Error(ErrorKind::Usage, "no workload inputs for kernel " + name, {.kernel = name});
  }
  return in;
}

} // namespace halfway::examples
