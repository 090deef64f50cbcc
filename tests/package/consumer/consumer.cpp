// A project that uses halfway the way its users do (tests/package/README.md): one kernel, compared
// with the reference interpreter on the CPU device and on the Vulkan device. It also calls the
// Vulkan loader itself, through the prototypes of <vulkan/vulkan.h>: halfway must leave those to
// the application (no VK_NO_PROTOTYPES) and its own loader symbols must not take their place.
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/dsl.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/version.hpp"

#include <cstdint>
#include <iostream>
#include <vulkan/vulkan.h>

using namespace halfway;

int main() {
  uint32_t api = 0;
  VkResult r = vkEnumerateInstanceVersion(&api);
  if (r != VK_SUCCESS || api < VK_API_VERSION_1_1) {
    std::cerr << "vkEnumerateInstanceVersion: result " << r << ", version " << api << "\n";
    return 1;
  }
  std::cout << "halfway " << version_string << "\n";
  try {
    auto k = kernel("consumer_fma_f16", {64}, {"a", "b", "c", "out"},
                    [](In<float> a, In<float> b, In<float> c, Out<f16> out) {
                      Var i(global_id(0), "i");
                      If(i < out.size(), [&] { out[i] = a[i] * b[i] + c[i]; });
                    });
    auto in = diff::inputs::make_inputs(k.kernel(), 4096, diff::inputs::Kind::Ties, 7);
    bool ok = true;
    for (const char* name : {"cpu", "vulkan"}) {
      auto device = rt::make_device(name);
      auto report = diff::run(k, *device, in.grid, in.args);
      std::cout << diff::to_text(report) << "\n";
      ok = ok && report.ok();
    }
    return ok ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
}
