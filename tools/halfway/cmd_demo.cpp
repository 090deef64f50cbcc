// `halfway demo`: the README's main job. Runs every bundled example on every available device,
// compares each with the reference interpreter, and prints one table; then shows the single-
// rounding opt-in at work on the f16 narrowing example.
#include "commands.hpp"
#include "examples.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/ir/error.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/policy/registry.hpp"
#include "launch_setup.hpp"

#include <cstdio>
#include <iostream>
#include <random>

namespace halfway::cli {

namespace {

namespace in = diff::inputs;

// Inputs sized for each example: elementwise kernels get 2^20 elements (tie-stressing where the
// example narrows), the GEMV a 512 x 1024 matrix of valid fp8 weights.
in::KernelInputs demo_inputs(const Kernel& k) {
  const std::string& name = k.name();
  if (name.rfind("gemv_fp8", 0) == 0) {
    const uint32_t rows = 512, cols = 1024;
    bool e4m3 = name.find("e4m3") != std::string::npos;
    auto inputs = in::make_inputs(k.kernel(), rows, in::Kind::Random, 7, {{"cols", cols}});
    rt::HostBuffer w(ir::ScalarType::U32, rows * cols / 4);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    for (size_t i = 0; i < w.size(); ++i) {
      uint64_t word = 0;
      for (int lane = 0; lane < 4; ++lane) {
        uint32_t bits = std::bit_cast<uint32_t>(value(rng));
        uint64_t b8 = e4m3 ? num::f32_to_e4m3(bits) : num::f32_to_e5m2(bits);
        word |= b8 << (8 * lane);
      }
      w.set_bits(i, word);
    }
    rt::HostBuffer x(ir::ScalarType::F32, cols);
    in::fill_random(x, 13);
    inputs.buffers[0] = std::move(w);
    inputs.buffers[1] = std::move(x);
    for (size_t i = 0, slot = 0; i < k->params.size(); ++i)
      if (k->params[i].is_buffer())
        inputs.args[i] = rt::Arg::of(inputs.buffers[slot++]);
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

struct Row {
  std::string kernel, device;
  uint64_t elements = 0, exact = 0, within = 0, violations = 0, max_ulps = 0;
  double ms = 0;
  std::string note;
};

Row compare(const Kernel& k, rt::Device& device, const policy::Registry& registry) {
  auto inputs = demo_inputs(k);
  diff::Options o;
  o.registry = &registry;
  auto report = diff::run(k, device, inputs.grid, inputs.args, o);
  Row r{k.name(), device.name()};
  for (const auto& b : report.buffers) {
    r.elements += b.size;
    r.exact += b.exact;
    r.within += b.within_bound;
    r.violations += b.violations;
    r.max_ulps = std::max(r.max_ulps, b.max_ulps);
  }
  return r;
}

void print_rows(const std::vector<Row>& rows) {
  std::printf("%-16s %-34s %9s %9s %8s %10s %8s %9s\n", "kernel", "device", "elements", "exact",
              "in bound", "violations", "max ulp", "ms (both)");
  for (const Row& r : rows) {
    std::string ulps = r.max_ulps == UINT64_MAX ? "NaN" : std::to_string(r.max_ulps);
    if (!r.note.empty()) {
      std::printf("%-16s %-34s %s\n", r.kernel.c_str(), r.device.c_str(), r.note.c_str());
      continue;
    }
    std::printf("%-16s %-34.34s %9llu %9llu %8llu %10llu %8s %9.2f\n", r.kernel.c_str(),
                r.device.c_str(), (unsigned long long)r.elements, (unsigned long long)r.exact,
                (unsigned long long)r.within, (unsigned long long)r.violations, ulps.c_str(), r.ms);
  }
}

} // namespace

Runner add_demo(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "Run the bundled example kernels on every device and "
                                         "compare them with the reference interpreter");
  auto show_ir = std::make_shared<bool>(false);
  sub->add_flag("--ir", *show_ir, "Also print each example's IR and narrowing sites");
  return [show_ir] {
    auto kernels = examples::all();
    if (*show_ir)
      for (const auto& k : kernels)
        std::cout << ir::print(k.kernel()) << ir::describe_sites(k.kernel()) << "\n";

    policy::Registry strict; // no opt-ins: every comparison is bit for bit
    std::vector<std::unique_ptr<rt::Device>> devices;
    std::vector<Row> rows;
    for (const auto& name : rt::device_names()) {
      try {
        devices.push_back(rt::make_device(name, &strict));
      } catch (const Error& e) {
        rows.push_back({"(all)", name, 0, 0, 0, 0, 0, 0, std::string("unavailable: ") + e.what()});
      }
    }
    std::cout << "halfway demo: " << kernels.size() << " example kernels on " << devices.size()
              << " devices, each compared with the reference interpreter (two-step rounding)\n"
              << "No opt-in holds, so every element must match bit for bit.\n\n";
    bool ok = true;
    for (const auto& k : kernels) {
      for (auto& d : devices) {
        if (progress_enabled())
          std::cerr << k.name() << " on " << d->name() << "...\r" << std::flush;
        auto t0 = std::chrono::steady_clock::now();
        Row r = compare(k, *d, strict);
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                   .count();
        ok = ok && r.violations == 0;
        rows.push_back(r);
      }
    }
    if (progress_enabled())
      std::cerr << std::string(70, ' ') << "\r";
    print_rows(rows);

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
      try {
        auto d = rt::make_device(name, &relaxed);
        auto t0 = std::chrono::steady_clock::now();
        Row r = compare(examples::narrow_f16(), *d, relaxed);
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                   .count();
        ok = ok && r.violations == 0;
        opt_rows.push_back(r);
      } catch (const Error& e) {
        opt_rows.push_back(
            {"narrow_f16", name, 0, 0, 0, 0, 0, 0, std::string("unavailable: ") + e.what()});
      }
    }
    if (!opt_rows.empty()) {
      std::cout << "\nWith accept_single_rounding(kernel \"narrow_f16\", reason): barriers lifted; "
                   "devices that fuse may differ within 1 f16 ulp + |a*b|*2^-24 per element.\n\n";
      print_rows(opt_rows);
    }
    std::cout << "\n"
              << (ok ? "All comparisons hold." : "VIOLATIONS found: see the table.") << "\n";
    return ok ? 0 : 1;
  };
}

} // namespace halfway::cli
