// `halfway run FILE.hk --kernel K --grid N ...`: one launch on one device.
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/io/npy.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"
#include "launch_setup.hpp"
#include "pipeline_cli.hpp"

#include <iostream>
#include <spdlog/spdlog.h>
#include <sstream>

namespace halfway::cli {

namespace {
struct RunOptions {
  KernelChoice choice;
  LaunchSetup setup;
  std::string device = "interp";
  std::vector<std::string> dumps; // B=path
  bool json = false;
  std::string show = "8";
  PipelineChoice pipeline;
};
} // namespace

Runner add_run(CLI::App& app) {
  auto* sub = app.add_subcommand("run", "Run one kernel of a .hk file on one device");
  auto o = std::make_shared<RunOptions>();
  o->choice.add_options(*sub);
  o->setup.add_options(*sub);
  sub->add_option("--device,-d", o->device, "interp, cpu, vulkan or vulkan:NAME")
      ->capture_default_str();
  sub->add_option("--dump", o->dumps,
                  "B=PATH: write buffer B to PATH (.npy or raw) after a successful launch; the "
                  "file is replaced atomically and only a regular file is written. The .npy keeps "
                  "the buffer's shape (its input .npy's, or a generator's AxB). PATH - writes the "
                  ".npy to standard output, which then carries nothing else (one dump only)");
  sub->add_flag("--json", o->json,
                "Print one JSON document: {\"command\", \"results\", \"error\"}");
  sub->add_option("--show", o->show, "Elements of each output buffer to print")
      ->capture_default_str();
  o->pipeline.add_option(*sub);
  return [o] {
    const size_t show = parse_count(o->show, "--show");
    o->setup.claim_stdin_users(o->choice);
    const text::KernelFile file = o->choice.load_file();
    if (o->pipeline.wanted(o->choice, file))
      return run_pipeline(file, o->pipeline.name, o->device, o->setup, show, o->json);
    auto kernel = o->choice.load(file);
    // Validate everything before running, so a typo never costs a long run.
    auto dumps = parse_dumps(kernel.kernel(), o->dumps);
    const bool npy_to_stdout = dumps.size() == 1 && dumps[0].to_stdout();
    if (npy_to_stdout && o->json)
      throw Error(ErrorKind::Usage,
                  "--dump " + escape_for_terminal(dumps[0].buffer) +
                      "=- writes the .npy file to standard output, where --json's "
                      "document would go; give a file name or leave out --json");
    auto options = o->setup.launch_options();
    BufferShapes shapes;
    auto inputs = o->setup.make(kernel.kernel(), &shapes);
    auto device = rt::make_device(o->device);
    check_grid(kernel.kernel(), inputs.grid, device->info());
    if (progress_enabled())
      std::cerr << "running " << escape_for_terminal(kernel.name()) << " on "
                << escape_for_terminal(device->name()) << "...\r" << std::flush;
    rt::LaunchResult result;
    {
      LaunchWatch watch(kernel.name(), "the launch on " + device->name(), options.timeout);
      result = device->launch(kernel, inputs.grid, inputs.args, options);
      watch.check();
    }
    if (progress_enabled())
      std::cerr << std::string(60, ' ') << "\r";
    throw_if_interrupted(kernel.name());
    // Every dump is written to its temporary file first, and renamed only once all were written:
    // a failure leaves none of them changed.
    std::vector<StagedFile> staged;
    for (const auto& d : dumps) {
      const rt::HostBuffer& b = inputs.buffers[d.slot];
      if (d.to_stdout() || io::is_npy_path(d.path)) {
        const std::string hint = io::npy_view_hint(b.type());
        if (!hint.empty())
          spdlog::info("--dump {}: {} is written as '{}', which numpy.load reads as raw bytes; "
                       "{} gives the {} values",
                       escape_for_terminal(d.buffer), ir::name(b.type()), io::npy_descr(b.type()),
                       hint, ir::name(b.type()));
      }
      if (d.to_stdout()) {
        const std::string bytes = io::npy_bytes(b, shapes[d.slot]);
        std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        std::cout.flush();
        if (!std::cout)
          throw Error(ErrorKind::Io, "--dump " + escape_for_terminal(d.buffer) +
                                         "=-: cannot write the .npy file to standard output");
        return 0; // stdout carries the .npy file alone
      }
      staged.emplace_back(d.path, io::file_bytes(d.path, b, shapes[d.slot]));
    }
    for (auto& f : staged)
      f.commit();

    std::ostringstream out;
    if (o->json) {
      out << "{\"kernel\": " << json_quote(kernel.name())
          << ", \"device\": " << json_quote(device->name()) << ", \"groups\": ["
          << inputs.grid.groups[0] << ", " << inputs.grid.groups[1] << ", " << inputs.grid.groups[2]
          << "], \"wall_ms\": " << result.wall_ms << ", \"device_ms\": " << result.device_ms
          << ", \"compile_ms\": " << result.compile_ms << ", \"outputs\": {";
    } else {
      out << kernel.name() << " on " << device->name() << ": " << inputs.grid.total_groups()
          << " workgroups of " << kernel->workgroup_lanes() << " lanes, " << result.wall_ms
          << " ms";
      if (result.compile_ms > 0)
        out << " (compile " << result.compile_ms << " ms)";
      out << "\n";
    }
    const char* sep = "";
    for (size_t i = 0, slot = 0; i < kernel->params.size(); ++i) {
      const auto& p = kernel->params[i];
      if (!p.is_buffer())
        continue;
      const auto& buf = inputs.buffers[slot++];
      if (p.access == ir::Access::Read)
        continue;
      size_t n = std::min(show, buf.size());
      if (o->json) {
        out << sep << json_quote(p.name) << ": {\"type\": \"" << ir::name(p.type)
            << "\", \"size\": " << buf.size() << ", \"first\": [";
        for (size_t e = 0; e < n; ++e)
          out << (e ? ", " : "") << "\"" << diff::value_text(p.type, buf.get_bits(e)) << "\"";
        out << "]}";
        sep = ", ";
      } else {
        out << "  " << p.name << " (" << ir::name(p.type) << "[" << buf.size() << "]):";
        for (size_t e = 0; e < n; ++e)
          out << " " << diff::value_text(p.type, buf.get_bits(e));
        if (n < buf.size())
          out << " ...";
        out << "\n";
      }
    }
    if (o->json)
      Output::get().result(out.str() + "}}");
    else
      Output::get().text(out.str());
    return 0;
  };
}

} // namespace halfway::cli
