#include "halfway/runtime/vulkan_api/selection.hpp"

#include "halfway/support/error.hpp"
#include "loader.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace halfway::vk {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool is_index(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string listing(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const auto& d : devices)
    out += "\n  " + summary(d);
  return out;
}

// The best usable device among `candidates` (positions into `devices`), or SIZE_MAX.
std::size_t best(const std::vector<DeviceInfo>& devices,
                 const std::vector<std::size_t>& candidates) {
  std::size_t chosen = SIZE_MAX;
  for (std::size_t i : candidates) {
    if (!devices[i].usable())
      continue;
    if (chosen == SIZE_MAX || type_rank(devices[i].type) < type_rank(devices[chosen].type))
      chosen = i;
  }
  return chosen;
}

} // namespace

int type_rank(DeviceType type) {
  return static_cast<int>(type);
}

std::size_t select_device(const std::vector<DeviceInfo>& devices, const std::string& selector) {
  if (devices.empty())
    throw detail::no_device_error("the loader found no physical device");
  std::vector<std::size_t> candidates;
  if (selector.empty()) {
    for (std::size_t i = 0; i < devices.size(); ++i)
      candidates.push_back(i);
    std::size_t chosen = best(devices, candidates);
    if (chosen == SIZE_MAX)
      throw Error(ErrorKind::Device, "no usable Vulkan device (halfway needs Vulkan 1.2 with a "
                                     "compute queue); found:" +
                                         listing(devices));
    return chosen;
  }
  if (is_index(selector)) {
    unsigned long long index = std::strtoull(selector.c_str(), nullptr, 10);
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (devices[i].index == index)
        candidates.push_back(i);
  } else {
    std::string needle = lower(selector);
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (lower(devices[i].name).find(needle) != std::string::npos)
        candidates.push_back(i);
  }
  if (candidates.empty())
    throw Error(ErrorKind::Usage,
                "no Vulkan device matches '" + selector + "' (" + kDeviceEnv +
                    " or --device takes an index or a name substring); found:" + listing(devices));
  std::size_t chosen = best(devices, candidates);
  if (chosen == SIZE_MAX)
    throw Error(ErrorKind::Usage, "the Vulkan device matching '" + selector +
                                      "' cannot run kernels:" + listing(devices));
  return chosen;
}

std::string effective_selector(const std::string& explicit_selector) {
  if (!explicit_selector.empty())
    return explicit_selector;
  const char* env = std::getenv(kDeviceEnv);
  return env ? std::string(env) : std::string();
}

} // namespace halfway::vk
