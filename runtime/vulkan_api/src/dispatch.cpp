#include "halfway/runtime/vulkan_api/dispatch.hpp"

#include "halfway/runtime/vulkan_api/result.hpp"
#include "halfway/support/error.hpp"

namespace halfway::vk {

GroupGrid plan_groups(uint64_t total, const std::array<uint32_t, 3>& max,
                      const std::string& kernel) {
  if (total <= max[0])
    return {static_cast<uint32_t>(total), 1, 1};
  uint64_t rows = (total + max[0] - 1) / max[0];
  if (rows > max[1])
    throw Error(ErrorKind::Unsupported,
                std::to_string(total) + " workgroups exceed the device's 2D dispatch limit of " +
                    std::to_string(uint64_t{max[0]} * max[1]),
                kernel_context(kernel));
  uint64_t columns = (total + rows - 1) / rows;
  return {static_cast<uint32_t>(columns), static_cast<uint32_t>(rows), 1};
}

} // namespace halfway::vk
