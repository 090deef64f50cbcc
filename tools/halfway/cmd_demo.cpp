// `halfway demo`: the README's main job. Runs every bundled example on every available device,
// compares each with the reference interpreter, and prints one table; then shows the single-
// rounding opt-in at work on the f16 narrowing example.
#include "cli_util.hpp"
#include "commands.hpp"
#include "demo_fusion.hpp"
#include "examples.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/support/error.hpp"
#include "launch_setup.hpp"
#include "workload_inputs.hpp"

#include <cstdio>
#include <iostream>
#include <set>

namespace halfway::cli {

namespace {

namespace in = diff::inputs;

// Inputs sized for each example: the workloads get their demo-sized shaped inputs
// (workload_inputs.hpp: a 128^3 matmul, 512 x 1024 GEMVs, ...), elementwise kernels 2^20 elements
// (tie-stressing where the example narrows).
in::KernelInputs demo_inputs(const Kernel& k) {
  const std::string& name = k.name();
  for (const Kernel& w : examples::workloads()) {
    if (w.name() != name)
      continue;
    examples::WorkloadInputs shaped = examples::workload_inputs(k.kernel(), examples::Scale::Demo);
    in::KernelInputs inputs;
    inputs.grid = shaped.grid;
    for (const auto& p : k->params)
      if (p.is_buffer())
        inputs.buffers.push_back(std::move(shaped.buffers.at(p.name)));
    for (size_t i = 0, slot = 0; i < k->params.size(); ++i)
      inputs.args.push_back(k->params[i].is_buffer()
                                ? rt::Arg::of(inputs.buffers[slot++])
                                : rt::Arg::bits(shaped.scalars.at(k->params[i].name)));
    return inputs;
  }
  bool narrows = !ir::narrowing_sites(k.kernel()).empty();
  std::map<std::string, uint64_t> scalars;
  for (const auto& p : k->params)
    if (!p.is_buffer())
      scalars[p.name] = p.type == ir::ScalarType::F32 ? 0x3fc00000 : 3; // 1.5
  return in::make_inputs(k.kernel(), 1u << 20, narrows ? in::Kind::Ties : in::Kind::Random, 5,
                         scalars);
}

// Adds the float ops of `k` that a Vulkan device may compute less accurately than the
// interpreter (op table: neither exact nor correctly rounded on Vulkan) to `ops`.
void add_inexact_on_vulkan(const ir::Kernel& k, std::set<std::string_view>& ops) {
  for (const auto& e : k.exprs) {
    const ir::OpInfo& o = ir::info(e.op);
    if (ir::is_float(e.type) && !o.device_precision.starts_with("exact") &&
        !o.device_precision.starts_with("correctly rounded"))
      ops.insert(o.name);
  }
}

std::string joined(const std::set<std::string_view>& ops) {
  std::string out;
  for (auto op : ops)
    out += (out.empty() ? "" : ", ") + std::string(op);
  return out;
}

struct Row {
  std::string kernel, device;
  uint64_t elements = 0, exact = 0, within = 0, violations = 0, max_ulps = 0;
  double ms = 0;
  std::string note;
  // Judged by the device's documented math precision (diff.hpp): elements inside their
  // propagated interval, and elements and lanes the intervals could not decide.
  bool intervals = false;
  uint64_t in_interval = 0, undecided = 0;
};

Row compare(const Kernel& k, rt::Device& device, const policy::Registry& registry,
            const rt::LaunchOptions& launch) {
  auto inputs = demo_inputs(k);
  diff::Options o;
  o.registry = &registry;
  o.launch = launch;
  diff::Report report;
  {
    LaunchWatch watch(k.name(),
                      "the reference run and the launch on " + device.name() + " (--timeout each)",
                      2 * launch.timeout);
    report = diff::run(k, device, inputs.grid, inputs.args, o);
    watch.check();
  }
  Row r{k.name(), device.name()};
  for (const auto& b : report.buffers) {
    r.elements += b.size;
    r.exact += b.exact;
    r.within += b.within_bound;
    r.violations += b.violations;
    r.max_ulps = std::max(r.max_ulps, b.max_ulps);
    r.in_interval += b.within_interval;
    r.undecided += b.undecided;
  }
  r.intervals = report.intervals;
  r.undecided += report.undecided_lanes;
  return r;
}

std::string format(const char* fmt, auto... args) {
  int n = std::snprintf(nullptr, 0, fmt, args...);
  std::string s(static_cast<size_t>(n > 0 ? n : 0), '\0');
  std::snprintf(s.data(), s.size() + 1, fmt, args...);
  return s;
}

std::string rows_text(const std::vector<Row>& rows) {
  std::string out =
      format("%-16s %-34s %9s %9s %8s %8s %9s %10s %8s %9s\n", "kernel", "device", "elements",
             "exact", "in bound", "in intvl", "undecided", "violations", "max ulp", "ms (both)");
  for (const Row& r : rows) {
    std::string ulps = r.max_ulps == UINT64_MAX ? "NaN" : std::to_string(r.max_ulps);
    if (!r.note.empty()) {
      out += format("%-16s %-34s %s\n", r.kernel.c_str(), r.device.c_str(), r.note.c_str());
      continue;
    }
    // "-": the device's math is correctly rounded there, so no interval was used.
    std::string in_interval = r.intervals ? std::to_string(r.in_interval) : "-";
    std::string undecided = r.intervals ? std::to_string(r.undecided) : "-";
    out += format("%-16s %-34.34s %9llu %9llu %8llu %8s %9s %10llu %8s %9.2f\n", r.kernel.c_str(),
                  r.device.c_str(), (unsigned long long)r.elements, (unsigned long long)r.exact,
                  (unsigned long long)r.within, in_interval.c_str(), undecided.c_str(),
                  (unsigned long long)r.violations, ulps.c_str(), r.ms);
  }
  return out;
}

} // namespace

Runner add_demo(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "Run the bundled example kernels on every device and "
                                         "compare them with the reference interpreter");
  struct DemoOptions {
    bool show_ir = false;
    std::string timeout;
    const CLI::Option* timeout_option = nullptr;
  };
  auto o = std::make_shared<DemoOptions>();
  sub->add_flag("--ir", o->show_ir, "Also print each example's IR and narrowing sites");
  o->timeout_option =
      sub->add_option("--timeout", o->timeout,
                      "Seconds each launch may take (reference runs included); past it the demo "
                      "fails with a timeout error, exit 2")
          ->type_name("SECONDS");
  return [o] {
    rt::LaunchOptions launch;
    if (o->timeout_option->count() > 0)
      launch.timeout = parse_seconds(o->timeout, "--timeout");
    launch.cancel = install_interrupt_handler();
    Output& out = Output::get();
    auto kernels = examples::all();
    if (o->show_ir)
      for (const auto& k : kernels)
        out.text(ir::print(k.kernel()) + ir::describe_sites(k.kernel()) + "\n");

    policy::Registry strict; // no opt-ins: every comparison is bit for bit
    std::vector<std::unique_ptr<rt::Device>> devices;
    std::vector<Row> rows;
    for (const auto& name : rt::device_names()) {
      try {
        devices.push_back(rt::make_device(name, &strict));
      } catch (const Error& e) {
        rows.push_back({"(all)", name, 0, 0, 0, 0, 0, 0, std::string("unavailable: ") + e.what(),
                        false, 0, 0});
      }
    }
    out.text(
        "halfway demo: " + std::to_string(kernels.size()) + " example kernels on " +
        std::to_string(devices.size()) +
        " devices, each compared with the reference interpreter (two-step rounding)\n"
        "No opt-in holds, so every element must match bit for bit, except on rows marked *.\n\n");
    bool ok = true;
    std::set<std::string_view> judged_ops; // the inexact ops of the rows judged by intervals
    for (const auto& k : kernels) {
      for (size_t di = 0; di < devices.size(); ++di) {
        auto& d = devices[di];
        if (progress_enabled())
          std::cerr << escape_for_terminal(k.name()) << " on " << escape_for_terminal(d->name())
                    << "...\r" << std::flush;
        auto t0 = std::chrono::steady_clock::now();
        Row r = compare(k, *d, strict, launch);
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                   .count();
        // Vulkan's exp, rsqrt and div need not be correctly rounded (the op table's device
        // precision): the checker judges those rows by the intervals the documented precision
        // propagates to, and an undecided element proves nothing, so it fails the demo too.
        if (r.intervals) {
          r.kernel += "*";
          add_inexact_on_vulkan(k.kernel(), judged_ops);
        }
        ok = ok && r.violations == 0 && r.undecided == 0;
        rows.push_back(r);
      }
    }
    if (progress_enabled())
      std::cerr << std::string(70, ' ') << "\r";
    out.text(rows_text(rows));
    if (!judged_ops.empty())
      out.text("* judged by the device's documented precision: uses " + joined(judged_ops) +
               ", which it does not round\n  correctly (`halfway ops`); an element that differs "
               "must lie in the interval their documented\n  errors propagate to (in intvl). "
               "undecided: elements or lanes the intervals could not decide;\n  any fails the "
               "demo.\n");

    // The opt-in: the same narrowing kernel, single rounding accepted for it alone.
    policy::Registry relaxed;
    auto accepted =
        relaxed.accept_single_rounding(policy::Scope::kernel("narrow_f16"),
                                       "demo: f16 output only feeds a display, 1 ulp is fine");
    (void)accepted;
    std::vector<Row> opt_rows;
    for (const auto& name : rt::device_names()) {
      if (name == "interp")
        continue;
      std::unique_ptr<rt::Device> d;
      try {
        d = rt::make_device(name, &relaxed);
      } catch (const Error& e) {
        opt_rows.push_back({"narrow_f16", name, 0, 0, 0, 0, 0, 0,
                            std::string("unavailable: ") + e.what(), false, 0, 0});
        continue;
      }
      auto t0 = std::chrono::steady_clock::now();
      Row r = compare(examples::narrow_f16(), *d, relaxed, launch);
      r.ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      ok = ok && r.violations == 0;
      opt_rows.push_back(r);
    }
    if (!opt_rows.empty())
      out.text("\nWith accept_single_rounding(kernel \"narrow_f16\", reason): barriers lifted; "
               "devices that fuse may differ within 1 f16 ulp + |a*b|*2^-24 per element.\n\n" +
               rows_text(opt_rows));
    out.text(demo_fusion(launch, ok));
    out.text(std::string("\n") +
             (ok ? "All comparisons hold." : "VIOLATIONS found: see the table.") + "\n");
    return ok ? 0 : 1;
  };
}

} // namespace halfway::cli
