// Hand-written GLSL kernels against host references computed here: saxpy, the f16 narrowing
// store and a shared-memory reduction, on mapped and on staged buffers.

#include "glsl.hpp"
#include "shaders.hpp"

#include <bit>
#include <cmath>
#include <random>

namespace halfway::vk {
// For gtest's test names and failure messages.
void PrintTo(MemoryMode mode, std::ostream* out) {
  *out << (mode == MemoryMode::Staged ? "Staged" : "Auto");
}
} // namespace halfway::vk

namespace halfway::vk::testing {
namespace {

class Kernels : public VulkanTest, public ::testing::WithParamInterface<MemoryMode> {
protected:
  void SetUp() override {
    RuntimeOptions options = test_options();
    options.device_options.memory = GetParam();
    runtime = std::make_unique<Runtime>(options);
  }
};

uint32_t groups_for(uint32_t n, uint32_t lanes) {
  return (n + lanes - 1) / lanes;
}

TEST_P(Kernels, SaxpyMatchesHost) {
  const uint32_t n = 100'003; // not a multiple of the group size: the guard matters
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i)
    x[i] = dist(rng), y[i] = dist(rng);
  const float a = 1.7f;

  Program program{.kernel_name = "saxpy_glsl",
                  .spirv = compile_glsl("saxpy", kSaxpy),
                  .num_storage_buffers = 2,
                  .push_constant_bytes = 8};
  Device& device = runtime->device(program.needs, program.kernel_name);
  EXPECT_EQ(device.staged(), GetParam() == MemoryMode::Staged || !device.info().unified_memory);
  Buffer bx = device.create_buffer(n * 4, "x"), by = device.create_buffer(n * 4, "y");
  bx.upload(x);
  by.upload(y);
  struct {
    float a;
    uint32_t n;
  } push{a, n};
  Pipeline& pipeline = device.pipeline(1, program);
  LaunchTiming t = device.dispatch(pipeline, {&bx, &by}, push_bytes(push), {groups_for(n, 64)});
  EXPECT_GT(t.wall_ns, 0u);
  std::vector<float> got = by.download_as<float>();
  for (uint32_t i = 0; i < n; ++i) {
    float want = a * x[i] + y[i]; // -ffp-contract=off: two roundings, as on the device
    ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want)) << "i=" << i;
  }
}

// Inputs whose a*b+c lies within a few f32 ulps of a binary16 rounding tie: where double
// rounding (f32 then f16) and a fused multiply-add would differ from the two-step reference.
void tie_stressing(uint32_t n, std::vector<float>& a, std::vector<float>& b,
                   std::vector<float>& c) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> exp(-8, 8), nudge(-3, 3), coin(0, 3);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = std::ldexp(mant(rng), exp(rng));
    b[i] = mant(rng);
    if (coin(rng) == 0) { // plain random
      c[i] = std::ldexp(mant(rng), exp(rng)) * (coin(rng) & 1 ? 1.f : -1.f);
      continue;
    }
    // The binary16 tie just above the product, nudged by up to 3 f32 ulps. target - product is
    // exact (Sterbenz), so the device's f32 a*b+c lands on target; at k == 0 it is exactly the
    // tie, and only the rounding error of a*b (invisible after the f32 add) would decide it.
    float product = a[i] * b[i];
    auto low = std::bit_cast<uint16_t>(static_cast<_Float16>(product));
    float lo = static_cast<float>(std::bit_cast<_Float16>(low));
    float hi = static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(low + 1)));
    float target = (lo + hi) / 2;
    for (int k = nudge(rng); k != 0; k += k > 0 ? -1 : 1)
      target = std::nextafter(target, k > 0 ? INFINITY : -INFINITY);
    c[i] = target - product;
  }
}

