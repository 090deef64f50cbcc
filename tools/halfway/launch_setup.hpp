#pragma once
// What `halfway run` and `halfway diff` share: which kernel from which file, the grid, the
// buffers and scalar arguments, and the launch options. Every mistake in them is a Usage error
// naming the kernel, parameter or file, before anything runs.

#include "halfway/diff/inputs.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/runtime/device.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace halfway::cli {

struct KernelChoice {
  std::string file;
  std::string kernel; // empty: the file's only kernel
  void add_options(CLI::App& sub);
  ir::VerifiedKernel load() const;
};

struct LaunchSetup {
  uint64_t grid = 0;   // lanes along x (--grid)
  uint64_t groups = 0; // or workgroups along x (--groups)
  std::vector<std::string> buffers; // NAME=SPEC
  std::vector<std::string> args;    // NAME=VALUE
  std::string inputs = "random";    // default generator for input buffers
  uint64_t seed = 1;
  bool check = false;
  bool deterministic = false;
  unsigned threads = 0;

  void add_options(CLI::App& sub);
  // Buffers and arguments for `kernel`, ready to launch.
  diff::inputs::KernelInputs make(const ir::Kernel& kernel) const;
  rt::LaunchOptions launch_options() const;
};

// Throws a Usage error when the grid exceeds what `device` can dispatch.
void check_grid(const ir::Kernel& kernel, const rt::Grid& grid, const rt::DeviceInfo& device);

// Applies every --accept-single-rounding[=K]:REASON and --accept-relaxed-accumulation[=K]:REASON
// argument to the process-wide policy and removes them from argv (CLI11 cannot parse the
// `--flag:value` form). A malformed flag or a refused opt-in is a Usage error.
void apply_opt_in_flags(std::vector<std::string>& args);

// True when stderr is a terminal: progress lines go there only then.
bool progress_enabled();

} // namespace halfway::cli
