// The dispatch path: 2D grids beyond maxComputeWorkGroupCount, the pipeline cache, and the
// errors a caller gets for a malformed launch.

#include "glsl.hpp"
#include "shaders.hpp"

#include <algorithm>

namespace halfway::vk::testing {
namespace {

using Dispatch = VulkanTest;

Program iota_program() {
  return Program{.kernel_name = "iota2d_glsl",
                 .spirv = compile_glsl("iota2d", kIota2D),
                 .num_storage_buffers = 1,
                 .push_constant_bytes = 8};
}

TEST(PlanGroups, FitsInOneDimension) {
  std::array<uint32_t, 3> max{65535, 65535, 65535};
  GroupGrid g = plan_groups(65535, max);
  EXPECT_EQ(g.x, 65535u);
  EXPECT_EQ(g.y, 1u);
  EXPECT_EQ(plan_groups(0, max).count(), 0u);
}

TEST(PlanGroups, FoldsIntoTwoDimensionsWithLittleWaste) {
  std::array<uint32_t, 3> max{65535, 65535, 65535};
  for (uint64_t total : {65536ull, 262144ull, 262145ull, 1'000'003ull, 65535ull * 65535ull}) {
    GroupGrid g = plan_groups(total, max);
    EXPECT_LE(g.x, max[0]);
    EXPECT_LE(g.y, max[1]);
    EXPECT_EQ(g.z, 1u);
    EXPECT_GE(g.count(), total);
    EXPECT_LT(g.count() - total, g.y) << total;
  }
}

TEST(PlanGroups, RefusesBeyondTwoDimensions) {
  std::array<uint32_t, 3> max{4, 4, 4};
  try {
    plan_groups(17, max, "huge");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.context().kernel, "huge");
  }
}

TEST_F(Dispatch, TwoDimensionalGridCoversEveryElement) {
  const uint32_t n = (1u << 24) + 3; // 262,145 groups of 64: more than 65,535 in x
  const uint64_t total = (n + 63) / 64;
  Program program = iota_program();
  Device& device = runtime->device(program.needs);
  ASSERT_GT(total, device.info().limits.max_compute_work_group_count[0]);
  GroupGrid grid = plan_groups(total, device.info().limits.max_compute_work_group_count);
  EXPECT_GT(grid.y, 1u);
  Buffer out = device.create_buffer(uint64_t{n} * 4, "o");
  struct {
    uint32_t total_groups, n;
  } push{static_cast<uint32_t>(total), n};
  device.dispatch(device.pipeline(10, program), {&out}, push_bytes(push), grid);
  std::vector<uint32_t> got = out.download_as<uint32_t>();
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], i * 3u + 1u) << "i=" << i;
}

TEST_F(Dispatch, UnplannedLongGridIsAClearError) {
  Program program = iota_program();
  Device& device = runtime->device(program.needs);
  Buffer out = device.create_buffer(64, "o");
  uint32_t push[2] = {0, 0};
  try {
    device.dispatch(device.pipeline(10, program), {&out}, push_bytes(push), {70000});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(e.message().find("maxComputeWorkGroupCount"), std::string::npos) << e.what();
    EXPECT_EQ(e.context().kernel, "iota2d_glsl");
  }
}

TEST_F(Dispatch, PipelinesAreCachedByKey) {
  Program program = iota_program();
  Device& device = runtime->device(program.needs);
  Pipeline& first = device.pipeline(42, program);
  Pipeline& again = device.pipeline(42, program);
  EXPECT_EQ(&first, &again);
  EXPECT_EQ(device.pipeline_count(), 1u);
  EXPECT_EQ(device.find_pipeline(42), &first);
  EXPECT_EQ(device.find_pipeline(43), nullptr);
  EXPECT_GT(first.creation_ns(), 0u);

  Program other{.kernel_name = "saxpy_glsl",
                .spirv = compile_glsl("saxpy", kSaxpy),
                .num_storage_buffers = 2,
                .push_constant_bytes = 8};
  try {
    device.pipeline(42, other);
    FAIL() << "a key reused for other SPIR-V must not return the cached pipeline";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
  }
}

