#include "halfway/runtime/vulkan_api/environment.hpp"

#include "halfway/support/error.hpp"

#include <cstdlib>

namespace halfway::vk {

void configure_mesa_shader_cache(ShaderCache mode, const std::string& directory) {
  switch (mode) {
  case ShaderCache::Inherit:
    return;
  case ShaderCache::Disabled:
    setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
    return;
  case ShaderCache::Directory:
    if (directory.empty())
      throw Error(ErrorKind::Usage, "ShaderCache::Directory needs a directory");
    unsetenv("MESA_SHADER_CACHE_DISABLE");
    setenv("MESA_SHADER_CACHE_DIR", directory.c_str(), 1);
    return;
  }
}

} // namespace halfway::vk
