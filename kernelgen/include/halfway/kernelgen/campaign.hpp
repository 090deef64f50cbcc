#pragma once
// A differential campaign over generated kernels (specs/kernelgen.md): each kernel runs on the
// reference interpreter and on every chosen device with the same inputs, and the checker
// (diff::run) compares the results: bit for bit where the kernel holds no opt-in, by the §4 bound
// or the rounding models where it holds single rounding. A difference is then
//  - explained: its cause is documented and not halfway's (explain() names it: an op whose device
//    precision the op table only bounds, on a device that is not bit-exact for it; a known device
//    issue of tests/known-device-issues/), or
//  - unexplained: a bug of halfway, of the device, or of the generator, to be reduced and fixed.
// Sharding is deterministic, like Mesa's deqp-runner: the campaign is the fixed sequence of
// kernels 0..count-1 of one seed, and shard I of N runs the indices i with i % N == I, so any
// set of machines that runs every shard runs the whole campaign exactly once.
// A mismatch is judged per element: the checker already passes elements that are exact, inside an
// opt-in's bound, equal to a rounding model or inside the interval a device's math precision
// propagates (diff.hpp); every element it still calls a violation must have its own documented
// cause (explain()) for the mismatch to be explained.

#include "halfway/kernelgen/generate.hpp"
#include "halfway/runtime/device.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace halfway::policy {
class Registry;
}

namespace halfway::kernelgen {

// How one kernel is launched and compared: what `halfway diff` needs to show the same result.
struct RunSetup {
  uint32_t lanes = 1, lanes_y = 1, lanes_z = 1; // the grid's lanes along x, y and z
  diff::inputs::Kind inputs = diff::inputs::Kind::Random;
  uint64_t input_seed = 1;
  bool single_rounding = false;
  bool exact_models = false;
  bool relaxed_accumulation = false;
  std::chrono::milliseconds timeout{0}; // per launch; 0: none
  // Threads of each launch, the reference's included (0: all cores). One by default: a long
  // campaign runs one shard per core, which keeps every core busy already, and the grids are a
  // few hundred lanes.
  unsigned threads = 1;
};
RunSetup setup_of(const Generated& g);

enum class Outcome : uint8_t {
  Match,        // every output compared, nothing violated
  Inconclusive, // nothing violated, but some output proves nothing (all NaN, never written)
  Unsupported,  // the device refused the kernel (ErrorKind::Unsupported)
  Explained,    // violations with a documented cause that is not halfway's
  Unexplained,  // violations without one, or an error
};
std::string_view name(Outcome o);

struct Check {
  Outcome outcome = Outcome::Match;
  std::string cause;       // Explained: explain()'s texts; Unexplained: what failed
  uint64_t violations = 0; // elements
  // Elements that differ and that nothing decides: undecided by the intervals (and lanes whose
  // branches the intervals could not decide), unchecked under relaxed accumulation. They are
  // neither passed nor failed; the campaign counts them.
  uint64_t undecided = 0, undecided_lanes = 0, unchecked = 0;
  std::string report; // the checker's text report, for mismatches and errors
};

// Records the setup's opt-in for the kernel in `registry` (a Kernel scope: it covers no other).
void apply_opt_in(policy::Registry& registry, const std::string& kernel, const RunSetup& setup);

// Runs and compares `kernel` on `device` (made with `registry`, which holds the kernel's opt-in).
// `device_name` is the name it was made from ("cpu", "vulkan", "interp"). Never throws for what a
// kernel or device does: a verifier or launch error becomes an Unexplained check, a refusal an
// Unsupported one.
Check check(const ir::Kernel& kernel, rt::Device& device, const std::string& device_name,
            const RunSetup& setup, const policy::Registry& registry);

// Why one element of an output of type `type`, which the checker found violating (`reference`
// from the interpreter, `device` from the device named `device_name`), is not halfway's, or none.
// The causes are those of tests/known-device-issues/, on Vulkan only: a NaN's sign seen through
// copysign (the two differ in the sign bit alone), a NaN's sign or payload seen through a bitcast
// or a pack (both sides NaN patterns of a float format of the element's width, or of its halves).
std::optional<std::string> explain(const ir::Kernel& kernel, const std::string& device_name,
                                   ir::ScalarType type, uint64_t reference, uint64_t device);

// The grid as `halfway diff --grid` takes it: "64", "16x4" or "16x2x2".
std::string grid_text(const RunSetup& setup);

// The command that shows the comparison: `halfway diff FILE --device D --grid N --inputs K --seed
// S` plus the opt-ins and --exact-models when the setup holds them.
std::string diff_command(const std::string& file, const std::string& kernel,
                         const std::string& device_name, const RunSetup& setup);

struct Finding {
  uint64_t index = 0;
  std::string kernel, device; // the kernel's name, the device's name as given
  Check check;
  std::string text; // the kernel as .hk text (empty when generation itself failed)
  RunSetup setup;
};

struct CampaignResult {
  uint64_t kernels = 0;     // generated (this shard's)
  uint64_t comparisons = 0; // kernel x device
  uint64_t mismatches = 0;  // comparisons with violations or errors: explained + unexplained
  uint64_t explained = 0, unexplained = 0, inconclusive = 0, unsupported = 0;
  // Comparisons with elements nothing decides (Check::undecided, unchecked), and those elements.
  uint64_t undecided_comparisons = 0, undecided_elements = 0;
  std::map<std::string, uint64_t> causes; // explained and unexplained comparisons by cause
  std::vector<Finding> findings;          // every mismatch, in index order
  double seconds = 0;
};

struct CampaignOptions {
  uint64_t seed = 1;
  uint64_t count = 100;
  std::vector<std::string> devices{"interp"}; // names for rt::make_device
  uint64_t shard = 0, shards = 1;
  GenOptions gen;
  std::chrono::milliseconds timeout{0};
  // The devices are made again after this many kernels (0: never): a device keeps every kernel it
  // compiled (the launch memo, Vulkan pipelines), about 2 MB each on lavapipe, so a long shard
  // would otherwise grow without bound. Making lavapipe again costs about 50 ms.
  uint64_t fresh_devices_every = 100;
  // Stop after the kernel that brought this many unexplained mismatches (0: never stop).
  uint64_t stop_after_unexplained = 0;
  // Leave out the shard's first `resume_at` kernels: a campaign that goes on after a process
  // running it died (a driver crash, `halfway fuzz`) starts after the kernel that killed it.
  uint64_t resume_at = 0;
  // Called before each kernel runs on each device: `device` indexes `devices`. Whoever must say
  // which comparison was in flight when something killed the process reads it from here.
  std::function<void(uint64_t index, size_t device)> before_check;
  // Called after each kernel with the kernels done so far and the running result.
  std::function<void(uint64_t, const CampaignResult&)> progress;
  // Called for each mismatch as it is found.
  std::function<void(const Finding&)> on_finding;
};

// Runs this shard of the campaign, with its own policy registry (the opt-ins it draws reach no
// kernel outside the campaign). Throws only when a device cannot be made or the shard is invalid.
CampaignResult run_campaign(const CampaignOptions& options);

// The indices shard `shard` of `shards` runs, in order, out of 0..count-1.
std::vector<uint64_t> shard_indices(uint64_t count, uint64_t shard, uint64_t shards);

} // namespace halfway::kernelgen
