// `halfway fuzz --count N --seed S [--devices cpu,vulkan] [--shard I/N] [--out DIR]
// [--timeout SECONDS]`: a differential campaign over generated kernels (specs/kernelgen.md).
// The kernels run in a child process, so that a device crash is a finding (fuzz_process.hpp).
// Progress goes to stderr; stdout gets one line per mismatch and the final line
// "N kernels, M mismatches, K unexplained". Exit 0 only when nothing is unexplained.
#include "cli_util.hpp"
#include "commands.hpp"
#include "fuzz_process.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/kernelgen/campaign.hpp"
#include "halfway/support/error.hpp"
#include "launch_setup.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

namespace halfway::cli {

namespace {
struct FuzzOptions {
  std::string count = "100";
  std::string seed = "1";
  std::string devices; // empty: every device of the build
  std::string shard = "0/1";
  std::string out;
  std::string timeout;
  const CLI::Option* timeout_option = nullptr;
  bool print = false;
};

std::vector<std::string> split_devices(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string d;
  while (std::getline(in, d, ','))
    if (!d.empty())
      out.push_back(d);
  if (out.empty())
    throw Error(ErrorKind::Usage, "--devices '" + escape_for_terminal(list) + "' names no device");
  return out;
}

std::pair<uint64_t, uint64_t> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos)
    throw Error(ErrorKind::Usage,
                "--shard " + escape_for_terminal(text) + ": write INDEX/COUNT, e.g. 0/4");
  const uint64_t index = parse_count(text.substr(0, slash), "--shard");
  const uint64_t count = parse_count(text.substr(slash + 1), "--shard");
  if (count == 0 || index >= count)
    throw Error(ErrorKind::Usage, "--shard " + escape_for_terminal(text) +
                                      ": the index must be below the count (0/4 .. 3/4)");
  return {index, count};
}

void make_folder(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      ErrorContext c;
      c.file = dir;
      throw Error(ErrorKind::Io, "--out: not a folder", c);
    }
    return;
  }
  if (errno != ENOENT || ::mkdir(dir.c_str(), 0777) != 0) {
    ErrorContext c;
    c.file = dir;
    throw Error(ErrorKind::Io,
                std::string("--out: cannot create the folder: ") + std::strerror(errno), c);
  }
}
} // namespace

Runner add_fuzz(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "fuzz", "Generate random kernels and compare every device with the reference interpreter on "
              "each. Exit 0: nothing unexplained; 1: unexplained mismatches; 2: errors");
  auto o = std::make_shared<FuzzOptions>();
  sub->add_option("--count,-n", o->count, "Kernels in the whole campaign")->capture_default_str();
  sub->add_option("--seed", o->seed, "Campaign seed: kernel i is a function of (seed, i)")
      ->capture_default_str();
  sub->add_option("--devices", o->devices,
                  "Comma-separated devices to compare (interp, cpu, vulkan, vulkan:NAME); default: "
                  "every device of this build");
  sub->add_option("--shard", o->shard,
                  "Run shard I of N (I/N): the kernels i with i % N == I, so N machines running "
                  "0/N .. N-1/N run the campaign once")
      ->capture_default_str();
  sub->add_option("--out", o->out,
                  "Folder for each mismatching kernel as KERNEL.DEVICE.hk, with the command that "
                  "shows it, and findings.txt listing them (created when missing)")
      ->type_name("DIR");
  o->timeout_option =
      sub->add_option("--timeout", o->timeout, "Seconds each launch may take (default: none)");
  sub->add_flag("--print", o->print,
                "Print this shard's kernels as .hk text, each after a comment with the command "
                "that compares it, instead of running them");
  return [o] {
    kernelgen::CampaignOptions c;
    c.count = parse_count(o->count, "--count");
    c.seed = parse_count(o->seed, "--seed");
    std::tie(c.shard, c.shards) = parse_shard(o->shard);
    if (o->timeout_option->count())
      c.timeout = parse_seconds(o->timeout, "--timeout");
    if (o->print) {
      const std::string device = o->devices.empty() ? "all" : o->devices;
      for (uint64_t i : kernelgen::shard_indices(c.count, c.shard, c.shards)) {
        const kernelgen::Generated g = kernelgen::generate(c.seed, i);
        const std::string file = g.kernel.name + ".hk";
        Output::get().text(
            "// kernel " + std::to_string(i) + " of seed " + std::to_string(c.seed) + ": " +
            kernelgen::diff_command(file, g.kernel.name, device, kernelgen::setup_of(g)) + "\n" +
            ir::print(g.kernel));
      }
      return 0;
    }
    c.devices = o->devices.empty() ? rt::device_names() : split_devices(o->devices);
    if (!o->out.empty())
      make_folder(o->out);
    std::string findings_txt;
    c.on_finding = [&](const kernelgen::Finding& f) {
      std::string line = kernelgen::name(f.check.outcome).data();
      line += ": kernel " + std::to_string(f.index) + " (" + f.kernel + ") on " + f.device + ": " +
              f.check.cause;
      if (!o->out.empty() && !f.text.empty()) {
        const std::string file = o->out + "/" + f.kernel + "." + f.device + ".hk";
        const std::string cmd = kernelgen::diff_command(file, f.kernel, f.device, f.setup);
        write_file_atomically(file, "// " + line + "\n// " + cmd + "\n" + f.text);
        line += "\n  " + cmd;
      }
      findings_txt += line + "\n";
      if (f.check.outcome == kernelgen::Outcome::Unexplained && !f.check.report.empty())
        std::cerr << escape_for_terminal(f.check.report, true) << "\n";
      Output::get().text(line + "\n");
    };
    const bool progress = progress_enabled();
    // On a terminal a line redrawn every 10 kernels; in a log, a line every 500.
    c.progress = [&](uint64_t done, const kernelgen::CampaignResult& r) {
      throw_if_interrupted("fuzz campaign");
      if (done % (progress ? 10 : 500) != 0)
        return;
      std::cerr << "fuzz: " << done << " kernels, " << r.mismatches << " mismatches, "
                << r.unexplained << " unexplained (" << static_cast<uint64_t>(r.seconds) << " s)"
                << (progress ? "\r" : "\n") << std::flush;
    };
    install_interrupt_handler();
    kernelgen::CampaignResult r;
    try {
      r = run_campaign_in_child(c);
    } catch (const AlreadyReported& e) {
      return e.status;
    }
    if (progress)
      std::cerr << std::string(70, ' ') << "\r";
    std::ostringstream summary;
    for (const auto& [cause, n] : r.causes)
      summary << "  " << n << " x " << cause << "\n";
    std::cerr << "fuzz: seed " << c.seed << ", shard " << c.shard << "/" << c.shards << ", "
              << r.comparisons << " comparisons in " << r.seconds << " s ("
              << (r.seconds > 0 ? static_cast<double>(r.kernels) / r.seconds : 0.0)
              << " kernels/s); " << r.inconclusive << " inconclusive, " << r.unsupported
              << " unsupported by a device; " << r.undecided_comparisons
              << " with undecided elements (" << r.undecided_elements << ")\n"
              << summary.str();
    if (!o->out.empty())
      write_file_atomically(o->out + "/findings.txt", findings_txt);
    Output::get().text(std::to_string(r.kernels) + " kernels, " + std::to_string(r.mismatches) +
                       " mismatches, " + std::to_string(r.unexplained) + " unexplained\n");
    return r.unexplained ? 1 : 0;
  };
}

} // namespace halfway::cli
