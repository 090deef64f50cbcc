// `halfway diff FILE.hk --kernel K --device cpu|vulkan|all ...`: the differential report of a
// kernel on devices against the reference interpreter, under the policy the opt-in flags set.
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/report.hpp"
#include "halfway/ir/error.hpp"
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
  std::string max_shown = "10";
  std::string max_unchecked = "0";
  bool accept_inconclusive = false;
  bool exact_models = false;
};
} // namespace

Runner add_diff(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "diff", "Compare devices with the reference interpreter: bit for bit where the kernel holds "
              "no opt-in, within the documented bound where it does. Exit 0: all hold; 1: "
              "violations or an inconclusive comparison; 2: errors");
  auto o = std::make_shared<DiffOptions>();
  o->choice.add_options(*sub);
  o->setup.add_options(*sub);
  o->setup.inputs = "ties";
  sub->add_option("--device,-d", o->device,
                  "cpu, vulkan, vulkan:NAME, interp or all (every device but the interpreter)")
      ->capture_default_str();
  sub->add_flag("--json", o->json,
                "Print one JSON document: {\"command\", \"results\": [one report per device], "
                "\"error\"}");
  sub->add_option("--show", o->max_shown, "Violations shown per buffer")->capture_default_str();
  sub->add_option("--max-unchecked", o->max_unchecked,
                  "Elements per buffer that may differ with nothing bounding them before the "
                  "comparison is inconclusive")
      ->capture_default_str();
  sub->add_flag("--accept-inconclusive", o->accept_inconclusive,
                "Exit 0 when nothing is violated even if a comparison proves nothing (an output "
                "all NaN, never written, or unchecked); it is still reported");
  sub->add_flag("--exact-models", o->exact_models,
                "Under single rounding, an element an unbarriered narrowing site stored must equal "
                "one of the rounding models (TwoStep, FusedF32, Single, FusedMul) bit for bit, "
                "instead of lying within the documented bound (for validating compilers and "
                "drivers)");
  return [o] {
    diff::Options opts;
    opts.max_shown = parse_count(o->max_shown, "--show");
    opts.max_unchecked = parse_count(o->max_unchecked, "--max-unchecked");
    opts.accept_inconclusive = o->accept_inconclusive;
    opts.exact_models = o->exact_models;
    opts.launch = o->setup.launch_options();
    auto kernel = o->choice.load();
    std::vector<std::string> devices;
    if (o->device == "all") {
      for (const auto& n : rt::device_names())
        if (n != "interp")
          devices.push_back(n);
      if (devices.empty())
        devices.push_back("interp");
    } else {
      devices.push_back(o->device);
    }
    // Every device is made, and the inputs checked, before the first comparison runs.
    std::vector<std::unique_ptr<rt::Device>> made;
    for (const auto& name : devices)
      made.push_back(rt::make_device(name));
    // diff::run launches on copies, so one set of inputs serves every device.
    auto inputs = o->setup.make(kernel.kernel());
    for (const auto& d : made)
      check_grid(kernel.kernel(), inputs.grid, d->info());
    bool violations = false;
    for (size_t i = 0; i < made.size(); ++i) {
      rt::Device& device = *made[i];
      check_grid(kernel.kernel(), inputs.grid, device.info());
      if (progress_enabled())
        std::cerr << "diff " << escape_for_terminal(kernel.name()) << " on "
                  << escape_for_terminal(device.name()) << "...\r" << std::flush;
      // The reference run and the device's launch each get the timeout.
      diff::Report report;
      {
        LaunchWatch watch(kernel.name(),
                          "the reference run and the launch on " + device.name() +
                              " (--timeout each)",
                          2 * opts.launch.timeout);
        report = diff::run(kernel, device, inputs.grid, inputs.args, opts);
        watch.check();
      }
      if (progress_enabled())
        std::cerr << std::string(60, ' ') << "\r";
      violations = violations || !report.ok();
      if (o->json)
        Output::get().result(diff::to_json(report));
      else
        Output::get().text(diff::to_text(report) + (i + 1 < made.size() ? "\n" : ""));
    }
    return violations ? 1 : 0;
  };
}

} // namespace halfway::cli
