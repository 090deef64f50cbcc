#include "halfway/runtime/vulkan_api/result.hpp"

#include <string>

namespace halfway::vk {

std::string result_name(VkResult result) {
  switch (result) {
#define HALFWAY_RESULT(name)                                                                       \
  case name:                                                                                       \
    return #name;
    HALFWAY_RESULT(VK_SUCCESS)
    HALFWAY_RESULT(VK_NOT_READY)
    HALFWAY_RESULT(VK_TIMEOUT)
    HALFWAY_RESULT(VK_EVENT_SET)
    HALFWAY_RESULT(VK_EVENT_RESET)
    HALFWAY_RESULT(VK_INCOMPLETE)
    HALFWAY_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    HALFWAY_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    HALFWAY_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    HALFWAY_RESULT(VK_ERROR_DEVICE_LOST)
    HALFWAY_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    HALFWAY_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    HALFWAY_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    HALFWAY_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    HALFWAY_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    HALFWAY_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    HALFWAY_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    HALFWAY_RESULT(VK_ERROR_FRAGMENTED_POOL)
    HALFWAY_RESULT(VK_ERROR_UNKNOWN)
    HALFWAY_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    HALFWAY_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    HALFWAY_RESULT(VK_ERROR_FRAGMENTATION)
    HALFWAY_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    HALFWAY_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
    HALFWAY_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef HALFWAY_RESULT
  default:
    return "VkResult(" + std::to_string(static_cast<int>(result)) + ")";
  }
}

Error result_error(VkResult result, std::string_view call, const ErrorContext& context,
                   std::string_view device) {
  std::string on = device.empty() ? "" : " on " + std::string(device);
  std::string code = " (" + result_name(result) + ")";
  std::string in(call);
  switch (result) {
  case VK_ERROR_DEVICE_LOST:
    return Error(ErrorKind::Device,
                 "device lost in " + in + on + code + "; the device runs nothing more", context);
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    return Error(ErrorKind::Device, "out of device memory in " + in + on + code, context);
  case VK_ERROR_OUT_OF_HOST_MEMORY:
    return Error(ErrorKind::Device, "out of host memory in " + in + on + code, context);
  case VK_ERROR_FEATURE_NOT_PRESENT:
  case VK_ERROR_EXTENSION_NOT_PRESENT:
  case VK_ERROR_LAYER_NOT_PRESENT:
  case VK_ERROR_FORMAT_NOT_SUPPORTED:
    return Error(ErrorKind::Unsupported, in + " failed" + on + code, context);
  default:
    return Error(ErrorKind::Device, in + " failed" + on + code, context);
  }
}

} // namespace halfway::vk
