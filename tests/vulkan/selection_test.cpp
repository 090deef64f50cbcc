// Device selection: the preference order and selectors on fake device lists, and by name, index
// and HALFWAY_VK_DEVICE on the real one.

#include "glsl.hpp"
#include "halfway/runtime/vulkan_api/selection.hpp"

#include <cstdlib>

namespace halfway::vk::testing {
namespace {

DeviceInfo fake(uint32_t index, const std::string& name, DeviceType type) {
  DeviceInfo info;
  info.index = index;
  info.name = name;
  info.type = type;
  return info;
}

std::vector<DeviceInfo> machine() {
  return {fake(0, "llvmpipe (LLVM 15.0.6, 256 bits)", DeviceType::Cpu),
          fake(1, "Intel(R) UHD Graphics 770", DeviceType::Integrated),
          fake(2, "NVIDIA H200", DeviceType::Discrete),
          fake(3, "Virtio-GPU Venus", DeviceType::Virtual)};
}

TEST(Selection, PrefersDiscreteThenIntegratedThenVirtualThenCpu) {
  auto devices = machine();
  EXPECT_EQ(select_device(devices, ""), 2u);
  devices[2].unusable_reason = "Vulkan 1.1.0 < 1.2";
  EXPECT_EQ(select_device(devices, ""), 1u);
  devices.erase(devices.begin() + 1);
  EXPECT_EQ(devices[select_device(devices, "")].type, DeviceType::Virtual);
  devices.pop_back();
  EXPECT_EQ(devices[select_device(devices, "")].type, DeviceType::Cpu);
}

TEST(Selection, ByIndexOrCaseInsensitiveName) {
  auto devices = machine();
  EXPECT_EQ(select_device(devices, "0"), 0u);
  EXPECT_EQ(select_device(devices, "3"), 3u);
  EXPECT_EQ(select_device(devices, "LLVMpipe"), 0u);
  EXPECT_EQ(select_device(devices, "nvidia"), 2u);
  // A substring several devices share picks the preferred one among them.
  EXPECT_EQ(select_device(devices, "i"), 2u);
}

TEST(Selection, NoMatchListsTheDevices) {
  try {
    select_device(machine(), "radeon");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(e.message().find("NVIDIA H200"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_device(machine(), "9"), Error);
  auto devices = machine();
  devices[2].unusable_reason = "no compute queue";
  EXPECT_THROW(select_device(devices, "nvidia"), Error);
}

TEST(Selection, EmptyListIsTheNoDeviceError) {
  try {
    select_device({}, "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Device);
    EXPECT_NE(e.message().find("no Vulkan device"), std::string::npos);
    EXPECT_NE(e.message().find("mesa-vulkan-drivers"), std::string::npos);
  }
}

// CI's device must be there; a missing lavapipe is a failure, not a skip.
TEST(Selection, LavapipeIsPresent) {
  RuntimeOptions options;
  options.instance.validation = true;
  options.device = "llvmpipe";
  Runtime runtime(options);
  EXPECT_EQ(runtime.info().type, DeviceType::Cpu);
  EXPECT_EQ(runtime.info().driver_name, "llvmpipe");
  EXPECT_TRUE(runtime.info().unified_memory);
  EXPECT_GE(runtime.info().limits.max_compute_work_group_count[0], 65535u);
  EXPECT_GT(runtime.info().limits.timestamp_valid_bits, 0u);
  EXPECT_NE(describe(runtime.info()).find("storageBuffer16BitAccess"), std::string::npos);
  expect_no_messages(runtime.validation_messages());
}

TEST(Selection, RealDeviceByNameAndIndex) {
  RuntimeOptions options;
  options.instance.validation = true;
  options.device = "llvmpipe";
  Runtime by_name(options);
  options.device = std::to_string(by_name.info().index);
  Runtime by_index(options);
  EXPECT_EQ(by_index.info().name, by_name.info().name);
  options.device = "no such device anywhere";
  EXPECT_THROW(Runtime{options}, Error);
}

TEST(Selection, EnvironmentVariablePicksTheDevice) {
  const char* saved = std::getenv(kDeviceEnv);
  std::string restore = saved ? saved : "";
  setenv(kDeviceEnv, "LLVMPIPE", 1);
  RuntimeOptions options;
  options.instance.validation = true;
  Runtime from_env(options);
  EXPECT_EQ(from_env.info().driver_name, "llvmpipe");
  setenv(kDeviceEnv, "no such device anywhere", 1);
  EXPECT_THROW(Runtime{options}, Error);
  options.device = "llvmpipe"; // an explicit selector wins over the environment
  EXPECT_NO_THROW(Runtime{options});
  if (saved)
    setenv(kDeviceEnv, restore.c_str(), 1);
  else
    unsetenv(kDeviceEnv);
}

} // namespace
} // namespace halfway::vk::testing
