// Features, the missing-feature error, and VkResult errors: mostly pure functions over plain
// data, plus the real refusal on lavapipe.

#include "glsl.hpp"
#include "halfway/runtime/vulkan_api/result.hpp"

namespace halfway::vk::testing {
namespace {

TEST(Features, TableCoversEveryMemberOnce) {
  Features all;
  for (const auto& f : feature_fields()) {
    EXPECT_FALSE(all.*f.member) << f.vulkan_name << " listed twice";
    all.*f.member = true;
  }
  EXPECT_EQ(feature_bits(all), (uint64_t{1} << feature_fields().size()) - 1);
  EXPECT_EQ(describe_features({}), "none");
}

TEST(Features, UnionMissingAndCovers) {
  Features f16{.shader_float16 = true, .storage_buffer_16bit_access = true};
  Features i64{.shader_int64 = true};
  Features both = feature_union(f16, i64);
  EXPECT_TRUE(covers(both, f16));
  EXPECT_TRUE(covers(both, i64));
  EXPECT_FALSE(covers(f16, both));
  EXPECT_EQ(missing_features(f16, both), std::vector<std::string>{"shaderInt64"});
  EXPECT_EQ(describe_features(f16), "shaderFloat16 storageBuffer16BitAccess");
  EXPECT_FALSE(needs_atomic_float_extension(both));
  EXPECT_TRUE(needs_atomic_float_extension({.shader_buffer_float32_atomic_add = true}));
}

DeviceInfo fake_device(const std::string& name, Features features) {
  DeviceInfo info;
  info.name = name;
  info.features = features;
  return info;
}

TEST(RequireFeatures, NamesKernelFeatureAndDevice) {
  DeviceInfo device = fake_device("llvmpipe", {.shader_float16 = true});
  try {
    require_features(device, {.storage_buffer_16bit_access = true}, "linear<f16>");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.message(), "needs storageBuffer16BitAccess; device llvmpipe lacks it");
    EXPECT_EQ(e.context().kernel, "linear<f16>");
    EXPECT_EQ(std::string(e.what()),
              "unsupported: kernel linear<f16>: needs storageBuffer16BitAccess; device llvmpipe "
              "lacks it");
  }
}

TEST(RequireFeatures, ListsSeveralMissing) {
  DeviceInfo device = fake_device("tiny", {});
  try {
    require_features(device, {.shader_float16 = true, .shader_int8 = true, .shader_float64 = true},
                     "k");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "needs shaderFloat16, shaderInt8 and shaderFloat64; device tiny lacks them");
  }
  EXPECT_NO_THROW(require_features(device, {}, "k"));
}

TEST(RequireFeatures, UnusableDeviceRunsNothing) {
  DeviceInfo device = fake_device("old", {});
  device.unusable_reason = "Vulkan 1.1.0 < 1.2";
  EXPECT_THROW(require_features(device, {}, "k"), Error);
}

// Lavapipe has every feature halfway asks for except 64-bit float atomic add: a real refusal.
TEST(RequireFeatures, LavapipeRefusesFloat64AtomicAdd) {
  Runtime runtime(test_options());
  if (runtime.info().features.shader_buffer_float64_atomic_add)
    GTEST_SKIP() << runtime.info().name << " has shaderBufferFloat64AtomicAdd";
  try {
    runtime.device({.shader_buffer_float64_atomic_add = true}, "atomic_sum<f64>");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_EQ(e.message(),
              "needs shaderBufferFloat64AtomicAdd; device " + runtime.info().name + " lacks it");
    EXPECT_EQ(e.context().kernel, "atomic_sum<f64>");
  }
  EXPECT_EQ(runtime.device_count(), 0u);
  expect_no_messages(runtime.validation_messages());
}

// Enabling every feature the device has, including the extension-backed ones, is accepted by
// the driver and by the validation layer.
TEST(RequireFeatures, EverythingTheDeviceHasCanBeEnabled) {
  Runtime runtime(test_options());
  Device& device = runtime.device(runtime.info().features);
  EXPECT_EQ(device.features(), runtime.info().features);
  expect_no_messages(runtime.validation_messages());
}

TEST(ResultError, DeviceLossAndMemoryNameTheKernelAndCall) {
  ErrorContext context = kernel_context("gemv<f16>");
  Error lost = result_error(VK_ERROR_DEVICE_LOST, "vkQueueSubmit", context, "Some GPU");
  EXPECT_EQ(lost.kind(), ErrorKind::Device);
  EXPECT_EQ(lost.context().kernel, "gemv<f16>");
  EXPECT_NE(lost.message().find("device lost in vkQueueSubmit on Some GPU"), std::string::npos);
  Error oom = result_error(VK_ERROR_OUT_OF_DEVICE_MEMORY, "vkAllocateMemory", context);
  EXPECT_EQ(oom.kind(), ErrorKind::Device);
  EXPECT_NE(oom.message().find("out of device memory in vkAllocateMemory"), std::string::npos);
  Error other = result_error(VK_ERROR_INITIALIZATION_FAILED, "vkCreateDevice", {});
  EXPECT_NE(other.message().find("vkCreateDevice failed"), std::string::npos);
  EXPECT_NE(other.message().find("VK_ERROR_INITIALIZATION_FAILED"), std::string::npos);
  EXPECT_EQ(result_error(VK_ERROR_FEATURE_NOT_PRESENT, "vkCreateDevice", {}).kind(),
            ErrorKind::Unsupported);
  EXPECT_EQ(result_name(static_cast<VkResult>(-12345)), "VkResult(-12345)");
  EXPECT_NO_THROW(check(VK_SUCCESS, "vkAnything"));
}

} // namespace
} // namespace halfway::vk::testing
