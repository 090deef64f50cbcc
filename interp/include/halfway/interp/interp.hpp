#pragma once
// The reference interpreter: the oracle every device is compared against. It executes a verified
// kernel with exact numerics and GPU execution semantics, and reports undefined behaviour as a
// halfway::Error instead of computing something.
//
// Numerics. Every f32 op rounds to binary32 and every f64 op to binary64; f16 and bf16 ops are
// correctly rounded; math intrinsics are correctly rounded (numerics/math.hpp); conversions round
// once with the node's rounding mode and saturate flag (numerics/convert.hpp); float-to-integer
// conversions truncate and saturate, NaN giving 0 (numerics/int_convert.hpp).
// NaN results and min/max/compare follow numerics/arith.hpp: arithmetic NaNs are the canonical
// quiet NaN with the sign bit clear; comparisons are IEEE (eq, lt, le, gt, ge are false on a NaN
// operand, ne is true). Integers wrap (two's complement); division and remainder truncate toward
// zero, MIN / -1 wraps to MIN and MIN % -1 is 0; shr is arithmetic for signed types. Nothing is
// contracted: the library is built with -ffp-contract=off, and only an explicit fma rounds once.
//
// Execution model. A workgroup runs with all its lanes in lockstep, one IR node at a time over
// structure-of-arrays registers; divergent if/while/for, break, continue and return are active-lane
// masks. Kernels without barriers and shared memory run several whole workgroups in one lockstep
// batch (they cannot observe each other's lanes, so this is the same semantics with less overhead).
// Workgroups run in parallel on a pool of threads; each worker runs with the default MXCSR (round
// to nearest, no FTZ/DAZ) whatever the caller's. Shared memory is per workgroup and zeroed when
// the workgroup starts. Atomics on buffers are real atomics; within a workgroup they apply in
// lane order. Plain accesses by different workgroups to one buffer element, one of them a write,
// are a data race on a GPU; the interpreter does not detect them and their result is unspecified.
// `for i = a; i < b; i += c` evaluates a once and b before, c after every iteration, as in C.
//
// Errors (halfway::Error, its ErrorContext naming kernel, workgroup and lane, plus the buffer,
// index and length for memory accesses):
//  - OutOfBounds: a load, store or atomic outside a buffer or shared array (negative indices too);
//  - DivideByZero: integer div or rem by zero;  ShiftOverflow: a shift by >= the type's width
//    (a negative amount included);
//  - Barrier: a barrier reached by only part of a workgroup (a lane that returned earlier has not
//    reached it: a barrier after a divergent return is an error);
//  - DataRace: two lanes touching one shared element between two barriers, at least one writing
//    (atomics do not race with atomics);
//  - Usage: arguments that do not fit the kernel (rt::check_args);
//  - Limit: the launch needs more memory than the interpreter allows (see "Sizes" below), or it
//    ran more lockstep steps than Options::max_steps;
//  - Timeout / Interrupted: Options::cancel expired (Cancel::error, device "interp").
// Sizes. Every size that comes from the kernel or the grid is computed with checked arithmetic.
// The interpreter refuses (Limit), before running anything, a grid whose workgroups times lanes
// does not fit 64 bits, shared arrays above kMaxSharedBytes in all, and a kernel whose per-worker
// state (8 bytes per register per lane, shared memory and its race-check table) exceeds
// kMaxWorkerBytes; it uses fewer threads when all workers together would need more than
// kMaxTotalWorkerBytes.
//
// Cancellation and budgets. Options::cancel is polled at loop back edges (every iteration of a
// while or for), between statements and between batches of workgroups; a poll is a counter
// increment, and every kPollSteps steps a relaxed atomic load plus, with a deadline, a clock read.
// When the cancel expires every worker stops at its next poll, the buffers are restored, and
// run() throws cancel->error(kernel, "interp"): Timeout or Interrupted. Options::max_steps bounds
// the lockstep steps of a launch (a step is one statement executed for a batch's active lanes,
// or one loop iteration); past it the launch stops the same way and throws Limit. Steps are
// counted per worker and added to the launch's total at each poll, so in parallel mode a launch
// may run up to kPollSteps steps per worker past the budget before it stops.
//
// A workgroup stops at its first error. When several workgroups fail, the error reported is the
// one of the lowest linear workgroup id, in parallel and deterministic mode alike.
//
// Failed launches leave every buffer exactly as it was. The kernel runs on the caller's buffers
// in place, after the contents of every buffer bound to a write or read_write parameter were
// saved; when the launch fails (a halfway::Error, or any other exception) the saved contents are
// copied back before run() throws. So while run() is executing, another thread must not read the
// buffers (as with any device); once it returns or throws, they hold either the complete result
// or exactly what they held before. A buffer bound to several parameters is one buffer during the
// launch, as on a device.

