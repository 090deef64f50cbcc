#pragma once
// Shared helpers of the interpreter tests: buffers from vectors, a one-call launch, and
// independent reference conversions (host _Float16 casts and bit arithmetic, never halfway::num).

#include "halfway/dsl.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/runtime/buffer.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

namespace halfway::interp::test {

template <class T> rt::HostBuffer buffer(ir::ScalarType type, const std::vector<T>& values) {
  rt::HostBuffer b(type, values.size());
  if (!values.empty())
    std::memcpy(b.data(), values.data(), b.size_bytes());
  return b;
}
template <class T> std::vector<T> contents(const rt::HostBuffer& b) {
  std::vector<T> out(b.size());
  if (!out.empty())
    std::memcpy(out.data(), b.data(), b.size_bytes());
  return out;
}

// Runs the kernel over enough workgroups for `lanes` lanes along x.
inline Stats launch(const ir::VerifiedKernel& k, uint64_t lanes, std::vector<rt::Arg> args,
                    const Options& o = {}) {
  return run(k, rt::Grid::for_lanes(k.kernel(), lanes), args, o);
}

// The launch's error, or a failed expectation when it succeeded.
inline Error launch_error(const ir::VerifiedKernel& k, const rt::Grid& grid,
                          std::vector<rt::Arg> args, const Options& o = {}) {
  try {
    run(k, grid, args, o);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "launch of " << k.name() << " succeeded; an error was expected";
  return Error(ErrorKind::Internal, "no error");
}

// ---- independent references -------------------------------------------------------------------
inline uint32_t bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
inline float from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}
// g++'s (_Float16)float is correctly rounded (docs/measured.md).
inline uint16_t round16(float f) {
  return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
}
inline float widen16(uint16_t h) {
  return static_cast<float>(std::bit_cast<_Float16>(h));
}
inline float widen_bf16(uint16_t h) {
  return from_bits(uint32_t{h} << 16);
}
// Nearest-even f32 -> bf16 on the bits (finite inputs).
inline uint16_t round_bf16(float f) {
  uint32_t u = bits(f);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

// The interpreter's NaN results are canonical: quiet, sign clear.
inline constexpr uint32_t kCanonicalNanF32 = 0x7fc00000u;

// Random f32 values with a share of specials (zeros of both signs, infinities, NaN, subnormals).
inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo = -4, float hi = 4) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::uniform_int_distribution<int> pick(0, 49);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -3e-42f, 65504.0f};
  std::vector<float> v(n);
  for (float& x : v) {
    int p = pick(rng);
    x = p < 8 ? specials[p] : d(rng);
  }
  return v;
}

} // namespace halfway::interp::test

// An error message (or any text) holds `fragment`.
#define EXPECT_HAS(text, fragment)                                                                 \
  EXPECT_NE(std::string(text).find(fragment), std::string::npos) << "message: " << (text)
