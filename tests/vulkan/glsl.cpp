#include "glsl.hpp"

#include "halfway/runtime/vulkan_api/selection.hpp"

#include <cstdlib>
#include <shaderc/shaderc.hpp>
#include <stdexcept>

namespace halfway::vk::testing {

std::vector<uint32_t> compile_glsl(const std::string& name, const std::string& source) {
  shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  options.SetOptimizationLevel(shaderc_optimization_level_performance);
  auto result = compiler.CompileGlslToSpv(source, shaderc_compute_shader, name.c_str(), options);
  if (result.GetCompilationStatus() != shaderc_compilation_status_success)
    throw std::runtime_error("shaderc: " + result.GetErrorMessage());
  return {result.cbegin(), result.cend()};
}

RuntimeOptions test_options() {
  RuntimeOptions options;
  options.instance.validation = true;
  const char* env = std::getenv(kDeviceEnv);
  options.device = env && *env ? env : "llvmpipe";
  return options;
}

void VulkanTest::SetUp() {
  runtime = std::make_unique<Runtime>(test_options());
}

void VulkanTest::TearDown() {
  if (runtime)
    expect_no_messages(runtime->validation_messages());
}

void expect_no_messages(const std::vector<ValidationMessage>& messages) {
  for (const auto& m : messages)
    ADD_FAILURE() << "validation: " << format(m);
}

} // namespace halfway::vk::testing
