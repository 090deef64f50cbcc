#pragma once
// What `halfway run` and `halfway diff` share: which kernel from which file, the grid, the
// buffers and scalar arguments, and the launch options. Every mistake in them is a Usage error
// naming the kernel, parameter or file, before anything runs.

#include "halfway/diff/inputs.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/text/kernel_file.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace halfway::cli {

// --accept-single-rounding[=KERNEL]:REASON and --accept-relaxed-accumulation[=KERNEL]:REASON on
// the subcommands that read a kernel file. main() rewrites each such argument into the form
// CLI11 parses (rewrite_opt_in_flags); apply() checks them against the file (a named kernel must
// be in it, a reason must hold no control character) and records them in the process's policy.
struct OptInFlags {
  std::vector<std::string> single, relaxed; // what followed the flag name, '=' or ':' first
  void add_options(CLI::App& sub);
  void apply(const text::KernelFile& file) const;
};

struct KernelChoice {
  std::string file;
  std::string kernel; // empty: the file's only kernel
  OptInFlags opt_ins;
  // `optional_kernel`: --kernel may be left out even when the file holds several kernels.
  void add_options(CLI::App& sub, bool optional_kernel = false);
  // The parsed file, with the opt-in flags applied.
  text::KernelFile load_file() const;
  ir::VerifiedKernel load() const;
  // The chosen kernel of a file load_file() returned.
  ir::VerifiedKernel load(const text::KernelFile& f) const;
};

// Standard input can feed one input of a command: the kernel file `-` or one `--buffer NAME=-`.
// Each reader claims it first; a claim by another reader is a Usage error naming both.
void claim_stdin(const std::string& what);

// The shape of each buffer (in the order of the kernel's buffer parameters), which a dump keeps:
// the shape of the .npy file it was read from, or the AxB... of a generator (`zeros:4x8`); empty
// for one dimension.
using BufferShapes = std::vector<std::vector<uint64_t>>;

// Numbers are taken as text and parsed strictly (cli_util.hpp): a sign, a fraction or a value
// past 2^64-1 is an error rather than a wrapped or truncated count.
struct LaunchSetup {
  std::string grid;                 // lanes along x (--grid)
  std::string groups;               // or workgroups along x (--groups)
  std::vector<std::string> buffers; // NAME=SPEC
  std::vector<std::string> args;    // NAME=VALUE
  std::string inputs = "random";    // default generator for input buffers
  std::string seed = "1";
  bool check = false;
  bool deterministic = false;
  std::string threads = "0";
  std::string timeout; // seconds; empty: none
  // Whether each option was given at all (an empty --grid '' is an error, not "no grid").
  const CLI::Option* grid_option = nullptr;
  const CLI::Option* groups_option = nullptr;
  const CLI::Option* timeout_option = nullptr;

  void add_options(CLI::App& sub);
  // Claims standard input for the kernel file `-` and each `--buffer NAME=-`, so that two of them
  // are refused before either is read.
  void claim_stdin_users(const KernelChoice& choice) const;
  // Buffers and arguments for `kernel`, ready to launch. Every count is checked, and buffers
  // that would not fit in this machine's memory are refused before they are allocated.
  // `shapes`, when given, receives each buffer's shape.
  diff::inputs::KernelInputs make(const ir::Kernel& kernel, BufferShapes* shapes = nullptr) const;
  // check_bounds, deterministic, threads, the --timeout and the Ctrl-C flag as cancel.
  rt::LaunchOptions launch_options() const;
};

// One --dump BUFFER=PATH, checked before the launch: the buffer exists, the path can be written.
// PATH `-` is standard output, allowed when it is the only dump: stdout then carries only the
// .npy file (never a terminal).
struct DumpRequest {
  size_t slot; // among the kernel's buffer parameters
  std::string buffer, path;
  bool to_stdout() const { return path == "-"; }
};
std::vector<DumpRequest> parse_dumps(const ir::Kernel& kernel,
                                     const std::vector<std::string>& dumps);

// Throws a Usage error when the grid exceeds what `device` can dispatch.
void check_grid(const ir::Kernel& kernel, const rt::Grid& grid, const rt::DeviceInfo& device);

// Rewrites every --accept-single-rounding[=K]:REASON and --accept-relaxed-accumulation[=K]:REASON
// argument as "--accept-...=REST" (REST: what followed the flag name), which CLI11 parses; the
// subcommands that take them declare them (OptInFlags). A malformed flag is a Usage error.
void rewrite_opt_in_flags(std::vector<std::string>& args);

// True when stderr is a terminal: progress lines go there only then.
bool progress_enabled();

} // namespace halfway::cli
