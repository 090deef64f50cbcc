// The precision opt-ins reach the generated code: with single rounding accepted the CPU device
// fuses narrow_f16's multiply-add (observably different from the interpreter on tie-stressing
// inputs, and within the §4 bound); the exact mode rounds once from the exact value (equal to the
// interpreter's single-rounding model); relaxed accumulation stays within its bound.
#include "example_inputs.hpp"
#include "examples.hpp"
#include "gemv_fp8_rows.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/ulp.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "tie_inputs.hpp"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>

using namespace halfway;
using namespace halfway::cpu_test;

namespace {

struct NarrowRun {
  MulAddInputs in;
  std::vector<uint16_t> out;
};

NarrowRun run_narrow_f16(rt::Device& device, size_t n, uint64_t seed) {
  ir::VerifiedKernel k = examples::narrow_f16();
  NarrowRun r{tie_mul_add(n, seed), {}};
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), n));
  in.buffer(k.kernel(), "a") = make_buffer(ir::ScalarType::F32, r.in.a);
  in.buffer(k.kernel(), "b") = make_buffer(ir::ScalarType::F32, r.in.b);
  in.buffer(k.kernel(), "c") = make_buffer(ir::ScalarType::F32, r.in.c);
  in.buffer(k.kernel(), "out16") = rt::HostBuffer(ir::ScalarType::F16, n);
  Launch got = run_device(device, k, in);
  r.out = contents<uint16_t>(got.buffer(k.kernel(), "out16"));
  return r;
}

double f16_value(uint16_t h) {
  return static_cast<double>(std::bit_cast<_Float16>(h));
}

// §4: a fused multiply-add narrowed once is within one binary16 ulp + |a*b| * 2^-24 of the strict
// two-step value.
bool within_bound(float a, float b, float c, uint16_t got) {
  uint16_t strict = two_step_f16_mul_add(a, b, c);
  double s = f16_value(strict), g = f16_value(got);
  if (std::isinf(s) || std::isinf(g))
    return std::abs(s) >= 65504 && std::abs(g) >= 65504;
  double bound = num::ulp_of(num::Format::F16, s) +
                 std::fabs(static_cast<double>(a) * static_cast<double>(b)) * std::ldexp(1.0, -24);
  return std::fabs(s - g) <= bound;
}

TEST(CpuPrecision, SingleRoundingReachesTheCode) {
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"), "tested bound"));
  rt::CpuDevice cpu(&registry);
  NarrowRun r = run_narrow_f16(cpu, 40000, 11);
  size_t differ = 0, outside = 0, not_fma = 0;
  for (size_t i = 0; i < r.out.size(); ++i) {
    float a = r.in.a[i], b = r.in.b[i], c = r.in.c[i];
    differ += r.out[i] != two_step_f16_mul_add(a, b, c);
    outside += !within_bound(a, b, c, r.out[i]);
    // x86 contracts into vfmadd: one f32 rounding, then the narrowing.
    not_fma += r.out[i] != std::bit_cast<uint16_t>(static_cast<_Float16>(std::fma(a, b, c)));
  }
  EXPECT_GT(differ, r.out.size() / 20) << "the opt-in did not change the code";
  EXPECT_EQ(outside, 0u);
  EXPECT_EQ(not_fma, 0u);
}

TEST(CpuPrecision, ExactSingleRoundingRoundsOnce) {
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::all_kernels(), "exact"));
  rt::CpuDevice cpu(&registry, {.single_rounding = codegen::llvm::SingleRoundingMode::Exact});
  NarrowRun r = run_narrow_f16(cpu, 40000, 12);
  size_t wrong = 0, differ = 0;
  for (size_t i = 0; i < r.out.size(); ++i) {
    float a = r.in.a[i], b = r.in.b[i], c = r.in.c[i];
    uint16_t want = exact_f16_mul_add(a, b, c);
    differ += r.out[i] != two_step_f16_mul_add(a, b, c);
    if (r.out[i] != want && ++wrong <= 5)
      ADD_FAILURE() << "a=" << a << " b=" << b << " c=" << c << ": want 0x" << std::hex << want
                    << ", got 0x" << r.out[i];
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(differ, r.out.size() / 10);
}

// The exact mode is the interpreter's single-rounding model (the most-fusing device), bit for bit,
// specials included.
TEST(CpuPrecision, ExactModeMatchesInterpreterSingleRoundingModel) {
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::all_kernels(), "exact"));
  rt::CpuDevice cpu(&registry, {.single_rounding = codegen::llvm::SingleRoundingMode::Exact});
  ir::VerifiedKernel k = examples::narrow_f16();
  Launch in = example_inputs(k, 5);
  Launch want = run_interp(k, in, interp::NarrowingModel::SingleRounding);
  EXPECT_EQ(compare_bits(k.kernel(), want, run_device(cpu, k, in)), "");
}

