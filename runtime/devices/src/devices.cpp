#include "halfway/runtime/factories.hpp"
#include "halfway/runtime/interp_device.hpp"
#include "halfway/support/error.hpp"

namespace halfway::rt {

std::unique_ptr<Device> make_interpreter_device(policy::Registry* registry) {
  return std::make_unique<InterpreterDevice>(registry);
}

std::vector<std::string> device_names() {
  std::vector<std::string> names{"interp"};
#ifdef HALFWAY_HAVE_CPU
  names.push_back("cpu");
#endif
#ifdef HALFWAY_HAVE_VULKAN
  names.push_back("vulkan");
#endif
  return names;
}

std::unique_ptr<Device> make_device(const std::string& name, policy::Registry* registry) {
  if (name == "interp")
    return make_interpreter_device(registry);
#ifdef HALFWAY_HAVE_CPU
  if (name == "cpu")
    return make_cpu_device(registry);
#endif
#ifdef HALFWAY_HAVE_VULKAN
  if (name == "vulkan")
    return make_vulkan_device(registry, "");
  if (name.rfind("vulkan:", 0) == 0)
    return make_vulkan_device(registry, name.substr(7));
#endif
  std::string known;
  for (const auto& n : device_names())
    known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::Usage, "unknown device '" + name + "'; this build has " + known +
                                    " (vulkan:NAME or vulkan:INDEX picks a Vulkan device)");
}

} // namespace halfway::rt
