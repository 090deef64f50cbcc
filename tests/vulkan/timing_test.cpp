// Measurements, recorded as test properties (and printed): pipeline creation, the first dispatch
// (which holds lavapipe's lazy LLVM compile), and 16M-element dispatches. They assert only
// correctness and that timestamps are there; the numbers go to the report.

#include "glsl.hpp"
#include "shaders.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <random>

namespace halfway::vk::testing {
namespace {

using Timing = VulkanTest;

double ms(uint64_t ns) {
  return ns / 1e6;
}

TEST_F(Timing, SixteenMillionElementNarrowingStore) {
  const uint32_t n = 1u << 24, lanes = 64;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  std::vector<float> a(n), b(n), c(n);
  for (uint32_t i = 0; i < n; ++i)
    a[i] = dist(rng), b[i] = dist(rng), c[i] = dist(rng);

  // The 2D-folding version of the f16 store: 262,144 groups need a 2D grid on lavapipe.
  std::string source = kNarrowF16;
  source.replace(source.find("  uint i = gl_GlobalInvocationID.x;"),
                 std::string("  uint i = gl_GlobalInvocationID.x;").size(),
                 "  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + "
                 "gl_LocalInvocationID.x;");
  Program program{.kernel_name = "narrow_f16_2d",
                  .spirv = compile_glsl("narrow_f16_2d", source),
                  .num_storage_buffers = 4,
                  .push_constant_bytes = 4,
                  .needs = {.storage_buffer_16bit_access = true}};
  Device& device = runtime->device(program.needs, program.kernel_name);
  Buffer ba = device.create_buffer(n * 4ull, "a"), bb = device.create_buffer(n * 4ull, "b"),
         bc = device.create_buffer(n * 4ull, "c"), out = device.create_buffer(n * 2ull, "out16");
  ba.upload(a);
  bb.upload(b);
  bc.upload(c);
  Pipeline& pipeline = device.pipeline(100, program);
  GroupGrid grid = plan_groups(n / lanes, device.info().limits.max_compute_work_group_count);

  std::vector<uint64_t> wall, gpu;
  for (int run = 0; run < 7; ++run) {
    LaunchTiming t = device.dispatch(pipeline, {&ba, &bb, &bc, &out}, push_bytes(n), grid);
    wall.push_back(t.wall_ns);
    ASSERT_TRUE(t.device_ns.has_value());
    gpu.push_back(*t.device_ns);
  }
  std::vector<uint16_t> got = out.download_as<uint16_t>();
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], std::bit_cast<uint16_t>(static_cast<_Float16>(a[i] * b[i] + c[i])));

  std::sort(wall.begin() + 1, wall.end());
  std::sort(gpu.begin() + 1, gpu.end());
  std::printf("[timing] pipeline creation %.3f ms; first dispatch (lazy compile) %.1f ms wall\n"
              "[timing] 16M f16 store: median %.1f ms device, %.1f ms wall; min %.1f ms device\n",
              ms(pipeline.creation_ns()), ms(pipeline.first_dispatch_wall_ns()), ms(gpu[4]),
              ms(wall[4]), ms(gpu[1]));
  RecordProperty("pipeline_creation_us", static_cast<int>(pipeline.creation_ns() / 1000));
  RecordProperty("first_dispatch_us", static_cast<int>(pipeline.first_dispatch_wall_ns() / 1000));
  RecordProperty("median_device_us", static_cast<int>(gpu[4] / 1000));
  RecordProperty("median_wall_us", static_cast<int>(wall[4] / 1000));
}

TEST_F(Timing, SmallDispatchOverhead) {
  Program program{.kernel_name = "saxpy_glsl",
                  .spirv = compile_glsl("saxpy", kSaxpy),
                  .num_storage_buffers = 2,
                  .push_constant_bytes = 8};
  Device& device = runtime->device(program.needs);
  const uint32_t n = 4096;
  Buffer x = device.create_buffer(n * 4, "x"), y = device.create_buffer(n * 4, "y");
  x.upload(std::vector<float>(n, 1.0f));
  y.upload(std::vector<float>(n, 2.0f));
  struct {
    float a;
    uint32_t n;
  } push{0.5f, n};
  Pipeline& pipeline = device.pipeline(101, program);
  std::vector<uint64_t> wall, gpu;
  for (int run = 0; run < 21; ++run) {
    LaunchTiming t = device.dispatch(pipeline, {&x, &y}, push_bytes(push), {n / 64});
    wall.push_back(t.wall_ns);
    gpu.push_back(t.device_ns.value_or(0));
  }
  std::sort(wall.begin() + 1, wall.end());
  std::sort(gpu.begin() + 1, gpu.end());
  std::printf(
      "[timing] saxpy pipeline creation %.3f ms, first dispatch (lazy compile) %.2f ms wall\n"
      "[timing] 4096-element saxpy: median %.3f ms device, %.3f ms wall\n",
      ms(pipeline.creation_ns()), ms(pipeline.first_dispatch_wall_ns()), ms(gpu[10]), ms(wall[10]));
  EXPECT_EQ(y.download_as<float>()[0], 2.0f + 21 * 0.5f);
}

} // namespace
} // namespace halfway::vk::testing
