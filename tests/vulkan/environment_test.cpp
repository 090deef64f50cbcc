// Environment-driven behaviour, checked in a child process (vulkan_probe) with a doctored
// environment: the Vulkan loader reads VK_ICD_FILENAMES, VK_DRIVER_FILES and VK_LAYER_PATH when
// it scans for drivers and layers, and volk loads the loader once per process, so a child is the
// only way to guarantee the probe's loader has never seen the parent's environment.

#include "glsl.hpp"
#include "halfway/runtime/vulkan_api/environment.hpp"
#include "halfway/runtime/vulkan_api/selection.hpp"

#include <cstdlib>
#include <map>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace halfway::vk::testing {
namespace {

struct ProbeResult {
  int status = -1;
  std::string output;
};

// Runs vulkan_probe with this process's environment plus `overrides` (an empty value unsets).
ProbeResult run_probe(const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos)
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [key, value] : overrides) {
    if (value.empty())
      env.erase(key);
    else
      env[key] = value;
  }
  std::vector<std::string> entries;
  for (const auto& [key, value] : env)
    entries.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : entries)
    envp.push_back(entry.data());
  envp.push_back(nullptr);

  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::string path = HALFWAY_VK_PROBE;
  char* argv[] = {path.data(), nullptr};
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  ProbeResult result;
  if (spawned != 0) {
    close(pipe_fds[0]);
    result.output = "posix_spawn failed for " + path;
    return result;
  }
  char chunk[4096];
  for (ssize_t got; (got = read(pipe_fds[0], chunk, sizeof chunk)) > 0;)
    result.output.append(chunk, static_cast<std::size_t>(got));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

const std::string kNowhere = "/nonexistent/halfway/icd.json";

TEST(Environment, ProbeFindsLavapipe) {
  ProbeResult r = run_probe({{"HALFWAY_VK_VALIDATION", "1"}, {"HALFWAY_VK_DEVICE", "llvmpipe"}});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("selected: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("llvmpipe"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("validation messages: 0"), std::string::npos) << r.output;
}

TEST(Environment, NoDriverIsAClearError) {
  ProbeResult r = run_probe({{"VK_ICD_FILENAMES", kNowhere}, {"VK_DRIVER_FILES", kNowhere}});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("device error: no Vulkan device"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mesa-vulkan-drivers"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("VK_ICD_FILENAMES=" + kNowhere), std::string::npos) << r.output;
}

TEST(Environment, MissingValidationLayerNamesThePackage) {
  ProbeResult r = run_probe({{"HALFWAY_VK_VALIDATION", "1"},
                             {"VK_LAYER_PATH", "/nonexistent/halfway/layers"},
                             {"VK_ADD_LAYER_PATH", ""},
                             {"VK_INSTANCE_LAYERS", ""}});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("VK_LAYER_KHRONOS_validation"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("vulkan-validationlayers"), std::string::npos) << r.output;
}

TEST(Environment, BadDeviceSelectorFromTheEnvironment) {
  ProbeResult r = run_probe({{"HALFWAY_VK_DEVICE", "no such device anywhere"}});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("no Vulkan device matches 'no such device anywhere'"), std::string::npos)
      << r.output;
}

// In-process, a fresh Instance created after changing VK_ICD_FILENAMES also sees no driver: the
// Debian loader (1.3.239) rescans drivers at every vkCreateInstance. This documents that an
// Instance does not depend on process-global loader state beyond volk's function pointers.
TEST(Environment, FreshInstanceInProcessSeesTheEnvironment) {
  { Instance warm_up(InstanceOptions{.validation = false}); }
  const char* saved_icd = std::getenv("VK_ICD_FILENAMES");
  const char* saved_driver = std::getenv("VK_DRIVER_FILES");
  std::string icd = saved_icd ? saved_icd : "", driver = saved_driver ? saved_driver : "";
  setenv("VK_ICD_FILENAMES", kNowhere.c_str(), 1);
  setenv("VK_DRIVER_FILES", kNowhere.c_str(), 1);
  bool threw = false;
  std::string what;
  try {
    Instance instance(InstanceOptions{.validation = false});
    select_device(instance.devices(), "");
  } catch (const Error& e) {
    threw = true;
    what = e.what();
  }
  saved_icd ? setenv("VK_ICD_FILENAMES", icd.c_str(), 1) : unsetenv("VK_ICD_FILENAMES");
  saved_driver ? setenv("VK_DRIVER_FILES", driver.c_str(), 1) : unsetenv("VK_DRIVER_FILES");
  EXPECT_TRUE(threw);
  EXPECT_NE(what.find("no Vulkan device"), std::string::npos) << what;
  // And afterwards the real device is back.
  Runtime runtime(test_options());
  EXPECT_EQ(runtime.info().driver_name, "llvmpipe");
}

TEST(Environment, ValidationFromTheEnvironment) {
  const char* saved = std::getenv(kValidationEnv);
  std::string restore = saved ? saved : "";
  setenv(kValidationEnv, "1", 1);
  EXPECT_TRUE(validation_requested_by_env());
  Instance on{};
  EXPECT_TRUE(on.validation_enabled());
  setenv(kValidationEnv, "0", 1);
  EXPECT_FALSE(validation_requested_by_env());
  Instance off{};
  EXPECT_FALSE(off.validation_enabled());
  saved ? setenv(kValidationEnv, restore.c_str(), 1) : unsetenv(kValidationEnv);
}

TEST(Environment, MesaShaderCacheSettings) {
  auto get = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string("<unset>");
  };
  std::string disable = get("MESA_SHADER_CACHE_DISABLE"), dir = get("MESA_SHADER_CACHE_DIR");
  configure_mesa_shader_cache(ShaderCache::Disabled);
  EXPECT_EQ(get("MESA_SHADER_CACHE_DISABLE"), "true");
  configure_mesa_shader_cache(ShaderCache::Directory, "/tmp/halfway-mesa-cache");
  EXPECT_EQ(get("MESA_SHADER_CACHE_DISABLE"), "<unset>");
  EXPECT_EQ(get("MESA_SHADER_CACHE_DIR"), "/tmp/halfway-mesa-cache");
  EXPECT_THROW(configure_mesa_shader_cache(ShaderCache::Directory), Error);
  auto restore = [](const char* name, const std::string& value) {
    value == "<unset>" ? unsetenv(name) : setenv(name, value.c_str(), 1);
  };
  restore("MESA_SHADER_CACHE_DISABLE", disable);
  restore("MESA_SHADER_CACHE_DIR", dir);
}

} // namespace
} // namespace halfway::vk::testing