#include "halfway/interp/shadow.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/runtime/cancel.hpp"

#include <span>
#include <vector>

namespace halfway::interp {

// How the narrowing sites whose decision is Barrier (ir::narrowing_sites) are evaluated.
enum class NarrowingModel : uint8_t {
  // The strict default: every op rounds in its own type, then the convert rounds again.
  TwoStep,
  // The most-fusing device: the exact value of the site's producer expression (see shadow.hpp)
  // is rounded once into the target type. Sites that need no barrier are the same in both models.
  SingleRounding,
};

// Limits of the interpreter (see "Sizes" above).
inline constexpr uint64_t kMaxSharedBytes = uint64_t{64} << 20;     // per workgroup
inline constexpr uint64_t kMaxWorkerBytes = uint64_t{2} << 30;      // per worker thread
inline constexpr uint64_t kMaxTotalWorkerBytes = uint64_t{8} << 30; // all workers together
inline constexpr uint32_t kPollSteps = 64; // steps between two polls of the cancel and budget

struct Options {
  // One thread, workgroups in increasing linear id: for reproducing a failure.
  bool deterministic = false;
  // Worker threads; 0: all cores. Ignored when deterministic.
  unsigned threads = 0;
  // The device's float controls: flushed formats see subnormal operands of float ops (arithmetic,
  // fma, sqrt, math, min, max, floor, ceil, fract, comparisons) as zeros of the same sign and
  // have subnormal results replaced by zeros. Moves of bits (loads, stores, select, neg, abs,
  // copysign, bitcast, pack) and conversions are not flushed. preserve_signed_zero_inf_nan does
  // not change what the interpreter computes; it only matters when comparing.
  num::FloatControls controls{};
  NarrowingModel narrowing = NarrowingModel::TwoStep;
  // Record a ShadowRecord for every evaluation of every narrowing site (112 bytes each), and an
  // AccumulationRecord for every store of an accumulation local (shadow.hpp).
  bool shadow = false;
  // With shadow: hand the shadow records to this sink batch by batch (shadow.hpp ShadowSink)
  // instead of gathering them into Stats::shadow. Accumulation records are gathered as usual.
  ShadowSink* sink = nullptr;
  // The interval shadow (shadow.hpp ValueInterval, specs/device-precision.md): for every element
  // of every written buffer, the interval of the values a device with this math profile could
  // store there (Stats::intervals). Costs 24 bytes per register per lane and per written element.
  bool intervals = false;
  ir::MathProfile profile = ir::MathProfile::Vulkan;
  // Polled during the launch (see "Cancellation" above); null: never cancelled. The Cancel must
  // outlive run().
  const rt::Cancel* cancel = nullptr;
  // The most lockstep steps one launch may take; 0: no limit. For fuzzing and untrusted kernels.
  uint64_t max_steps = 0;
  // Run dot loops (`acc = add(acc, mul(x, y))` terms over a counter; interp/README.md) fused. The
  // results, errors and steps are the same either way; false is for tests that compare the two.
  bool fused_loops = true;
};

struct Stats {
  uint64_t workgroups = 0;  // workgroups run
  uint64_t invocations = 0; // lanes run: workgroups * workgroup lanes
  unsigned threads = 0;     // worker threads used
  double wall_ms = 0;       // the whole launch, buffer copies included
  // With Options::shadow: one record per site evaluation, in the order a deterministic run makes
  // them (also in parallel mode): by batch of workgroups, then statement by statement, then lane
  // by lane. Sort by (global_lane, ...) if another order is needed.
  std::vector<ShadowRecord> shadow;
  // With Options::shadow: one record per lane per store of an accumulation local (and per store
  // that overwrites an element such stores target), in the same order as `shadow`.
  std::vector<AccumulationRecord> accumulations;
  // With Options::intervals: per parameter, one interval per element of a written buffer (empty
  // for the others); an element the launch did not write is the point of its contents.
  std::vector<ElementIntervals> intervals;
  // With Options::intervals: lanes that took a branch or loop whose condition the intervals could
  // not decide (a device could have taken the other way, so what they did not store is unknown).
  uint64_t undecided_lanes = 0;
  // Executions of dot loops that ran fused (Options::fused_loops), each for a whole batch.
  uint64_t fused_loops = 0;
};

// Runs `kernel` over `grid` with one Arg per parameter. Throws halfway::Error (see above); on a
// throw every buffer is unchanged.
Stats run(const ir::VerifiedKernel& kernel, const rt::Grid& grid, std::span<const rt::Arg> args,
          const Options& options = {});

} // namespace halfway::interp
