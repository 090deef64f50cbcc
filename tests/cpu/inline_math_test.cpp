// The CPU device's inline exp and exp2 (codegen/llvm/src/lower_math.cpp) against num::math, the
// interpreter's function, bit for bit: every f16 and bf16 input, 10^7 random f32 inputs, edge
// values, and inputs the fast path cannot decide (the vectorised loop's masked fallback call).
// A second output is computed under a per-lane condition, so that the vectoriser needs the
// masked form of the whole evaluation.
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/fast_math.hpp"
#include "halfway/numerics/math.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/text/parse.hpp"

#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

using namespace halfway;
using ir::ScalarType;

namespace {

std::string type_name(ScalarType t) {
  return t == ScalarType::F32 ? "f32" : t == ScalarType::F16 ? "f16" : "bf16";
}

// e[i] = exp(x[i]), e2[i] = exp2(x[i]), and where x[i] < 0: m[i] = exp(-x[i]).
ir::VerifiedKernel math_kernel(ScalarType t) {
  const std::string ty = type_name(t);
  const std::string text =
      "kernel k workgroup(64, 1, 1) {\n  param x: buffer<" + ty + ", read>;\n  param e: buffer<" +
      ty + ", write>;\n  param e2: buffer<" + ty + ", write>;\n  param m: buffer<" + ty +
      ", write>;\n  let i: u32 = global_id(0);\n  if lt(i, len(x)) {\n    e[i] = exp(x[i]);\n" +
      "    e2[i] = exp2(x[i]);\n    if lt(x[i], 0.0:" + ty + ") {\n      m[i] = exp(neg(x[i]));\n" +
      "    }\n  }\n}\n";
  return std::move(text::parse_verified(text, "inline_math_test.hk").at(0));
}

constexpr uint64_t kUnwritten = 0x1234; // m's initial bits: not exp of any negative input

// Runs the kernel on `inputs` (patterns of t) and compares every output with num::math.
void expect_exact(ScalarType t, const std::vector<uint64_t>& inputs) {
  static policy::Registry registry;
  static rt::CpuDevice cpu(&registry);
  const ir::VerifiedKernel k = math_kernel(t);
  const num::Format f = ir::format_of(t);
  const size_t n = inputs.size();
  rt::HostBuffer x(t, n), e(t, n), e2(t, n), m(t, n);
  for (size_t i = 0; i < n; ++i) {
    x.set_bits(i, inputs[i]);
    m.set_bits(i, kUnwritten);
  }
  const rt::Arg args[] = {rt::Arg::of(x), rt::Arg::of(e), rt::Arg::of(e2), rt::Arg::of(m)};
  cpu.launch(k, rt::Grid::for_lanes(k.kernel(), n), args);
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t in = inputs[i];
    const double xd = num::to_double(f, in);
    const uint64_t neg = in ^ num::info(f).sign_mask;
    const uint64_t want[] = {num::math(num::MathFn::Exp, f, in),
                             num::math(num::MathFn::Exp2, f, in),
                             xd < 0 ? num::math(num::MathFn::Exp, f, neg) : kUnwritten};
    const uint64_t got[] = {e.get_bits(i), e2.get_bits(i), m.get_bits(i)};
    for (int j = 0; j < 3; ++j) {
      if (want[j] != got[j] && ++wrong <= 10)
        ADD_FAILURE() << type_name(t) << " "
                      << (j == 0   ? "exp"
                          : j == 1 ? "exp2"
                                   : "exp(-x)")
                      << " of 0x" << std::hex << in << ": want 0x" << want[j] << " got 0x"
                      << got[j];
    }
  }
  EXPECT_EQ(wrong, 0u) << type_name(t) << " over " << n << " inputs";
}

TEST(CpuInlineMath, AllF16AndBF16Inputs) {
  std::vector<uint64_t> all(0x10000);
  for (uint64_t b = 0; b < all.size(); ++b)
    all[b] = b;
  expect_exact(ScalarType::F16, all);
  expect_exact(ScalarType::BF16, all);
}

// Half uniform over the evaluated ranges of both functions, half any pattern, in launches of
// 2^21 (each also covers the loops' remainders: 2^21 + 3 lanes).
TEST(CpuInlineMath, RandomF32) {
  std::mt19937_64 rng(1414);
  std::uniform_real_distribution<float> in(-152.0f, 130.0f);
  for (int launch = 0; launch < 5; ++launch) {
    std::vector<uint64_t> v((size_t{1} << 21) + 3);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = i % 2 ? num::f32_bits(in(rng)) : rng() & 0xffffffffu;
    expect_exact(ScalarType::F32, v);
  }
}

// Range ends of both functions and the format boundaries (f32 and f16 overflow, subnormal and
// zero results), each with 256 neighbours either side; zeros, subnormal inputs, infinities and
// NaNs with payloads of both signs; and the inputs num::fast cannot decide among those, spread
// over a vector so that the fallback runs for single lanes of a vectorised loop.
TEST(CpuInlineMath, EdgesAndUndecidedInputs) {
  std::vector<uint64_t> v;
  const float centres[] = {0.0f,       -104.0f,    89.0f,   88.72283935546875f,
                           -87.33654f, -103.9721f, -151.0f, -150.0f,
                           -149.0f,    -126.0f,    128.0f,  129.0f,
                           11.0898f,   -17.3287f,  1.0f};
  for (float c : centres) {
    for (uint32_t d = 0; d <= 256; ++d) {
      v.push_back(num::f32_bits(c) + d);
      v.push_back(num::f32_bits(c) - d);
    }
  }
  for (uint32_t p = 0; p < 64; ++p) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      v.push_back(sign | p);               // zeros and subnormals
      v.push_back(sign | 0x7f800000u | p); // inf, signalling NaNs
      v.push_back(sign | 0x7fc00000u | p); // quiet NaNs
    }
  }
  // Undecided inputs: a scan of [1, 2) for exp and of [0.5, 1) for exp2 finds a few; each goes
  // at a different lane position among decided ones.
  std::vector<uint64_t> hard;
  for (num::MathFn fn : {num::MathFn::Exp, num::MathFn::Exp2}) {
    const uint32_t start = num::f32_bits(fn == num::MathFn::Exp ? 1.0f : 0.5f);
    for (uint32_t b = start; b < start + (1u << 23); ++b) {
      if (!num::fast::decide(fn, num::Format::F32, num::f32_from_bits(b)))
        hard.push_back(b);
    }
  }
  ASSERT_FALSE(hard.empty()) << "no undecided input found: the fallback is untested";
  for (size_t j = 0; j < hard.size(); ++j) {
    for (size_t lane = 0; lane < 17; ++lane)
      v.push_back(lane == j % 17 ? hard[j] : num::f32_bits(1.0f + static_cast<float>(lane)));
  }
  expect_exact(ScalarType::F32, v);
}

} // namespace
