// vulkan_probe: creates a Runtime from the environment alone and prints every device and the
// selected one, or the Error. Tests run it as a child process with a doctored environment
// (VK_ICD_FILENAMES, VK_LAYER_PATH, HALFWAY_VK_*), because the loader reads those when volk first
// loads it and volk does that once per process. Exit status 0, or 2 for an Error (as the CLI).

#include "halfway/runtime/vulkan_api/runtime.hpp"

#include <iostream>

int main() {
  try {
    halfway::vk::Runtime runtime;
    for (const auto& info : runtime.instance().devices())
      std::cout << describe(info);
    std::cout << "selected: " << summary(runtime.info()) << '\n';
    auto messages = runtime.validation_messages();
    std::cout << "validation messages: " << messages.size() << '\n';
    for (const auto& m : messages)
      std::cout << format(m) << '\n';
    return 0;
  } catch (const halfway::Error& e) {
    std::cout << e.what() << '\n';
    return 2;
  }
}
