#include "launch_setup.hpp"

#include "halfway/ir/error.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/policy/flag.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/text/kernel_file.hpp"
#include "npy.hpp"

#include <charconv>
#include <cmath>
#include <unistd.h>

namespace halfway::cli {

namespace {

[[noreturn]] void usage(const std::string& kernel, const std::string& message) {
  ErrorContext c;
  c.kernel = kernel;
  throw Error(ErrorKind::Usage, message, c);
}

std::pair<std::string, std::string> split_assignment(const std::string& kernel, const std::string& s,
                                                     const char* option) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    usage(kernel, std::string(option) + " '" + s + "' is not NAME=VALUE");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

uint32_t param_index(const ir::Kernel& k, const std::string& name, const char* option) {
  uint32_t i = k.find_param(name);
  if (i == ir::kNone) {
    std::string known;
    for (const auto& p : k.params) known += (known.empty() ? "" : ", ") + p.name;
    usage(k.name, std::string(option) + " names '" + name + "', which is not a parameter; the "
                                        "kernel has " + known);
  }
  return i;
}

// A scalar argument's bit pattern from its text, in the parameter's type.
uint64_t scalar_bits(const ir::Kernel& k, const ir::Param& p, const std::string& text) {
  auto wrong = [&](const std::string& why) -> uint64_t {
    usage(k.name, "--arg " + p.name + "=" + text + ": " + why + " (" + p.name + " is " +
                      std::string(ir::name(p.type)) + ")");
  };
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (text.empty()) return wrong("empty value");
  if (ir::is_float(p.type)) {
    double v;
    if (text == "inf" || text == "+inf") v = HUGE_VAL;
    else if (text == "-inf") v = -HUGE_VAL;
    else if (text == "nan") v = std::nan("");
    else {
      auto r = std::from_chars(first, last, v);
      if (r.ec != std::errc() || r.ptr != last) return wrong("not a number");
    }
    return num::from_double(ir::format_of(p.type), v);
  }
  if (p.type == ir::ScalarType::Bool) {
    if (text == "true" || text == "1") return 1;
    if (text == "false" || text == "0") return 0;
    return wrong("not true or false");
  }
  const auto& info = ir::info(p.type);
  if (info.is_signed) {
    int64_t v;
    auto r = std::from_chars(first, last, v);
    if (r.ec != std::errc() || r.ptr != last) return wrong("not an integer");
    if (info.bits < 64 && (v < -(int64_t{1} << (info.bits - 1)) || v >= (int64_t{1} << (info.bits - 1))))
      return wrong("out of range");
    return ir::truncate_bits(p.type, static_cast<uint64_t>(v));
  }
  uint64_t v;
  auto r = std::from_chars(first, last, v);
  if (r.ec != std::errc() || r.ptr != last) return wrong("not a non-negative integer");
  if (info.bits < 64 && v >> info.bits) return wrong("out of range");
  return v;
}

} // namespace

void KernelChoice::add_options(CLI::App& sub) {
  sub.add_option("file", file, "A .hk kernel file")->required();
  sub.add_option("--kernel,-k", kernel, "The kernel to use (default: the file's only kernel)");
}

ir::VerifiedKernel KernelChoice::load() const {
  text::KernelFile f = text::parse_file(file);
  if (!kernel.empty()) return f.verify(kernel);
  if (f.kernels().size() != 1) {
    std::string names;
    for (const auto& n : f.kernel_names()) names += (names.empty() ? "" : ", ") + n;
    ErrorContext c;
    c.file = file;
    throw Error(ErrorKind::Usage, "the file holds several kernels (" + names + "); pick one with --kernel", c);
  }
  return f.verify(size_t{0});
}

void LaunchSetup::add_options(CLI::App& sub) {
  sub.add_option("--grid", grid, "Lanes along x (rounded up to whole workgroups)");
  sub.add_option("--groups", groups, "Workgroups along x (instead of --grid)");
  sub.add_option("--buffer,-b", buffers,
                 "NAME=SPEC: SPEC is random[:N], zeros[:N], iota[:N] or a file (.npy or raw "
                 "little-endian); N defaults to the grid's lanes");
  sub.add_option("--arg,-a", args, "NAME=VALUE for a scalar parameter");
  sub.add_option("--inputs", inputs, "Generator for buffers not given: random, ties, edges, zeros, iota")
      ->capture_default_str();
  sub.add_option("--seed", seed, "Seed of the random generators")->capture_default_str();
  sub.add_flag("--check", check, "Bounds checking on devices that support it");
  sub.add_flag("--deterministic", deterministic, "One thread, workgroups in order");
  sub.add_option("--threads", threads, "Worker threads (0: all cores)");
}

diff::inputs::KernelInputs LaunchSetup::make(const ir::Kernel& k) const {
  namespace in = diff::inputs;
  if (grid && groups) usage(k.name, "give --grid or --groups, not both");
  uint64_t lanes = groups ? groups * k.workgroup[0] : grid;
  if (!lanes) usage(k.name, "no grid: give --grid LANES or --groups N");
  auto kind = in::parse_kind(inputs);
  if (!kind) usage(k.name, "--inputs " + inputs + ": not one of random, ties, edges, zeros, iota");

  std::map<std::string, uint64_t> scalars;
  for (const auto& a : args) {
    auto [name, value] = split_assignment(k.name, a, "--arg");
    const ir::Param& p = k.params[param_index(k, name, "--arg")];
    if (p.is_buffer()) usage(k.name, "--arg " + name + ": " + name + " is a buffer; use --buffer");
    scalars[name] = scalar_bits(k, p, value);
  }
  for (const auto& p : k.params)
    if (!p.is_buffer() && !scalars.count(p.name))
      usage(k.name, "scalar parameter " + p.name + " (" + std::string(ir::name(p.type)) +
                        ") has no value; give --arg " + p.name + "=VALUE");

  in::KernelInputs result = in::make_inputs(k, lanes, *kind, seed, scalars);
  if (groups) result.grid = rt::Grid{{static_cast<uint32_t>(groups), 1, 1}};

  // Per-buffer overrides. Buffers are stored in parameter order among buffer parameters.
  for (const auto& b : buffers) {
    auto [name, spec] = split_assignment(k.name, b, "--buffer");
    uint32_t pi = param_index(k, name, "--buffer");
    const ir::Param& p = k.params[pi];
    if (!p.is_buffer()) usage(k.name, "--buffer " + name + ": " + name + " is a scalar; use --arg");
    size_t slot = 0;
    for (uint32_t i = 0; i < pi; ++i) slot += k.params[i].is_buffer();
    rt::HostBuffer& target = result.buffers[slot];
    std::string gen = spec, count;
    if (auto colon = spec.find(':'); colon != std::string::npos && colon > 0 &&
                                    (spec.rfind("random", 0) == 0 || spec.rfind("zeros", 0) == 0 ||
                                     spec.rfind("iota", 0) == 0)) {
      gen = spec.substr(0, colon);
      count = spec.substr(colon + 1);
    }
    size_t n = lanes;
    if (!count.empty()) {
      auto r = std::from_chars(count.data(), count.data() + count.size(), n);
      if (r.ec != std::errc() || r.ptr != count.data() + count.size())
        usage(k.name, "--buffer " + b + ": size '" + count + "' is not a number");
    }
    if (gen == "random" || gen == "zeros" || gen == "iota") {
      target = rt::HostBuffer(p.type, n);
      if (gen == "random") in::fill_random(target, seed * 1000003 + pi);
      if (gen == "iota") in::fill_iota(target);
    } else {
      target = load_buffer(spec, p.type);
    }
  }
  for (size_t i = 0, slot = 0; i < k.params.size(); ++i) {
    if (k.params[i].is_buffer()) result.args[i] = rt::Arg::of(result.buffers[slot++]);
  }
  rt::check_args(k, result.grid, result.args);
  return result;
}

rt::LaunchOptions LaunchSetup::launch_options() const {
  rt::LaunchOptions o;
  o.check_bounds = check;
  o.deterministic = deterministic;
  o.threads = threads;
  return o;
}

void check_grid(const ir::Kernel& k, const rt::Grid& grid, const rt::DeviceInfo& device) {
  for (int d = 0; d < 3; ++d)
    if (grid.groups[d] > device.max_groups[d])
      usage(k.name, "grid of " + std::to_string(grid.groups[d]) + " workgroups along " +
                        "xyz"[d] + " exceeds device " + device.name + "'s limit of " +
                        std::to_string(device.max_groups[d]));
}

void apply_opt_in_flags(std::vector<std::string>& args) {
  std::vector<std::string> rest;
  for (auto& a : args) {
    if (!policy::is_opt_in_flag(a)) {
      rest.push_back(a);
      continue;
    }
    auto parsed = policy::parse_opt_in_flag(a);
    if (!parsed.flag) throw Error(ErrorKind::Usage, a + ": " + parsed.error);
    auto outcome = policy::accept(parsed.flag->kind, parsed.flag->scope, parsed.flag->reason);
    if (!outcome.ok())
      throw Error(ErrorKind::Usage, a + ": refused: " + policy::refusal_message(outcome.error()));
  }
  args = std::move(rest);
}

bool progress_enabled() { return isatty(2) == 1; }

} // namespace halfway::cli
