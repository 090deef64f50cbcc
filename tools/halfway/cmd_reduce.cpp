// `halfway reduce FILE.hk --device D [--out MIN.hk] [--grid N --inputs K --seed S opt-ins
// --exact-models] [--judge]`: shrinks a kernel that mismatches on D while the mismatch persists,
// and prints the smallest kernel found with the command that shows its mismatch
// (specs/kernelgen.md). The launch options not given are read from the `// halfway diff ...`
// comment that `halfway fuzz
// --out` and `halfway reduce` write at the top of a kernel file. With --judge it only prints how
// the campaign judges the kernel now.
#include "check_process.hpp"
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/kernelgen/campaign.hpp"
#include "halfway/kernelgen/reduce.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/support/error.hpp"
#include "launch_setup.hpp"

#include <array>
#include <iostream>
#include <iterator>
#include <sstream>

namespace halfway::cli {

namespace {
struct ReduceCliOptions {
  KernelChoice choice;
  std::string device;
  std::string out;
  std::string grid;
  std::string inputs = "random";
  std::string seed = "1";
  bool exact_models = false;
  bool judge = false;
  std::string timeout;
  const CLI::Option* timeout_option = nullptr;
  std::string max_attempts = "20000";
  const CLI::Option *grid_option = nullptr, *inputs_option = nullptr, *seed_option = nullptr;
};

// The options of the first `// halfway diff FILE ...` comment line of `text`, as (name, value)
// pairs: "--grid" "64", "--exact-models" "", "--accept-single-rounding" "=K:R" (and the same for
// "--accept-relaxed-accumulation", which campaigns of seed 20261207 and before wrote but this
// function dropped: `reduce --judge` and scripts/fuzz-recheck judged such findings strictly).
std::vector<std::pair<std::string, std::string>> header_options(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// halfway diff ", 0) != 0)
      continue;
    std::istringstream words(line.substr(16));
    std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
    for (size_t i = 1; i < w.size(); ++i) {
      // The opt-ins are one word each, --accept-...=KERNEL:REASON.
      const std::string single = "--accept-single-rounding",
                        relaxed = "--accept-relaxed-accumulation";
      if (w[i].rfind(single, 0) == 0)
        out.emplace_back(single, w[i].substr(single.size()));
      else if (w[i].rfind(relaxed, 0) == 0)
        out.emplace_back(relaxed, w[i].substr(relaxed.size()));
      else if (w[i] == "--exact-models")
        out.emplace_back(w[i], "");
      else if (w[i].rfind("--", 0) == 0 && i + 1 < w.size())
        out.emplace_back(w[i], w[i + 1]), ++i;
    }
    break;
  }
  return out;
}
} // namespace

