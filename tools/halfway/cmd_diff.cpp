// `halfway diff FILE.hk --kernel K --device cpu|vulkan|all ...`: the differential report of a
// kernel on devices against the reference interpreter, under the policy the opt-in flags set.
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/report.hpp"
#include "halfway/io/npy.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"
#include "launch_setup.hpp"
#include "pipeline_cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sys/stat.h>

namespace halfway::cli {

namespace {
struct DiffOptions {
  KernelChoice choice;
  LaunchSetup setup;
  std::string device = "all";
  bool json = false;
  std::string max_shown = "10";
  std::string max_unchecked = "0";
  std::string max_undecided = "0";
  bool accept_inconclusive = false;
  bool exact_models = false;
  std::string dump; // a folder
  const CLI::Option* dump_option = nullptr;
  PipelineChoice pipeline;
};

// The three files --dump writes for one output buffer.
struct DumpFiles {
  std::string buffer, reference, device, verdict;
};

// Checks --dump DIR before anything runs: it is a folder (created when missing and its parent
// exists), and every file the dump will write there can be written. A buffer name that is not a
// plain file name is refused rather than written somewhere else.
std::vector<DumpFiles> plan_dump(const ir::Kernel& k, const std::string& dir) {
  namespace fs = std::filesystem;
  ErrorContext c;
  c.file = dir;
  c.kernel = k.name;
  if (dir.empty())
    throw Error(ErrorKind::Usage, "--dump: empty folder name", c);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || ::mkdir(dir.c_str(), 0777) != 0)
      throw Error(ErrorKind::Io,
                  std::string("--dump: cannot create the folder: ") + std::strerror(errno), c);
  } else if (!S_ISDIR(st.st_mode)) {
    throw Error(ErrorKind::Io, "--dump: not a folder", c);
  }
  std::vector<DumpFiles> out;
  for (const auto& p : k.params) {
    if (!p.is_buffer() || p.access == ir::Access::Read)
      continue;
    if (p.name.empty() || p.name == "." || p.name == ".." ||
        p.name.find_first_of(std::string("/\\\0", 3)) != std::string::npos ||
        escape_for_terminal(p.name) != p.name) {
      ErrorContext b = c;
      b.buffer = p.name;
      throw Error(ErrorKind::Usage,
                  "--dump: buffer '" + escape_for_terminal(p.name) +
                      "' is not a plain file name, so its files cannot be named after it",
                  b);
    }
    const fs::path base = fs::path(dir) / p.name;
    DumpFiles f{p.name, base.string() + ".reference.npy", base.string() + ".device.npy",
                base.string() + ".verdict.npy"};
    for (const std::string* path : {&f.reference, &f.device, &f.verdict})
      check_output_path(*path, "--dump");
    out.push_back(std::move(f));
  }
  return out;
}
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
  sub->add_option("--max-undecided", o->max_undecided,
                  "Elements per buffer (and lanes in all) that a device's documented math "
                  "precision leaves undecided before the comparison is inconclusive "
                  "(specs/device-precision.md)")
      ->capture_default_str();
  sub->add_flag("--accept-inconclusive", o->accept_inconclusive,
                "Exit 0 when nothing is violated even if a comparison proves nothing (an output "
                "all NaN, never written, unchecked or undecided); it is still reported");
  sub->add_flag("--exact-models", o->exact_models,
                "Under single rounding, an element an unbarriered narrowing site stored must equal "
                "one of the rounding models (TwoStep, FusedF32, Single, FusedMul) bit for bit, "
                "instead of lying within the documented bound (for validating compilers and "
                "drivers)");
  o->dump_option =
      sub->add_option("--dump", o->dump,
                      "Write, for every output buffer B, DIR/B.reference.npy, DIR/B.device.npy and "
                      "DIR/B.verdict.npy (u8 per element: 0 exact, 1 within bound, 2 unchecked, 3 "
                      "violation, 4 within the device-precision interval, 5 undecided); one "
                      "device only. DIR is created when missing; the files appear "
                      "together, replaced atomically, or not at all")
          ->type_name("DIR");
  o->pipeline.add_option(*sub);
  return [o] {
    diff::Options opts;
    opts.max_shown = parse_count(o->max_shown, "--show");
    opts.max_unchecked = parse_count(o->max_unchecked, "--max-unchecked");
    opts.max_undecided = parse_count(o->max_undecided, "--max-undecided");
    opts.accept_inconclusive = o->accept_inconclusive;
    opts.exact_models = o->exact_models;
    opts.launch = o->setup.launch_options();
    o->setup.claim_stdin_users(o->choice);
    const text::KernelFile file = o->choice.load_file();
    const bool pipeline = o->pipeline.wanted(o->choice, file);
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
    if (pipeline)
      return diff_pipeline(file, o->pipeline.name, devices, o->setup, opts, o->json);
    auto kernel = o->choice.load(file);
    const bool dump = o->dump_option->count() > 0;
    if (dump) {
      if (devices.size() != 1) {
        std::string names;
        for (const auto& n : devices)
          names += (names.empty() ? "" : ", ") + n;
        ErrorContext c;
        c.kernel = kernel.name();
        throw Error(ErrorKind::Usage,
                    "--dump writes one device's results, and --device " +
                        escape_for_terminal(o->device) + " means " + names +
                        ": pick one with --device",
                    c);
      }
    }
    // Every device is made, and the inputs checked, before the first comparison runs.
    std::vector<std::unique_ptr<rt::Device>> made;
    for (const auto& name : devices)
      made.push_back(rt::make_device(name));
    // diff::run launches on copies, so one set of inputs serves every device.
    auto inputs = o->setup.make(kernel.kernel());
    for (const auto& d : made)
      check_grid(kernel.kernel(), inputs.grid, d->info());
    // Last of the checks, as it creates the folder: a mistake found above leaves nothing behind.
    std::vector<DumpFiles> dump_files;
    if (dump)
      dump_files = plan_dump(kernel.kernel(), o->dump);
    std::vector<diff::BufferResults> results;
    if (!dump_files.empty())
      opts.results = &results;
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
      throw_if_interrupted(kernel.name());
      if (!dump_files.empty()) {
        // Every file is written to its temporary first and renamed only once all were written:
        // a failure leaves none of them changed.
        std::vector<StagedFile> staged;
        for (const DumpFiles& files : dump_files) {
          auto res = std::find_if(results.begin(), results.end(),
                                  [&](const auto& r) { return r.name == files.buffer; });
          if (res == results.end())
            throw Error(ErrorKind::Internal, "the comparison has no results for output buffer " +
                                                 escape_for_terminal(files.buffer));
          rt::HostBuffer verdicts(ir::ScalarType::U8, res->verdicts.size());
          for (size_t e = 0; e < res->verdicts.size(); ++e)
            verdicts.set_bits(e, static_cast<uint64_t>(res->verdicts[e]));
          staged.emplace_back(files.reference, io::npy_bytes(res->reference));
          staged.emplace_back(files.device, io::npy_bytes(res->device));
          staged.emplace_back(files.verdict, io::npy_bytes(verdicts));
        }
        for (auto& f : staged)
          f.commit();
      }
      if (o->json)
        Output::get().result(diff::to_json(report));
      else
        Output::get().text(diff::to_text(report) + (i + 1 < made.size() ? "\n" : ""));
    }
    return violations ? 1 : 0;
  };
}

} // namespace halfway::cli
