#include "launch_setup.hpp"

#include "cli_util.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/io/npy.hpp"
#include "halfway/io/read.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/pipeline/text.hpp"
#include "halfway/policy/flag.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"
#include "halfway/text/parse.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace halfway::cli {

namespace {

[[noreturn]] void usage(const std::string& kernel, const std::string& message) {
  ErrorContext c;
  c.kernel = kernel;
  throw Error(ErrorKind::Usage, message, c);
}

std::pair<std::string, std::string> split_assignment(const std::string& kernel,
                                                     const std::string& s, const char* option) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    usage(kernel, std::string(option) + " '" + escape_for_terminal(s) + "' is not NAME=VALUE");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

uint32_t param_index(const ir::Kernel& k, const std::string& name, const char* option) {
  uint32_t i = k.find_param(name);
  if (i == ir::kNone) {
    std::string known;
    for (const auto& p : k.params)
      known += (known.empty() ? "" : ", ") + p.name;
    usage(k.name, std::string(option) + " names '" + escape_for_terminal(name) +
                      "', which is not a parameter; the "
                      "kernel has " +
                      known);
  }
  return i;
}

// A scalar argument's bit pattern from its text, in the parameter's type. Float values follow
// the text form's rule for constants: f32 and narrower are read through float, f64 through
// double, and the value must then be exactly one value of the parameter's type, so that
// --arg h=70000 (past f16's range) or h=0.1 (between two f16 values) is refused as 70000:f16 and
// 0.1:f16 are in a .hk file.
uint64_t scalar_bits(const ir::Kernel& k, const ir::Param& p, const std::string& text) {
  auto wrong = [&](const std::string& why) -> uint64_t {
    usage(k.name, "--arg " + p.name + "=" + escape_for_terminal(text) + ": " + why + " (" + p.name +
                      " is " + std::string(ir::name(p.type)) + ")");
  };
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const std::string tname(ir::name(p.type));
  if (text.empty())
    return wrong("empty value");
  if (ir::is_float(p.type)) {
    const num::Format fmt = ir::format_of(p.type);
    if (text == "nan")
      return num::from_double(fmt, std::nan(""));
    if (text == "inf" || text == "+inf" || text == "-inf") {
      if (p.type == ir::ScalarType::E4M3)
        return wrong("e4m3 has no infinity");
      return num::from_double(fmt, text[0] == '-' ? -HUGE_VAL : HUGE_VAL);
    }
    if (text.find_first_not_of("0123456789+-.eE") != std::string::npos)
      return wrong("not a number");
    double v;
    if (p.type == ir::ScalarType::F64) {
      auto r = std::from_chars(first, last, v);
      if (r.ec == std::errc::result_out_of_range || (r.ec == std::errc() && std::isinf(v)))
        return wrong("out of range for f64");
      if (r.ec != std::errc() || r.ptr != last)
        return wrong("not a number");
    } else {
      float f;
      auto r = std::from_chars(first, last, f);
      if (r.ec == std::errc::result_out_of_range || (r.ec == std::errc() && std::isinf(f)))
        return wrong(p.type == ir::ScalarType::F32 ? "out of range for f32"
                                                   : "out of range for f32, and so for " + tname);
      if (r.ec != std::errc() || r.ptr != last)
        return wrong("not a number");
      v = f;
    }
    uint64_t bits = 0;
    if (ir::exact_bits(p.type, v, bits))
      return bits;
    return wrong(diff::inexact_reason(p.type, v));
  }
  if (p.type == ir::ScalarType::Bool) {
    if (text == "true" || text == "1")
      return 1;
    if (text == "false" || text == "0")
      return 0;
    return wrong("not true or false");
  }
  const auto& info = ir::info(p.type);
  if (info.is_signed) {
    int64_t v;
    auto r = std::from_chars(first, last, v);
    if (r.ec == std::errc::result_out_of_range)
      return wrong("out of range");
    if (r.ec != std::errc() || r.ptr != last)
      return wrong("not an integer");
    if (info.bits < 64 &&
        (v < -(int64_t{1} << (info.bits - 1)) || v >= (int64_t{1} << (info.bits - 1))))
      return wrong("out of range");
    return ir::truncate_bits(p.type, static_cast<uint64_t>(v));
  }
  if (text[0] == '-')
    return wrong("negative, and " + tname + " is unsigned");
  uint64_t v;
  auto r = std::from_chars(first, last, v);
  if (r.ec == std::errc::result_out_of_range)
    return wrong("out of range");
  if (r.ec != std::errc() || r.ptr != last)
    return wrong("not a non-negative integer");
  if (info.bits < 64 && v >> info.bits)
    return wrong("out of range");
  return v;
}

std::string single_quoted(const std::string& s) {
  return "'" + escape_for_terminal(s) + "'";
}

// A generator's size after the colon: "N" elements, or a shape "AxB[xC...]" whose product is the
// element count and which a dump of the buffer keeps.
std::vector<uint64_t> parse_shape(const std::string& kernel, const std::string& text,
                                  const std::string& option) {
  if (text.find('x') == std::string::npos)
    return {parse_count(text, option)};
  std::vector<uint64_t> dims;
  uint64_t product = 1;
  for (size_t start = 0;;) {
    size_t end = text.find('x', start);
    std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      usage(kernel, option + escape_for_terminal(text) +
                        ": expected N or a shape AxB[xC...], each a decimal integer");
    dims.push_back(parse_count(part, option));
    auto p = checked_mul(product, dims.back());
    if (!p)
      usage(kernel, option + escape_for_terminal(text) + ": more than 2^64 elements");
    product = *p;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return dims;
}

// A .npy file's buffer for parameter `p`: its errors name the kernel and the buffer besides the
// file, and how a dtype NumPy lacks was read (ml_dtypes' '<V2', a '>' file) is said on stderr.
io::Array load_buffer_file(const ir::Kernel& k, const ir::Param& p, const std::string& file) {
  try {
    io::Array a;
    if (file == "-") {
      const uint64_t memory = physical_memory_bytes();
      a = io::parse_npy(io::read_stream(STDIN_FILENO, "<stdin>", ".npy data",
                                        memory ? memory : ~uint64_t{0}, "this machine's memory",
                                        [] { throw_if_interrupted(""); }),
                        p.type, "<stdin>");
    } else {
      a = io::load(file, p.type);
    }
    if (!a.note.empty())
      spdlog::info("{} (buffer {}): {}", escape_for_terminal(file == "-" ? "<stdin>" : file),
                   escape_for_terminal(p.name), a.note);
    return a;
  } catch (const Error& e) {
    ErrorContext c = e.context();
    c.kernel = k.name;
    c.buffer = p.name;
    throw Error(e.kind(), e.message(), c);
  }
}

} // namespace

void claim_stdin(const std::string& what) {
  static std::string claimed;
  if (!claimed.empty() && claimed != what)
    usage("", what + ": standard input is already read as " + claimed +
                  "; only one input of a command can come from standard input");
  claimed = what;
}

void OptInFlags::add_options(CLI::App& sub) {
  sub.add_option("--accept-single-rounding", single,
                 "Opt in to single rounding for KERNEL (default: every kernel of the file) with "
                 "REASON, written as one argument: --accept-single-rounding=narrow_f16:'f16 "
                 "output feeds a display'. KERNEL must be a kernel of the file")
      ->type_name("[=KERNEL]:REASON");
  sub.add_option("--accept-relaxed-accumulation", relaxed,
                 "Opt in to relaxed accumulation for KERNEL (default: every kernel of the file) "
                 "with REASON, written as one argument like --accept-single-rounding")
      ->type_name("[=KERNEL]:REASON");
}

void OptInFlags::apply(const text::KernelFile& file) const {
  auto one = [&](const char* name, const std::string& rest) {
    std::string arg = name + rest;
    std::string shown = escape_for_terminal(arg);
    auto parsed = policy::parse_opt_in_flag(arg);
    ErrorContext c;
    c.file = file.file_name();
    if (!parsed.flag)
      throw Error(ErrorKind::Usage, shown + ": " + parsed.error, c);
    const policy::OptInFlag& f = *parsed.flag;
    for (unsigned char ch : f.reason)
      if (ch < 0x20 || ch == 0x7f)
        throw Error(ErrorKind::Usage, shown + ": the reason holds a control character", c);
    if (!f.scope.is_all_kernels()) {
      auto names = file.kernel_names();
      // A fused kernel's parts (specs/fusion.md) are what an opt-in for it names.
      for (const auto& n : file.kernel_names()) {
        for (auto& part : pipeline::fused_parts(n).value_or(std::vector<std::string>{}))
          names.push_back(std::move(part));
      }
      if (std::find(names.begin(), names.end(), f.scope.kernel_name()) == names.end()) {
        std::string known;
        for (const auto& n : names)
          known += (known.empty() ? "" : ", ") + escape_for_terminal(n);
        throw Error(ErrorKind::Usage,
                    shown + ": the file has no kernel " + single_quoted(f.scope.kernel_name()) +
                        " (it has " + known + "), so this opt-in would cover nothing",
                    c);
      }
    }
    auto outcome = policy::accept(f.kind, f.scope, f.reason);
    if (!outcome.ok())
      throw Error(ErrorKind::Usage,
                  shown + ": refused: " + policy::refusal_message(outcome.error()), c);
  };
  for (const auto& r : single)
    one("--accept-single-rounding", r);
  for (const auto& r : relaxed)
    one("--accept-relaxed-accumulation", r);
}

void KernelChoice::add_options(CLI::App& sub, bool optional_kernel) {
  sub.add_option("file", file, "A .hk kernel file (- reads standard input)")->required();
  sub.add_option("--kernel,-k", kernel,
                 optional_kernel ? "Only this kernel"
                                 : "The kernel to use (default: the file's only kernel)");
  opt_ins.add_options(sub);
}

namespace {

// `-` as the kernel file: the text comes from standard input (a pipe or a redirection), with the
// same 16 MiB cap as a file, read in chunks so that an endless pipe is refused rather than held.
text::KernelFile read_stdin_kernel_file() {
  claim_stdin("the kernel file -");
  // Ctrl-C while waiting for input ends the command; other signals: read on.
  std::string text = io::read_stream(STDIN_FILENO, "<stdin>", "kernel text", text::kMaxTextBytes,
                                     "16 MiB", [] { throw_if_interrupted(""); });
  return text::KernelFile(std::move(text), "<stdin>");
}

} // namespace

text::KernelFile KernelChoice::load_file() const {
  text::KernelFile f = file == "-" ? read_stdin_kernel_file() : text::parse_file(file);
  // Kernels named fused(a+b) (as `halfway fuse` prints them) are read through their parts by every
  // command, so that an opt-in naming the fused name covers nothing (specs/fusion.md).
  pipeline::register_fused_names(f.kernel_names(), nullptr);
  opt_ins.apply(f);
  return f;
}

ir::VerifiedKernel KernelChoice::load() const {
  return load(load_file());
}

ir::VerifiedKernel KernelChoice::load(const text::KernelFile& f) const {
  if (!kernel.empty())
    return f.verify(kernel);
  if (f.kernels().size() != 1) {
    std::string names;
    for (const auto& n : f.kernel_names())
      names += (names.empty() ? "" : ", ") + n;
    ErrorContext c;
    c.file = file;
    if (names.empty())
      throw Error(ErrorKind::Usage, "the file holds no kernel", c);
    throw Error(ErrorKind::Usage,
                "the file holds several kernels (" + names + "); pick one with --kernel", c);
  }
  return f.verify(size_t{0});
}

namespace {

// "N", "XxY" or "XxYxZ": a size per dimension, the missing ones 1. A single number keeps its old
// checks and messages (parse_count); in the 2-D and 3-D forms every size is at least 1.
std::array<uint64_t, 3> parse_dims(const std::string& kernel, const std::string& text,
                                   const std::string& option) {
  std::array<uint64_t, 3> out{1, 1, 1};
  if (text.find('x') == std::string::npos) {
    out[0] = parse_count(text, option);
    return out;
  }
  const std::string shown = option + " " + escape_for_terminal(text);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t end = text.find('x', start);
    parts.push_back(text.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  if (parts.size() > 3)
    usage(kernel, shown + ": at most three sizes (X, XxY or XxYxZ)");
  for (size_t d = 0; d < parts.size(); ++d) {
    const std::string& p = parts[d];
    if (p.empty() || p.find_first_not_of("0123456789") != std::string::npos)
      usage(kernel, shown + ": expected X, XxY or XxYxZ, each a decimal integer");
    auto r = std::from_chars(p.data(), p.data() + p.size(), out[d]);
    if (r.ec != std::errc())
      usage(kernel, shown + ": " + p + " is too large");
    if (out[d] == 0)
      usage(kernel, shown + ": every size is at least 1 (the size along " + "xyz"[d] + " is 0)");
  }
  return out;
}

} // namespace

void LaunchSetup::add_options(CLI::App& sub) {
  grid_option = sub.add_option("--grid", grid,
                               "Lanes: N along x, or XxY or XxYxZ; rounded up to whole "
                               "workgroups in each dimension")
                    ->type_name("LANES");
  groups_option = sub.add_option("--groups", groups,
                                 "Workgroups (instead of --grid): N along x, or XxY or XxYxZ")
                      ->type_name("N");
  sub.add_option("--buffer,-b", buffers,
                 "NAME=SPEC: SPEC is random[:N], zeros[:N], iota[:N] or a file (.npy or raw "
                 "little-endian; - reads a .npy file from standard input); N defaults to the "
                 "grid's lanes, and a shape AxB[xC...] gives its product, kept by --dump");
  sub.add_option("--arg,-a", args,
                 "NAME=VALUE for a scalar parameter; a float value must be exactly a value of "
                 "the parameter's type (as constants in .hk files)");
  sub.add_option("--inputs", inputs,
                 "Generator for buffers not given: random, ties, edges, zeros, iota; or "
                 "sweep[:BUFFER]: BUFFER (default: the only f16, bf16 or fp8 input, or u32 words "
                 "unpacked as such) holds every code of its type once per lane, 65536 or 256 "
                 "elements, the grid as many lanes, the other buffers random")
      ->capture_default_str();
  sub.add_option("--seed", seed, "Seed of the random generators")->capture_default_str();
  sub.add_flag("--check", check,
               "Add the checks that cost time: integer division by zero and shift overflow on "
               "the cpu and vulkan devices (out-of-bounds accesses are an error on every device "
               "without it; shared-memory races are checked by the interpreter only, which "
               "always checks everything)");
  sub.add_flag("--deterministic", deterministic, "One thread, workgroups in order");
  sub.add_option("--threads", threads, "Worker threads (0: all cores)")->type_name("N");
  timeout_option =
      sub.add_option(
             "--timeout", timeout,
             "Seconds each launch may take (the interpreter's reference runs included); past "
             "it the command fails with a timeout error, exit 2")
          ->type_name("SECONDS");
}

void LaunchSetup::claim_stdin_users(const KernelChoice& choice) const {
  if (choice.file == "-")
    claim_stdin("the kernel file -");
  for (const auto& b : buffers) {
    auto eq = b.find('=');
    if (eq != std::string::npos && b.substr(eq + 1) == "-")
      claim_stdin("--buffer " + escape_for_terminal(b.substr(0, eq)) + "=-");
  }
}

diff::inputs::KernelInputs LaunchSetup::make(const ir::Kernel& k, BufferShapes* shapes) const {
  namespace in = diff::inputs;
  const bool has_grid = grid_option && grid_option->count() > 0;
  const bool has_groups = groups_option && groups_option->count() > 0;
  if (has_grid && has_groups)
    usage(k.name, "give --grid or --groups, not both");
  const uint64_t max_groups = 0xffffffffull;
  // Lanes per dimension (README, "Grids"): --grid gives them, rounded up to whole workgroups per
  // dimension; --groups gives workgroups, each of the kernel's workgroup size.
  std::array<uint64_t, 3> lanes3{0, 1, 1};
  if (has_groups) {
    std::array<uint64_t, 3> g = parse_dims(k.name, groups, "--groups");
    for (int d = 0; d < 3; ++d) {
      if (g[d] > max_groups)
        usage(k.name, "--groups " + escape_for_terminal(groups) + ": more than the " +
                          std::to_string(max_groups) + " workgroups a grid can have along " +
                          "xyz"[d]);
      lanes3[d] = *checked_mul(g[d], uint64_t{k.workgroup[d]}); // both below 2^32
    }
  } else if (has_grid) {
    lanes3 = parse_dims(k.name, grid, "--grid");
    for (int d = 0; d < 3; ++d) {
      const uint64_t width = std::max<uint32_t>(1, k.workgroup[d]);
      uint64_t g = lanes3[d] / width + (lanes3[d] % width != 0);
      if (g > max_groups)
        usage(k.name, "--grid " + escape_for_terminal(grid) + ": " + std::to_string(lanes3[d]) +
                          " lanes need " + std::to_string(g) + " workgroups of " +
                          std::to_string(width) + " lanes, more than the " +
                          std::to_string(max_groups) + " a grid can have along " + "xyz"[d]);
    }
  }
  // Buffers default to one element per lane of the whole grid.
  uint64_t lanes = lanes3[0];
  for (int d = 1; d < 3 && lanes; ++d) {
    auto product = checked_mul(lanes, lanes3[d]);
    if (!product)
      usage(k.name, std::string(has_grid ? "--grid " + escape_for_terminal(grid)
                                         : "--groups " + escape_for_terminal(groups)) +
                        ": more than 2^64 lanes in all");
    lanes = *product;
  }
  // --inputs sweep[:BUFFER]: the swept buffer has one element per code, and so does the grid.
  std::optional<in::Sweep> sweep;
  if (inputs == "sweep" || inputs.rfind("sweep:", 0) == 0) {
    sweep = in::plan_sweep(k, inputs.size() > 5 ? std::string_view(inputs).substr(6) : "");
    const std::string what =
        "--inputs " + escape_for_terminal(inputs) + " enumerates the " +
        std::to_string(sweep->codes()) + " codes of " + std::string(ir::name(sweep->element)) +
        ", so " + k.params[sweep->param].name + " has " + std::to_string(sweep->elements()) +
        " elements and the grid " + std::to_string(sweep->elements()) + " lanes";
    if ((has_grid || has_groups) && lanes != sweep->elements())
      usage(k.name, what + "; " + (has_grid ? "--grid " + grid : "--groups " + groups) + " gives " +
                        std::to_string(lanes) + " (leave it out)");
    for (const auto& b : buffers)
      if (b.substr(0, b.find('=')) == k.params[sweep->param].name)
        usage(k.name, what + "; --buffer " + escape_for_terminal(b) + " would replace it");
    lanes = sweep->elements();
  }
  if (!lanes)
    usage(k.name, "no grid: give --grid LANES or --groups N (at least 1)");
  const uint64_t seed_value = parse_count(seed, "--seed");
  // A sweep fills the other buffers as `random` does.
  auto kind = sweep ? std::optional(in::Kind::Random) : in::parse_kind(inputs);
  if (!kind)
    usage(k.name, "--inputs " + escape_for_terminal(inputs) +
                      ": not one of random, ties, edges, zeros, iota, sweep[:BUFFER]");

  std::map<std::string, uint64_t> scalars;
  for (const auto& a : args) {
    auto [name, value] = split_assignment(k.name, a, "--arg");
    const ir::Param& p = k.params[param_index(k, name, "--arg")];
    if (p.is_buffer())
      usage(k.name, "--arg " + name + ": " + name + " is a buffer; use --buffer");
    if (scalars.count(name))
      usage(k.name, "--arg " + name + " is given twice; give each scalar once");
    scalars[name] = scalar_bits(k, p, value);
  }
  for (const auto& p : k.params)
    if (!p.is_buffer() && !scalars.count(p.name))
      usage(k.name, "scalar parameter " + p.name + " (" + std::string(ir::name(p.type)) +
                        ") has no value; give --arg " + p.name + "=VALUE");

  // Every buffer parameter gets `lanes` elements first: refuse what cannot be allocated.
  const uint64_t memory = physical_memory_bytes();
  auto check_bytes = [&](const std::string& what, uint64_t count, ir::ScalarType type,
                         uint64_t& total) {
    auto bytes = checked_mul(count, ir::bytes(type));
    auto sum = bytes ? checked_add(total, *bytes) : std::nullopt;
    if (!bytes || !sum || (memory && *sum > memory))
      usage(k.name,
            what + ": " + std::to_string(count) + " elements of " + std::string(ir::name(type)) +
                (bytes ? " (" + std::to_string(*bytes) + " bytes)" : " (more than 2^64 bytes)") +
                " do not fit in this machine's memory" +
                (memory ? " (" + std::to_string(memory) + " bytes)" : ""));
    total = *sum;
  };
  uint64_t total = 0;
  for (const auto& p : k.params)
    if (p.is_buffer())
      check_bytes("buffer " + p.name + " for " + std::to_string(lanes) + " lanes", lanes, p.type,
                  total);

  // Per-buffer overrides, checked before anything is allocated.
  struct Override {
    uint32_t param;
    std::string gen; // random, zeros, iota, or empty for a file
    uint64_t count;
    std::string file;
    std::vector<uint64_t> shape; // given as AxB...: kept by dumps
  };
  std::vector<Override> overrides;
  std::set<std::string> seen;
  for (const auto& b : buffers) {
    auto [name, spec] = split_assignment(k.name, b, "--buffer");
    uint32_t pi = param_index(k, name, "--buffer");
    const ir::Param& p = k.params[pi];
    if (!p.is_buffer())
      usage(k.name, "--buffer " + name + ": " + name + " is a scalar; use --arg");
    if (!seen.insert(name).second)
      usage(k.name, "--buffer " + name + " is given twice; give each buffer once");
    Override o{pi, "", lanes, "", {}};
    std::string word = spec.substr(0, spec.find(':'));
    if (word == "random" || word == "zeros" || word == "iota") {
      o.gen = word;
      if (word.size() < spec.size()) {
        o.shape = parse_shape(k.name, spec.substr(word.size() + 1),
                              "--buffer " + name + "=" + word + ":");
        o.count = 1;
        for (uint64_t d : o.shape)
          o.count *= d; // parse_shape checked the product
        if (o.shape.size() == 1)
          o.shape.clear();
      }
      uint64_t ignored = 0;
      check_bytes("--buffer " + name + "=" + escape_for_terminal(spec), o.count, p.type, ignored);
    } else {
      if (spec.empty())
        usage(k.name, "--buffer " + name + "=: no file or generator");
      if (spec == "-")
        claim_stdin("--buffer " + escape_for_terminal(name) + "=-");
      o.file = spec;
    }
    overrides.push_back(std::move(o));
  }

  in::KernelInputs result = in::make_inputs(k, lanes, *kind, seed_value, scalars);
  if (shapes)
    shapes->assign(result.buffers.size(), {});
  if (has_grid || has_groups)
    result.grid = rt::Grid::for_lanes(k, lanes3);
  if (sweep) {
    size_t slot = 0;
    for (uint32_t i = 0; i < sweep->param; ++i)
      slot += k.params[i].is_buffer();
    in::fill_sweep(result.buffers[slot], *sweep);
  }

  // Buffers are stored in parameter order among buffer parameters.
  for (const auto& o : overrides) {
    const ir::Param& p = k.params[o.param];
    size_t slot = 0;
    for (uint32_t i = 0; i < o.param; ++i)
      slot += k.params[i].is_buffer();
    rt::HostBuffer& target = result.buffers[slot];
    if (shapes)
      (*shapes)[slot] = o.shape;
    if (o.gen.empty()) {
      io::Array a = load_buffer_file(k, p, o.file);
      target = std::move(a.buffer);
      if (shapes && a.shape.size() != 1)
        (*shapes)[slot] = std::move(a.shape);
      continue;
    }
    target = rt::HostBuffer(p.type, o.count);
    if (o.gen == "iota")
      in::fill_iota(target);
  }
  // Explicit `random` buffers follow how the kernel uses them (packed words get finite packed
  // values, index buffers in-range indices) once every buffer has its final length.
  std::vector<uint64_t> lengths(k.params.size(), 0);
  for (uint32_t i = 0, slot = 0; i < k.params.size(); ++i)
    if (k.params[i].is_buffer())
      lengths[i] = result.buffers[slot++].size();
  for (const auto& o : overrides) {
    if (o.gen != "random")
      continue;
    size_t slot = 0;
    for (uint32_t i = 0; i < o.param; ++i)
      slot += k.params[i].is_buffer();
    rt::HostBuffer& target = result.buffers[slot];
    const uint64_t s = seed_value * 1000003 + o.param;
    if (!in::fill_for_use(k, o.param, target, in::Kind::Random, s, lengths))
      in::fill_random(target, s);
  }
  for (size_t i = 0, slot = 0; i < k.params.size(); ++i) {
    if (k.params[i].is_buffer())
      result.args[i] = rt::Arg::of(result.buffers[slot++]);
  }
  rt::check_args(k, result.grid, result.args);
  return result;
}

rt::LaunchOptions LaunchSetup::launch_options() const {
  rt::LaunchOptions o;
  o.check_bounds = check;
  o.deterministic = deterministic;
  uint64_t t = parse_count(threads, "--threads");
  if (t > 4096)
    usage("", "--threads " + threads + ": more than 4096 threads");
  o.threads = static_cast<unsigned>(t);
  if (timeout_option && timeout_option->count() > 0)
    o.timeout = parse_seconds(timeout, "--timeout");
  o.cancel = install_interrupt_handler();
  return o;
}

std::vector<DumpRequest> parse_dumps(const ir::Kernel& k, const std::vector<std::string>& dumps) {
  std::vector<DumpRequest> out;
  std::set<std::string> paths;
  for (const auto& d : dumps) {
    auto eq = d.find('=');
    std::string name = eq == std::string::npos ? d : d.substr(0, eq);
    uint32_t p = k.find_param(name);
    if (eq == std::string::npos || eq == 0)
      usage(k.name, "--dump " + escape_for_terminal(d) + ": expected BUFFER=PATH");
    if (p == ir::kNone || !k.params[p].is_buffer()) {
      std::string known;
      for (const auto& q : k.params)
        if (q.is_buffer())
          known += (known.empty() ? "" : ", ") + q.name;
      usage(k.name, "--dump " + escape_for_terminal(d) + ": " + single_quoted(name) +
                        " is not a buffer parameter; the kernel's buffers are " + known);
    }
    std::string path = d.substr(eq + 1);
    if (path.empty())
      usage(k.name, "--dump " + escape_for_terminal(d) + ": no path");
    if (!paths.insert(path).second)
      usage(k.name, "--dump " + escape_for_terminal(d) + ": another --dump writes the same path");
    if (path == "-") {
      if (dumps.size() != 1)
        usage(k.name, "--dump " + escape_for_terminal(d) + ": standard output can carry one " +
                          "dumped buffer only, and " + std::to_string(dumps.size()) +
                          " are dumped; give the others file names");
      if (isatty(STDOUT_FILENO) == 1)
        usage(k.name, "--dump " + escape_for_terminal(d) +
                          ": standard output is a terminal; redirect it to a file or a pipe "
                          "(the .npy file is binary)");
    } else {
      check_output_path(path, "--dump " + name);
    }
    size_t slot = 0;
    for (uint32_t i = 0; i < p; ++i)
      slot += k.params[i].is_buffer();
    out.push_back({slot, name, path});
  }
  return out;
}

void check_grid(const ir::Kernel& k, const rt::Grid& grid, const rt::DeviceInfo& device) {
  for (int d = 0; d < 3; ++d)
    if (grid.groups[d] > device.max_groups[d])
      usage(k.name, "grid of " + std::to_string(grid.groups[d]) + " workgroups along " + "xyz"[d] +
                        " exceeds device " + device.name + "'s limit of " +
                        std::to_string(device.max_groups[d]));
}

void rewrite_opt_in_flags(std::vector<std::string>& args) {
  for (auto& a : args) {
    if (a == "--")
      break;
    if (!policy::is_opt_in_flag(a))
      continue;
    auto parsed = policy::parse_opt_in_flag(a);
    if (!parsed.flag)
      throw Error(ErrorKind::Usage, escape_for_terminal(a) + ": " + parsed.error);
    for (const char* name : {"--accept-single-rounding", "--accept-relaxed-accumulation"}) {
      std::string n = name;
      if (a.compare(0, n.size(), n) == 0 && (a[n.size()] == '=' || a[n.size()] == ':')) {
        a = n + "=" + a.substr(n.size());
        break;
      }
    }
  }
}

bool progress_enabled() {
  return isatty(2) == 1;
}

} // namespace halfway::cli
