#include "halfway/runtime/vulkan_api/instance.hpp"

#include "device_query.hpp"
#include "halfway/runtime/vulkan_api/result.hpp"
#include "instance_state.hpp"
#include "loader.hpp"
#include "structs.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace halfway::vk {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool has_layer(const char* name) {
  uint32_t count = 0;
  check(vkEnumerateInstanceLayerProperties(&count, nullptr), "vkEnumerateInstanceLayerProperties");
  std::vector<VkLayerProperties> layers(count);
  check(vkEnumerateInstanceLayerProperties(&count, layers.data()),
        "vkEnumerateInstanceLayerProperties");
  return std::any_of(layers.begin(), layers.begin() + count, [&](const VkLayerProperties& l) {
    return std::strcmp(l.layerName, name) == 0;
  });
}

bool has_instance_extension(const char* layer, const char* name) {
  uint32_t count = 0;
  VkResult r = vkEnumerateInstanceExtensionProperties(layer, &count, nullptr);
  if (r != VK_SUCCESS)
    return false;
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateInstanceExtensionProperties(layer, &count, extensions.data());
  return std::any_of(
      extensions.begin(), extensions.begin() + count,
      [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

std::string message_type(VkDebugUtilsMessageTypeFlagsEXT types) {
  if (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)
    return "validation";
  if (types & VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)
    return "performance";
  return "general";
}

ValidationMessage::Severity message_severity(VkDebugUtilsMessageSeverityFlagBitsEXT severity) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
    return ValidationMessage::Severity::Error;
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
    return ValidationMessage::Severity::Warning;
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT)
    return ValidationMessage::Severity::Info;
  return ValidationMessage::Severity::Verbose;
}

VKAPI_ATTR VkBool32 VKAPI_CALL record_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT types,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data,
                                              void* user) {
  auto* state = static_cast<detail::InstanceState*>(user);
  ValidationMessage message;
  message.severity = message_severity(severity);
  message.type = message_type(types);
  if (data && data->pMessageIdName)
    message.id = data->pMessageIdName;
  if (data && data->pMessage)
    message.text = data->pMessage;
  std::lock_guard lock(state->messages_mutex);
  state->messages.push_back(std::move(message));
  return VK_FALSE; // never abort the call: the test decides what a message means
}

uint32_t choose_api_version() {
  uint32_t loader = volkGetInstanceVersion();
  if (VK_API_VERSION_MAJOR(loader) == 1 && VK_API_VERSION_MINOR(loader) < 2)
    throw Error(ErrorKind::Unsupported, "the Vulkan loader supports only Vulkan " +
                                            api_version_string(loader) +
                                            "; halfway needs 1.2 (install a newer libvulkan1)");
  return VK_API_VERSION_MAJOR(loader) == 1 && VK_API_VERSION_MINOR(loader) == 2
             ? VK_API_VERSION_1_2
             : VK_API_VERSION_1_3;
}

} // namespace

bool validation_requested_by_env() {
  const char* value = std::getenv(kValidationEnv);
  if (!value)
    return false;
  std::string_view v(value);
  return v == "1" || v == "true" || v == "on" || v == "yes" || v == "TRUE" || v == "ON";
}

std::string format(const ValidationMessage& m) {
  static const char* severities[] = {"verbose", "info", "warning", "error"};
  return std::string(severities[static_cast<int>(m.severity)]) + " [" + m.type + "] " + m.id +
         ": " + m.text;
}

Instance::Instance(InstanceOptions options) : state_(std::make_unique<detail::InstanceState>()) {
  detail::ensure_loader();
  auto& s = *state_;
  s.api_version = choose_api_version();
  s.validation = options.validation.value_or(validation_requested_by_env());

  std::vector<const char*> layers, extensions;
  bool sync_validation = false;
  if (s.validation) {
    if (!has_layer(kValidationLayer))
      throw Error(ErrorKind::Unsupported,
                  std::string("Vulkan validation was requested (") + kValidationEnv +
                      " or InstanceOptions::validation) but the layer " + kValidationLayer +
                      " is not installed: install the Debian package vulkan-validationlayers");
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    sync_validation =
        options.synchronization_validation &&
        has_instance_extension(kValidationLayer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    if (sync_validation)
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }

  auto app = detail::make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "halfway";
  app.pEngineName = "halfway";
  app.apiVersion = s.api_version;

  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  auto features = detail::make<VkValidationFeaturesEXT>(VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT);
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;

  auto messenger = detail::make<VkDebugUtilsMessengerCreateInfoEXT>(
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = record_message;
  messenger.pUserData = &s;
  // Chained into the instance create info, the messenger also hears vkCreateInstance and
  // vkDestroyInstance.
  if (sync_validation)
    messenger.pNext = &features;

  auto info = detail::make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (s.validation)
    info.pNext = &messenger;

  VkResult r = vkCreateInstance(&info, nullptr, &s.instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw detail::no_device_error("the loader found no driver (vkCreateInstance returned "
                                  "VK_ERROR_INCOMPATIBLE_DRIVER)");
  check(r, "vkCreateInstance");
  detail::load_instance_functions(s.instance);

  if (s.validation) {
    s.create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(s.instance, "vkCreateDebugUtilsMessengerEXT"));
    s.destroy_messenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(s.instance, "vkDestroyDebugUtilsMessengerEXT"));
    // The validation-features struct belongs to instance creation only; left chained here, the
    // layer reports VUID_Undefined.
    messenger.pNext = nullptr;
    if (!s.create_messenger || !s.destroy_messenger) {
      vkDestroyInstance(s.instance, nullptr);
      throw Error(ErrorKind::Unsupported, "VK_EXT_debug_utils is enabled but its functions are "
                                          "missing from the loader");
    }
    r = s.create_messenger(s.instance, &messenger, nullptr, &s.messenger);
    if (r != VK_SUCCESS) {
      vkDestroyInstance(s.instance, nullptr);
      check(r, "vkCreateDebugUtilsMessengerEXT");
    }
  }

  try {
    uint32_t count = 0;
    check(vkEnumeratePhysicalDevices(s.instance, &count, nullptr), "vkEnumeratePhysicalDevices");
    s.physical_devices.resize(count);
    r = vkEnumeratePhysicalDevices(s.instance, &count, s.physical_devices.data());
    if (r != VK_INCOMPLETE)
      check(r, "vkEnumeratePhysicalDevices");
    s.physical_devices.resize(count);
    for (uint32_t i = 0; i < count; ++i)
      s.devices.push_back(detail::query_device(s.physical_devices[i], i));
  } catch (...) {
    if (s.messenger)
      s.destroy_messenger(s.instance, s.messenger, nullptr);
    vkDestroyInstance(s.instance, nullptr);
    throw;
  }
}

Instance::~Instance() {
  if (!state_ || !state_->instance)
    return;
  if (state_->messenger)
    state_->destroy_messenger(state_->instance, state_->messenger, nullptr);
  vkDestroyInstance(state_->instance, nullptr);
}

bool Instance::validation_enabled() const {
  return state_->validation;
}
uint32_t Instance::api_version() const {
  return state_->api_version;
}
const std::vector<DeviceInfo>& Instance::devices() const {
  return state_->devices;
}

std::vector<ValidationMessage> Instance::validation_messages() const {
  std::lock_guard lock(state_->messages_mutex);
  return state_->messages;
}

void Instance::clear_validation_messages() {
  std::lock_guard lock(state_->messages_mutex);
  state_->messages.clear();
}

} // namespace halfway::vk