TEST(CpuPrecision, OptInForAnotherKernelChangesNothing) {
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("saxpy"), "other kernel"));
  ASSERT_TRUE(registry.accept_relaxed_accumulation(policy::Scope::all_kernels(), "not this one"));
  rt::CpuDevice cpu(&registry);
  NarrowRun r = run_narrow_f16(cpu, 20000, 13);
  for (size_t i = 0; i < r.out.size(); ++i)
    ASSERT_EQ(r.out[i], two_step_f16_mul_add(r.in.a[i], r.in.b[i], r.in.c[i])) << i;
}

// §5: a relaxed accumulation of n terms is within gamma_n * sum |terms| of the strict one.
TEST(CpuPrecision, RelaxedAccumulationWithinBound) {
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_relaxed_accumulation(policy::Scope::all_kernels(), "dot products"));
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = examples::gemv_fp8_rows<e4m3>();
  const uint32_t rows = 200, cols = 512;
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), rows));
  rt::HostBuffer w(ir::ScalarType::U32, rows * cols / 4);
  for (size_t i = 0; i < w.size(); ++i)
    w.set_bits(i, (i * 2654435761u) & 0x77777777u); // no NaN
  std::vector<float> x(cols);
  for (uint32_t j = 0; j < cols; ++j)
    x[j] = std::sin(0.37f * static_cast<float>(j)) * 3;
  in.buffer(k.kernel(), "w") = w.clone();
  in.buffer(k.kernel(), "x") = make_buffer(ir::ScalarType::F32, x);
  in.buffer(k.kernel(), "y") = rt::HostBuffer(ir::ScalarType::F32, rows);
  in.set_scalar(k.kernel(), "cols", cols);
  Launch strict = run_interp(k, in);
  Launch relaxed = run_device(cpu, k, in);
  std::vector<float> ys = contents<float>(strict.buffer(k.kernel(), "y"));
  std::vector<float> yr = contents<float>(relaxed.buffer(k.kernel(), "y"));
  size_t differ = 0;
  for (uint32_t r = 0; r < rows; ++r) {
    double sum_abs = 0;
    for (uint32_t j = 0; j < cols; ++j) {
      uint8_t byte = static_cast<uint8_t>(w.get_bits((r * cols + j) / 4) >> (8 * (j % 4)));
      float wv = std::bit_cast<float>(num::e4m3_to_f32(byte));
      sum_abs += std::fabs(static_cast<double>(wv) * x[j]);
    }
    double gamma = 2.0 * cols * std::ldexp(1.0, -24); // two roundings per term, both relaxed
    EXPECT_LE(std::fabs(static_cast<double>(ys[r]) - yr[r]), gamma * sum_abs) << "row " << r;
    differ += ys[r] != yr[r];
  }
  RecordProperty("rows_that_differ", static_cast<int>(differ));
}

// The same bound on matmul_tiled's 2-D workgroups, whose rows of lanes run their tile loop in step
// with the products contracted (lower_lanes.cpp, JamPlan::rows): every element of C within
// gamma_k * sum |a b| of the interpreter's strict one, at a size whose edges fall inside tiles.
TEST(CpuPrecision, RelaxedMatmulWithinBound) {
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_relaxed_accumulation(policy::Scope::all_kernels(), "matmul"));
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = examples::matmul_tiled();
  const uint32_t m = 37, n = 45, kk = 70;
  std::vector<float> a(size_t{m} * kk), b(size_t{kk} * n);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = std::sin(0.37f * static_cast<float>(i)) * 3;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = std::cos(0.11f * static_cast<float>(i)) * 2;
  Launch in(k.kernel(), rt::Grid{{(n + 15) / 16, (m + 15) / 16, 1}});
  in.buffer(k.kernel(), "a") = make_buffer(ir::ScalarType::F32, a);
  in.buffer(k.kernel(), "b") = make_buffer(ir::ScalarType::F32, b);
  in.buffer(k.kernel(), "c") = rt::HostBuffer(ir::ScalarType::F32, size_t{m} * n);
  in.set_scalar(k.kernel(), "m", m);
  in.set_scalar(k.kernel(), "n", n);
  in.set_scalar(k.kernel(), "k", kk);
  Launch strict = run_interp(k, in);
  Launch relaxed = run_device(cpu, k, in);
  std::vector<float> cs = contents<float>(strict.buffer(k.kernel(), "c"));
  std::vector<float> cr = contents<float>(relaxed.buffer(k.kernel(), "c"));
  size_t differ = 0;
  for (uint32_t i = 0; i < m; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      double sum_abs = 0;
      for (uint32_t t = 0; t < kk; ++t)
        sum_abs += std::fabs(static_cast<double>(a[size_t{i} * kk + t]) * b[size_t{t} * n + j]);
      const double gamma = 2.0 * kk * std::ldexp(1.0, -24);
      const size_t e = size_t{i} * n + j;
      EXPECT_LE(std::fabs(static_cast<double>(cs[e]) - cr[e]), gamma * sum_abs) << i << "," << j;
      differ += cs[e] != cr[e];
    }
  // The contracted products do change some sums: the relaxed code is the one that ran.
  EXPECT_GT(differ, 0u);
  RecordProperty("elements_that_differ", static_cast<int>(differ));
}

} // namespace