Runner add_reduce(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "reduce", "Shrink a kernel that mismatches on a device while the mismatch persists; print "
                "the smallest one found and the command that shows it");
  auto o = std::make_shared<ReduceCliOptions>();
  o->choice.add_options(*sub);
  sub->add_option("--device,-d", o->device, "The device it mismatches on: cpu, vulkan, interp")
      ->required();
  sub->add_option("--out,-o", o->out,
                  "Write the reduced kernel here (stdout then gets the command)")
      ->type_name("MIN.hk");
  o->grid_option = sub->add_option(
      "--grid", o->grid,
      "Lanes: X, XxY or XxYxZ (multiples of the workgroup size); default: from the file's "
      "`// halfway diff` comment");
  o->inputs_option =
      sub->add_option("--inputs", o->inputs, "Input generator: random, ties, edges, zeros, iota")
          ->capture_default_str();
  o->seed_option =
      sub->add_option("--seed", o->seed, "Seed of the input generator")->capture_default_str();
  sub->add_flag("--exact-models", o->exact_models,
                "Under single rounding, compare by the rounding models (as halfway diff)");
  o->timeout_option =
      sub->add_option("--timeout", o->timeout,
                      "Seconds each launch may take (default: 10; candidates may loop for ever)");
  sub->add_option("--max-attempts", o->max_attempts, "Candidates to run at most")
      ->capture_default_str();
  sub->add_flag("--judge", o->judge,
                "Reduce nothing: print how the campaign judges the kernel now (match, "
                "inconclusive, unsupported, explained: CAUSE or unexplained: CAUSE); exit 1 when "
                "unexplained");
  return [o] {
    kernelgen::RunSetup setup;
    // Options the command line leaves out come from the file's `// halfway diff` comment.
    const text::KernelFile file = o->choice.load_file();
    bool header_single = false, header_relaxed = false;
    std::string header_reason, relaxed_reason;
    for (const auto& [option, value] : header_options(file.text())) {
      if (option == "--grid" && !o->grid_option->count())
        o->grid = value;
      if (option == "--inputs" && !o->inputs_option->count())
        o->inputs = value;
      if (option == "--seed" && !o->seed_option->count())
        o->seed = value;
      if (option == "--exact-models")
        o->exact_models = true;
      if (option == "--accept-single-rounding" && value.size() > 1 && value[0] == '=') {
        header_single = true;
        header_reason = value.substr(value.find(':') + 1);
      }
      if (option == "--accept-relaxed-accumulation" && value.size() > 1 && value[0] == '=') {
        header_relaxed = true;
        relaxed_reason = value.substr(value.find(':') + 1);
      }
    }
    auto kernel = o->choice.load(file);
    ErrorContext ctx;
    ctx.kernel = kernel.name();
    ctx.file = o->choice.file;
    if (header_single && !policy::global_registry().accept_single_rounding(
                             policy::Scope::kernel(kernel.name()), header_reason))
      throw Error(ErrorKind::Usage, "the file's single-rounding opt-in was refused", ctx);
    if (header_relaxed && !policy::global_registry().accept_relaxed_accumulation(
                              policy::Scope::kernel(kernel.name()), relaxed_reason))
      throw Error(ErrorKind::Usage, "the file's relaxed-accumulation opt-in was refused", ctx);
    if (o->grid.empty())
      throw Error(ErrorKind::Usage,
                  "no grid: give --grid LANES (or a file with a `// halfway diff` comment)", ctx);
    // X, XxY or XxYxZ lanes, each a positive multiple of the workgroup's extent.
    std::array<uint32_t, 3> lanes3{1, 1, 1};
    {
      std::vector<std::string> parts;
      std::stringstream in(o->grid);
      for (std::string part; std::getline(in, part, 'x');)
        parts.push_back(part);
      if (parts.empty() || parts.size() > 3)
        throw Error(ErrorKind::Usage,
                    "--grid " + escape_for_terminal(o->grid) + ": write X, XxY or XxYxZ", ctx);
      for (size_t d = 0; d < parts.size(); ++d) {
        const uint64_t n = parse_count(parts[d], "--grid");
        if (n == 0 || n > 0xffffffffu || n % kernel->workgroup[d] != 0)
          throw Error(ErrorKind::Usage,
                      "--grid " + escape_for_terminal(o->grid) +
                          ": give a positive multiple of the workgroup size " +
                          std::to_string(kernel->workgroup[d]) + " below 2^32" +
                          (d ? std::string(" along ") + "xyz"[d] : std::string()),
                      ctx);
        lanes3[d] = static_cast<uint32_t>(n);
      }
    }
    setup.lanes = lanes3[0];
    setup.lanes_y = lanes3[1];
    setup.lanes_z = lanes3[2];
    auto kind = diff::inputs::parse_kind(o->inputs);
    if (!kind)
      throw Error(ErrorKind::Usage,
                  "--inputs " + escape_for_terminal(o->inputs) +
                      ": not one of random, ties, edges, zeros, iota",
                  ctx);
    setup.inputs = *kind;
    setup.input_seed = parse_count(o->seed, "--seed");
    setup.exact_models = o->exact_models;
    setup.single_rounding = policy::budget(kernel.name()).holds(policy::OptIn::SingleRounding);
    setup.relaxed_accumulation =
        policy::budget(kernel.name()).holds(policy::OptIn::RelaxedAccumulation);
    // Candidates may loop for ever (a loop whose exit was deleted): they need a deadline.
    setup.timeout = std::chrono::seconds(10);
    if (o->timeout_option->count())
      setup.timeout = parse_seconds(o->timeout, "--timeout");
    kernelgen::ReduceOptions ro;
    ro.max_attempts = parse_count(o->max_attempts, "--max-attempts");
    if (!o->out.empty())
      check_output_path(o->out, "--out");

    install_interrupt_handler();
    // The checks run in a child process: a device that crashes on the kernel or a candidate is
    // a check that fails ("the device crashed (SIGSEGV)"), so a driver crash can be reduced too.
    CheckProcess checker(o->device);
    const kernelgen::Check first = checker.check(kernel.kernel(), setup);
    if (o->judge) {
      // scripts/fuzz-recheck re-judges a campaign's findings with this.
      const std::string outcome(kernelgen::name(first.outcome));
      Output::get().text(outcome + (first.cause.empty() ? "" : ": " + first.cause) + "\n");
      if (first.outcome == kernelgen::Outcome::Unexplained && !first.report.empty())
        std::cerr << first.report << "\n";
      return first.outcome == kernelgen::Outcome::Unexplained ? 1 : 0;
    }
    if (first.outcome != kernelgen::Outcome::Explained &&
        first.outcome != kernelgen::Outcome::Unexplained)
      throw Error(ErrorKind::Usage,
                  "the kernel does not mismatch on " + o->device + " with these inputs (" +
                      std::string(kernelgen::name(first.outcome)) + "): nothing to reduce",
                  ctx);
    std::cerr << "reduce: " << kernelgen::name(first.outcome) << " (" << first.cause << ") on "
              << o->device << "; " << kernelgen::count_statements(kernel.kernel())
              << " statements\n";
    kernelgen::StillFails still_fails = [&](const ir::VerifiedKernel& k,
                                            const kernelgen::Lanes& n) {
      throw_if_interrupted(kernel.name());
      kernelgen::RunSetup s = setup;
      s.lanes = n[0];
      s.lanes_y = n[1];
      s.lanes_z = n[2];
      // The same failure: an error (or another cause) never stands in for the mismatch.
      const kernelgen::Check c = checker.check(k.kernel(), s);
      return c.outcome == first.outcome &&
             (c.outcome != kernelgen::Outcome::Unexplained || c.cause == first.cause);
    };
    kernelgen::Reduced r = kernelgen::reduce(
        kernel.kernel(), {setup.lanes, setup.lanes_y, setup.lanes_z}, still_fails, ro);
    kernelgen::RunSetup final_setup = setup;
    final_setup.lanes = r.lanes[0];
    final_setup.lanes_y = r.lanes[1];
    final_setup.lanes_z = r.lanes[2];
    const std::string out_file = o->out.empty() ? "MIN.hk" : o->out;
    const std::string cmd =
        kernelgen::diff_command(out_file, kernel.name(), o->device, final_setup);
    std::cerr << "reduce: " << r.statements << " statements (was " << r.statements_before << "), "
              << kernelgen::grid_text(final_setup) << " lanes; " << r.attempts << " candidates run";
    if (checker.crashes())
      std::cerr << "; " << checker.crashes() << " checks crashed the device";
    std::cerr << "\n";
    const std::string text = "// " + std::string(kernelgen::name(first.outcome)) + " on " +
                             o->device + ", reduced by halfway reduce from " + o->choice.file +
                             "\n// " + cmd + "\n" + ir::print(r.kernel);
    if (o->out.empty()) {
      Output::get().text(text);
    } else {
      write_file_atomically(o->out, text);
      Output::get().text(cmd + "\n");
    }
    return 0;
  };
}

} // namespace halfway::cli
