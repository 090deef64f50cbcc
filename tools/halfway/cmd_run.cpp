// `halfway run FILE.hk --kernel K --grid N ...`: one launch on one device.
#include "commands.hpp"
#include "halfway/ir/error.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/runtime/device.hpp"
#include "launch_setup.hpp"
#include "npy.hpp"

#include <iostream>
#include <sstream>

namespace halfway::cli {

namespace {
struct RunOptions {
  KernelChoice choice;
  LaunchSetup setup;
  std::string device = "interp";
  std::vector<std::string> dumps; // B=path
  bool json = false;
  size_t show = 8;
};

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}
} // namespace

Runner add_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Run one kernel of a .hk file on one device");
  auto o = std::make_shared<RunOptions>();
  o->choice.add_options(*sub);
  o->setup.add_options(*sub);
  sub->add_option("--device,-d", o->device, "interp, cpu, vulkan or vulkan:NAME")->capture_default_str();
  sub->add_option("--dump", o->dumps, "B=PATH: write output buffer B to PATH (.npy or raw)");
  sub->add_flag("--json", o->json, "Print a machine-readable result");
  sub->add_option("--show", o->show, "Elements of each output buffer to print")->capture_default_str();
  return [o] {
    auto kernel = o->choice.load();
    auto inputs = o->setup.make(kernel.kernel());
    auto device = rt::make_device(o->device);
    check_grid(kernel.kernel(), inputs.grid, device->info());
    // Validate the dump requests before running, so a typo never costs a long run.
    std::vector<std::pair<size_t, std::string>> dumps;
    for (const auto& d : o->dumps) {
      auto eq = d.find('=');
      std::string name = eq == std::string::npos ? d : d.substr(0, eq);
      uint32_t p = kernel->find_param(name);
      if (eq == std::string::npos || p == ir::kNone || !kernel->params[p].is_buffer())
        throw Error(ErrorKind::Usage, "--dump " + d + ": expected BUFFER=PATH naming a buffer parameter",
                    {.kernel = kernel.name()});
      size_t slot = 0;
      for (uint32_t i = 0; i < p; ++i) slot += kernel->params[i].is_buffer();
      dumps.emplace_back(slot, d.substr(eq + 1));
    }
    if (progress_enabled())
      std::cerr << "running " << kernel.name() << " on " << device->name() << "...\r" << std::flush;
    auto result = device->launch(kernel, inputs.grid, inputs.args, o->setup.launch_options());
    if (progress_enabled()) std::cerr << std::string(60, ' ') << "\r";
    for (auto& [slot, path] : dumps) save_buffer(path, inputs.buffers[slot]);

    std::ostringstream out;
    if (o->json) {
      out << "{\"kernel\": \"" << json_escape(kernel.name()) << "\", \"device\": \""
          << json_escape(device->name()) << "\", \"groups\": [" << inputs.grid.groups[0] << ", "
          << inputs.grid.groups[1] << ", " << inputs.grid.groups[2] << "], \"wall_ms\": "
          << result.wall_ms << ", \"device_ms\": " << result.device_ms
          << ", \"compile_ms\": " << result.compile_ms << ", \"outputs\": {";
    } else {
      out << kernel.name() << " on " << device->name() << ": " << inputs.grid.total_groups()
          << " workgroups of " << kernel->workgroup_lanes() << " lanes, " << result.wall_ms
          << " ms";
      if (result.compile_ms > 0) out << " (compile " << result.compile_ms << " ms)";
      out << "\n";
    }
    const char* sep = "";
    for (size_t i = 0, slot = 0; i < kernel->params.size(); ++i) {
      const auto& p = kernel->params[i];
      if (!p.is_buffer()) continue;
      const auto& buf = inputs.buffers[slot++];
      if (p.access == ir::Access::Read) continue;
      size_t n = std::min(o->show, buf.size());
      if (o->json) {
        out << sep << "\"" << json_escape(p.name) << "\": {\"type\": \"" << ir::name(p.type)
            << "\", \"size\": " << buf.size() << ", \"first\": [";
        for (size_t e = 0; e < n; ++e)
          out << (e ? ", " : "") << "\"" << diff::value_text(p.type, buf.get_bits(e)) << "\"";
        out << "]}";
        sep = ", ";
      } else {
        out << "  " << p.name << " (" << ir::name(p.type) << "[" << buf.size() << "]):";
        for (size_t e = 0; e < n; ++e) out << " " << diff::value_text(p.type, buf.get_bits(e));
        if (n < buf.size()) out << " ...";
        out << "\n";
      }
    }
    if (o->json) out << "}}\n";
    std::cout << out.str();
    return 0;
  };
}

} // namespace halfway::cli
