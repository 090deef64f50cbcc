#pragma once
// Test support: hand-written GLSL compiled with shaderc at test time (a path to the device that is
// independent of halfway's codegen), and a runtime fixture that fails on any validation message.

#include "halfway/runtime/vulkan_api/runtime.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

namespace halfway::vk::testing {

// GLSL 450 compute source to SPIR-V for Vulkan 1.2; throws std::runtime_error with shaderc's
// message on a compile error.
std::vector<uint32_t> compile_glsl(const std::string& name, const std::string& source);

// Validation on; the device is HALFWAY_VK_DEVICE when set, else lavapipe by name, so that a
// machine with a GPU still tests the CI device unless asked otherwise. A missing lavapipe fails
// SetUp loudly: CI installs mesa-vulkan-drivers, and a skipped suite would hide its absence.
RuntimeOptions test_options();

class VulkanTest : public ::testing::Test {
protected:
  void SetUp() override;
  // Fails the test on any recorded validation message, printing them all.
  void TearDown() override;

  std::unique_ptr<Runtime> runtime;
};

// Fails the current test with every message in `messages`.
void expect_no_messages(const std::vector<ValidationMessage>& messages);

} // namespace halfway::vk::testing
