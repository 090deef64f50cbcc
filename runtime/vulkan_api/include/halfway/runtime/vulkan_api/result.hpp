#pragma once
// Turning a failed VkResult into a halfway::Error.
//
// Every error names the Vulkan call that failed and, where there is one, the kernel (in the
// ErrorContext) and the device. Device loss and out-of-memory get their own wording because
// they are what users hit on real GPUs: a lost device cannot run anything more, and memory
// errors usually mean a buffer too big for the card.

#include "halfway/support/error.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vulkan/vulkan_core.h>

namespace halfway::vk {

// An ErrorContext naming only the kernel: nearly every runtime error has exactly that.
inline ErrorContext kernel_context(std::string kernel) {
  ErrorContext context;
  context.kernel = std::move(kernel);
  return context;
}

// "VK_ERROR_DEVICE_LOST"; "VkResult(-123)" for codes this table does not know.
std::string result_name(VkResult result);

// The Error a failed `call` becomes: Device for loss, memory, timeouts and anything unexpected;
// Unsupported for missing features, extensions, layers and formats.
Error result_error(VkResult result, std::string_view call, const ErrorContext& context,
                   std::string_view device = {});

inline void check(VkResult result, std::string_view call, const ErrorContext& context = {},
                  std::string_view device = {}) {
  if (result != VK_SUCCESS)
    throw result_error(result, call, context, device);
}

} // namespace halfway::vk
