#include "loader.hpp"

#include <cstdlib>
#include <mutex>

namespace halfway::vk::detail {

namespace {
std::mutex& volk_mutex() {
  static std::mutex mutex;
  return mutex;
}
} // namespace

void ensure_loader() {
  static const VkResult result = [] {
    std::lock_guard lock(volk_mutex());
    return volkInitialize();
  }();
  if (result != VK_SUCCESS)
    throw Error(ErrorKind::Device,
                "no Vulkan loader: libvulkan.so.1 could not be loaded; install the Debian "
                "package libvulkan1 (and mesa-vulkan-drivers for the lavapipe CPU device)");
}

void load_instance_functions(VkInstance instance) {
  std::lock_guard lock(volk_mutex());
  volkLoadInstanceOnly(instance);
}

Error no_device_error(const std::string& what) {
  std::string message = "no Vulkan device: " + what +
                        "; install the Debian package mesa-vulkan-drivers for the lavapipe CPU "
                        "device, or the driver for your GPU";
  for (const char* name : {"VK_ICD_FILENAMES", "VK_DRIVER_FILES", "VK_ADD_DRIVER_FILES"}) {
    if (const char* value = std::getenv(name); value && *value)
      message += std::string("; ") + name + "=" + value + " is set and limits the drivers searched";
  }
  return Error(ErrorKind::Device, std::move(message));
}

} // namespace halfway::vk::detail
