// `halfway diff FILE.hk --kernel K --device cpu|vulkan|all ...`: the differential report of a
// kernel on devices against the reference interpreter, under the policy the opt-in flags set.
#include "commands.hpp"
#include "halfway/ir/error.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/report.hpp"
#include "halfway/runtime/device.hpp"
#include "launch_setup.hpp"

#include <iostream>

namespace halfway::cli {

namespace {
struct DiffOptions {
  KernelChoice choice;
  LaunchSetup setup;
  std::string device = "all";
  bool json = false;
  size_t max_shown = 10;
};
} // namespace

Runner add_diff(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "diff", "Compare devices with the reference interpreter: bit for bit where the kernel holds "
              "no opt-in, within the documented bound where it does. Opt in with "
              "--accept-single-rounding[=KERNEL]:REASON and "
              "--accept-relaxed-accumulation[=KERNEL]:REASON. Exit 0: all hold; 1: violations; 2: "
              "errors");
  auto o = std::make_shared<DiffOptions>();
  o->choice.add_options(*sub);
  o->setup.add_options(*sub);
  o->setup.inputs = "ties";
  sub->add_option("--device,-d", o->device, "cpu, vulkan, vulkan:NAME, interp or all (every device but the interpreter)")
      ->capture_default_str();
  sub->add_flag("--json", o->json, "Print the reports as JSON");
  sub->add_option("--show", o->max_shown, "Violations shown per buffer")->capture_default_str();
  return [o] {
    auto kernel = o->choice.load();
    std::vector<std::string> devices;
    if (o->device == "all") {
      for (const auto& n : rt::device_names())
        if (n != "interp") devices.push_back(n);
      if (devices.empty()) devices.push_back("interp");
    } else {
      devices.push_back(o->device);
    }
    diff::Options opts;
    opts.max_shown = o->max_shown;
    opts.launch = o->setup.launch_options();
    bool violations = false;
    if (o->json) std::cout << "[";
    for (size_t i = 0; i < devices.size(); ++i) {
      auto device = rt::make_device(devices[i]);
      auto inputs = o->setup.make(kernel.kernel());
      check_grid(kernel.kernel(), inputs.grid, device->info());
      if (progress_enabled())
        std::cerr << "diff " << kernel.name() << " on " << device->name() << "...\r" << std::flush;
      auto report = diff::run(kernel, *device, inputs.grid, inputs.args, opts);
      if (progress_enabled()) std::cerr << std::string(60, ' ') << "\r";
      violations = violations || !report.ok();
      if (o->json)
        std::cout << (i ? ",\n" : "") << diff::to_json(report);
      else
        std::cout << diff::to_text(report) << (i + 1 < devices.size() ? "\n" : "");
    }
    if (o->json) std::cout << "]\n";
    return violations ? 1 : 0;
  };
}

} // namespace halfway::cli
