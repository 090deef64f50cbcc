#pragma once
// Private: a zeroed Vulkan struct with its sType set. `T x{sType}` would do the same, but
// -Wextra (with -Werror) rejects every member it leaves out.

#include <volk.h>

namespace halfway::vk::detail {

template <class T> T make(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

} // namespace halfway::vk::detail