TEST_P(Kernels, NarrowingStoreF16IsBitExact) {
  const uint32_t n = 1 << 18;
  std::vector<float> a(n), b(n), c(n);
  tie_stressing(n, a, b, c);
  Program program{.kernel_name = "narrow_f16_glsl",
                  .spirv = compile_glsl("narrow_f16", kNarrowF16),
                  .num_storage_buffers = 4,
                  .push_constant_bytes = 4,
                  .needs = {.storage_buffer_16bit_access = true}};
  Device& device = runtime->device(program.needs, program.kernel_name);
  Buffer ba = device.create_buffer(n * 4, "a"), bb = device.create_buffer(n * 4, "b"),
         bc = device.create_buffer(n * 4, "c"), out = device.create_buffer(n * 2, "out16");
  ba.upload(a);
  bb.upload(b);
  bc.upload(c);
  uint32_t count = n;
  device.dispatch(device.pipeline(2, program), {&ba, &bb, &bc, &out}, push_bytes(count),
                  {groups_for(n, 64)});
  std::vector<uint16_t> got = out.download_as<uint16_t>();
  // Other drivers may fuse into the narrowing (RADV does, even with precise); only lavapipe is
  // known not to, so elsewhere allow the one-ulp difference that fusing makes.
  bool exact = runtime->info().driver_name == "llvmpipe";
  uint32_t differ = 0;
  for (uint32_t i = 0; i < n; ++i) {
    float r = a[i] * b[i] + c[i];
    uint16_t want = std::bit_cast<uint16_t>(static_cast<_Float16>(r));
    if (got[i] == want)
      continue;
    ++differ;
    ASSERT_FALSE(exact) << "i=" << i << " a=" << a[i] << " b=" << b[i] << " c=" << c[i] << " got 0x"
                        << std::hex << got[i] << " want 0x" << want;
    ASSERT_LE(std::abs(int(got[i]) - int(want)), 1) << "i=" << i;
  }
  // The inputs must actually stress ties: double rounding vs exact would differ on many.
  uint32_t double_rounding_matters = 0;
  for (uint32_t i = 0; i < n; ++i) {
    double exact_value = double(a[i]) * b[i] + c[i];
    if (static_cast<_Float16>(exact_value) != static_cast<_Float16>(a[i] * b[i] + c[i]))
      ++double_rounding_matters;
  }
  EXPECT_GT(double_rounding_matters, n / 100) << "inputs are not tie-stressing";
  RecordProperty("differences", differ);
}

TEST_P(Kernels, SharedMemoryReductionMatchesTreeOrder) {
  const uint32_t n = 1'000'000, lanes = 256, groups = groups_for(n, lanes);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v)
    x = dist(rng);
  Program program{.kernel_name = "reduce_glsl",
                  .spirv = compile_glsl("reduce", kReduce),
                  .num_storage_buffers = 2,
                  .push_constant_bytes = 4};
  Device& device = runtime->device(program.needs);
  Buffer in = device.create_buffer(n * 4, "v"), out = device.create_buffer(groups * 4, "sums");
  in.upload(v);
  device.dispatch(device.pipeline(3, program), {&in, &out}, push_bytes(n), {groups});
  std::vector<float> got = out.download_as<float>();
  for (uint32_t g = 0; g < groups; ++g) {
    float partial[256];
    for (uint32_t l = 0; l < lanes; ++l)
      partial[l] = g * lanes + l < n ? v[g * lanes + l] : 0.0f;
    for (uint32_t s = lanes / 2; s > 0; s >>= 1)
      for (uint32_t l = 0; l < s; ++l)
        partial[l] += partial[l + s];
    ASSERT_EQ(std::bit_cast<uint32_t>(got[g]), std::bit_cast<uint32_t>(partial[0])) << "g=" << g;
  }
}

INSTANTIATE_TEST_SUITE_P(Memory, Kernels, ::testing::Values(MemoryMode::Auto, MemoryMode::Staged),
                         [](const auto& info) {
                           return info.param == MemoryMode::Auto ? "Auto" : "Staged";
                         });

} // namespace
} // namespace halfway::vk::testing
