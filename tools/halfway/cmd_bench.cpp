// `halfway bench FILE.hk --kernel K --grid N --device D [--launches N] [--warmup W]`: the time of
// repeated launches of one kernel on one device. The first launches (compilation, pipeline
// creation, cold caches) are left out, and the median, min and max of the rest are reported.
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"
#include "launch_setup.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <sstream>

namespace halfway::cli {

namespace {

struct BenchOptions {
  KernelChoice choice;
  LaunchSetup setup;
  std::string device = "interp";
  std::string launches = "20";
  std::string warmup = "2";
  bool json = false;
};

struct Summary {
  double median, min, max;
};

// The median of an even count is the mean of the two middle samples.
Summary summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return {median, samples.front(), samples.back()};
}

std::string summary_json(const Summary& s) {
  std::ostringstream out;
  out << "{\"median\": " << s.median << ", \"min\": " << s.min << ", \"max\": " << s.max << "}";
  return out.str();
}

} // namespace

Runner add_bench(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "bench", "Time repeated launches of one kernel on one device: median, min and max");
  auto o = std::make_shared<BenchOptions>();
  o->choice.add_options(*sub);
  o->setup.add_options(*sub);
  sub->add_option("--device,-d", o->device, "interp, cpu, vulkan or vulkan:NAME")
      ->capture_default_str();
  sub->add_option("--launches,-n", o->launches, "Timed launches (at least 1, at most 100000)")
      ->capture_default_str();
  sub->add_option("--warmup", o->warmup,
                  "Launches before the timed ones, not counted (the first one compiles)")
      ->capture_default_str();
  sub->add_flag("--json", o->json,
                "Print one JSON document: {\"command\", \"results\", \"error\"}");
  return [o] {
    const uint64_t launches = parse_count(o->launches, "--launches");
    const uint64_t warmup = parse_count(o->warmup, "--warmup");
    if (launches < 1 || launches > 100000)
      throw Error(ErrorKind::Usage, "--launches " + escape_for_terminal(o->launches) +
                                        ": expected 1 to 100000 timed launches");
    if (warmup > 100000)
      throw Error(ErrorKind::Usage,
                  "--warmup " + escape_for_terminal(o->warmup) + ": more than 100000 launches");
    o->setup.claim_stdin_users(o->choice);
    auto kernel = o->choice.load();
    auto options = o->setup.launch_options();
    auto inputs = o->setup.make(kernel.kernel());
    auto device = rt::make_device(o->device);
    check_grid(kernel.kernel(), inputs.grid, device->info());

    // Every launch starts from the same inputs, so that a kernel updating a buffer in place does
    // the same work each time (values drifting towards infinities or denormals would change it).
    std::vector<std::pair<size_t, rt::HostBuffer>> initial;
    for (size_t i = 0, slot = 0; i < kernel->params.size(); ++i) {
      const auto& p = kernel->params[i];
      if (!p.is_buffer())
        continue;
      if (p.access != ir::Access::Read)
        initial.emplace_back(slot, inputs.buffers[slot].clone());
      ++slot;
    }
    std::vector<double> device_ms, wall_ms;
    double first_compile_ms = 0;
    const uint64_t total = warmup + launches;
    for (uint64_t i = 0; i < total; ++i) {
      for (const auto& [slot, b] : initial)
        if (b.size_bytes())
          std::memcpy(inputs.buffers[slot].data(), b.data(), b.size_bytes());
      if (progress_enabled())
        std::cerr << "launch " << i + 1 << " of " << total << "...\r" << std::flush;
      rt::LaunchResult r;
      {
        LaunchWatch watch(kernel.name(), "the launch on " + device->name(), options.timeout);
        r = device->launch(kernel, inputs.grid, inputs.args, options);
        watch.check();
      }
      throw_if_interrupted(kernel.name());
      if (i == 0)
        first_compile_ms = r.compile_ms;
      if (i >= warmup) {
        device_ms.push_back(r.device_ms);
        wall_ms.push_back(r.wall_ms);
      }
    }
    if (progress_enabled())
      std::cerr << std::string(60, ' ') << "\r";
    const Summary d = summarize(device_ms), w = summarize(wall_ms);
    std::ostringstream out;
    if (o->json) {
      out << "{\"kernel\": " << json_quote(kernel.name())
          << ", \"device\": " << json_quote(device->name()) << ", \"groups\": ["
          << inputs.grid.groups[0] << ", " << inputs.grid.groups[1] << ", " << inputs.grid.groups[2]
          << "], \"lanes_per_group\": " << kernel->workgroup_lanes() << ", \"warmup\": " << warmup
          << ", \"launches\": " << launches << ", \"device_ms\": " << summary_json(d)
          << ", \"wall_ms\": " << summary_json(w) << ", \"first_compile_ms\": " << first_compile_ms
          << "}";
      Output::get().result(out.str());
    } else {
      out << kernel.name() << " on " << device->name() << ": " << inputs.grid.total_groups()
          << " workgroups of " << kernel->workgroup_lanes() << " lanes, " << launches
          << " launches after " << warmup << " warm-up\n"
          << "  device ms: median " << d.median << ", min " << d.min << ", max " << d.max << "\n"
          << "  wall ms:   median " << w.median << ", min " << w.min << ", max " << w.max << "\n";
      if (first_compile_ms > 0)
        out << "  compile ms (first launch): " << first_compile_ms << "\n";
      Output::get().text(out.str());
    }
    return 0;
  };
}

} // namespace halfway::cli