TEST_F(Dispatch, DevicesAreCachedPerFeatureSet) {
  Device& plain = runtime->device({});
  Device& again = runtime->device({});
  Device& f16 = runtime->device({.storage_buffer_16bit_access = true});
  EXPECT_EQ(&plain, &again);
  EXPECT_NE(&plain, &f16);
  EXPECT_EQ(runtime->device_count(), 2u);
  EXPECT_EQ(f16.features(), Features{.storage_buffer_16bit_access = true});
}

TEST_F(Dispatch, MalformedLaunchesNameTheKernel) {
  Program program = iota_program();
  Device& device = runtime->device(program.needs);
  Pipeline& pipeline = device.pipeline(10, program);
  Buffer out = device.create_buffer(64, "o");
  uint32_t push[2] = {1, 16};
  auto expect_usage = [](auto&& launch, const char* fragment) {
    try {
      launch();
      ADD_FAILURE() << "no error for " << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_usage([&] { device.dispatch(pipeline, {}, push_bytes(push), {1}); }, "binds 0 buffers");
  expect_usage([&] { device.dispatch(pipeline, {&out}, push_bytes(push[0]), {1}); }, "pushes 4");
  expect_usage([&] { out.upload(std::vector<uint32_t>(17)); }, "runs past");
  Device& other = runtime->device({.shader_int16 = true});
  Buffer foreign = other.create_buffer(64, "foreign");
  expect_usage([&] { device.dispatch(pipeline, {&foreign}, push_bytes(push), {1}); },
               "another Device");
  expect_usage(
      [&] {
        device.pipeline(11, Program{.kernel_name = "junk", .spirv = {1, 2, 3}});
      },
      "not SPIR-V");
}

TEST_F(Dispatch, TooNewSpirvIsRefusedBeforeTheDriver) {
  Program program = iota_program();
  program.spirv[1] = 0x00010700; // SPIR-V 1.7: no Vulkan consumes it yet
  Device& device = runtime->device(program.needs);
  try {
    device.pipeline(12, program);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(e.message().find("SPIR-V 1.7"), std::string::npos) << e.what();
  }
}

TEST_F(Dispatch, ProgramNeedingMoreThanItsDeviceIsRefused) {
  Program program{.kernel_name = "narrow_f16_glsl",
                  .spirv = compile_glsl("narrow_f16", kNarrowF16),
                  .num_storage_buffers = 4,
                  .push_constant_bytes = 4,
                  .needs = {.storage_buffer_16bit_access = true}};
  Device& plain = runtime->device({});
  try {
    plain.pipeline(5, program);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("storageBuffer16BitAccess"), std::string::npos);
  }
}

// The reason tests run with validation: lavapipe happily runs a 16-bit storage shader on a
// device without the feature, and only the layer notices. A kernel that under-declares its needs
// must produce a message, and the fixture must see it.
TEST_F(Dispatch, ValidationCatchesAnUndeclaredFeature) {
  Program lying{.kernel_name = "narrow_f16_undeclared",
                .spirv = compile_glsl("narrow_f16", kNarrowF16),
                .num_storage_buffers = 4,
                .push_constant_bytes = 4}; // needs nothing, it claims
  Device& device = runtime->device(lying.needs);
  try {
    device.pipeline(6, lying);
  } catch (const Error&) {
    // A driver may refuse the module; lavapipe does not. Either way the layer must speak.
  }
  auto messages = runtime->validation_messages();
  bool found = std::any_of(messages.begin(), messages.end(), [](const ValidationMessage& m) {
    return m.text.find("storageBuffer16BitAccess") != std::string::npos ||
           m.id.find("storageBuffer16BitAccess") != std::string::npos;
  });
  EXPECT_TRUE(found) << "the validation layer did not report the missing feature";
  runtime->instance().clear_validation_messages();
}

} // namespace
} // namespace halfway::vk::testing
