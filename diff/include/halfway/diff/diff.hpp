#pragma once
// The differential checker: runs a kernel on the reference interpreter and on a device with the
// same inputs, and compares every element of every output, as specs/f16-narrowing-barrier.md §6
// describes:
//  - bit for bit (compare.hpp) where the kernel's budget holds no opt-in. A device that fused a
//    multiply-add into a narrowing would stay inside any tolerance; only the exact comparison
//    with the two-step interpreter catches a contraction that should not have happened.
//  - within the §4 bound (bound.hpp) where the budget holds single rounding, for each element
//    that an unbarriered narrowing site stored directly (the interpreter's shadow record names the
//    destination). Every other element is still compared bit for bit. Each such element is also
//    matched against the rounding models of that evaluation (interp shadow.hpp, RoundingModel):
//    the report counts the elements equal to each model (ModelCounts) and lists those that
//    differ from the reference, lie inside the bound and equal no model ("unexplained"). With
//    Options::exact_models the models decide instead of the bound: an element must equal one.
//  - under relaxed accumulation (a kernel with loop-carried accumulations, ir::accumulations), an
//    element that differs and whose final value a store of an accumulation local wrote (the
//    interpreter's AccumulationRecord names the destination, the term count and sum |t_k|) must
//    be within the §5 bound (bound.hpp): |device - reference| <= 2 * gamma_m * sum |t_k|, plus one
//    ulp of the stored type when the store narrows. An element that differs and has no bounded
//    record (stored from further arithmetic on the sum, overwritten by another store, a sum
//    seeded from another accumulation) is counted as unchecked, with a note: nothing the
//    interpreter records bounds it, and it is neither passed nor failed.
//  - for a device whose math profile is not correctly rounded (rt::DeviceInfo::math, a Vulkan
//    device) running a kernel with ops that profile does not round correctly, an element that
//    differs and that no opt-in bounds is judged by the interval the interpreter's interval shadow
//    propagated to it from the op table's device precision column (specs/device-precision.md):
//    within interval, a violation outside it, or undecided (counted; inconclusive beyond
//    Options::max_undecided) where the interval could not decide a comparison, branch or index.
//
// Usage:
//     diff::Report r = diff::run(kernel, device, grid, args);
//     if (!r.ok()) std::cerr << diff::to_text(r);
// where `args` holds one rt::Arg per parameter, as for Device::launch. The caller's buffers are
// never written: the device runs on its own copies of every buffer, the reference on copies of
// the buffers it may write (a buffer bound to several parameters stays one buffer in each copy)
// and reads the read-only ones in place, which the verifier keeps it from storing to. Output
// buffers are the write and read_write parameters; the inputs are the read and read_write
// parameters as given.
//
// Cost: two launches, one copy of every buffer and two of every output. When single rounding
// holds the device runs first and the reference run's shadow records are judged batch by batch
// as the interpreter makes them (models, and for an element that differs the §4 bound, inline for
// f32 producers rounded to nearest, with an error-free exact sum elsewhere and MPFR only where
// that cannot decide): nothing per evaluation is kept, only a byte, a float and the stored value
// per output element. Under relaxed accumulation one accumulation record (about 80 bytes)
// per lane per store of an accumulation local, and per-lane bookkeeping in the reference run.
//
// Inconclusive comparisons: a comparison that cannot tell a right device from a wrong one never
// reports OK. An output buffer is inconclusive when it has no elements, when every element of
// the reference result is NaN (a NaN matches any NaN), when the reference run left every element
// as it was before the launch (nothing was computed into it, or the kernel wrote back exactly
// what was there: either way equal results prove nothing), or when more than
// Options::max_unchecked of its elements are unchecked (nothing bounds them). Report::ok() is
// then false unless Options::accept_inconclusive says the caller knows.
//
// Errors: a kernel the interpreter rejects (out of bounds, a data race, ...) or a device launch
// that fails throws the halfway::Error unchanged; a comparison never throws on what it finds.
// When both fail, the interpreter's error is thrown, whichever ran first.

#include "halfway/diff/report.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/runtime/device.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace halfway::policy {
class Registry;
}

namespace halfway::diff {

// What one element's comparison concluded, as `halfway diff --dump` writes it (one u8 per element).
enum class Verdict : uint8_t {
  Exact = 0,          // identical under the comparison rules of compare.hpp
  WithinBound = 1,    // different, inside the element's §4 or §5 bound (or, with exact models,
                      // equal to a rounding model)
  Unchecked = 2,      // different, and nothing the interpreter records bounds it
  Violation = 3,      // different, outside its bound (or no bound: the element must be exact)
  WithinInterval = 4, // different, inside the interval its device's math precision propagates to
  Undecided = 5,      // different, and the intervals could not decide the element
};

// One output buffer's results in full (Options::results).
struct BufferResults {
  std::string name; // as BufferReport::name
  uint32_t param = 0;
  rt::HostBuffer reference, device;
  std::vector<Verdict> verdicts; // one per element
};

struct Options {
  // Where the kernel's budget is read; null: policy::global_registry(). Give a device made with
  // the same registry, or the two will disagree (the report notes it when the device's
  // LaunchResult::budget differs).
  const policy::Registry* registry = nullptr;
  // How many violations per buffer the report keeps, lowest index first.
  size_t max_shown = 10;
  // Passed to the device's launch. Its timeout and cancel flag also bound the reference run
  // (each run gets the whole timeout).
  rt::LaunchOptions launch{};
  // The reference run: one thread in workgroup order, or this many threads (0: all cores).
  bool deterministic_reference = false;
  unsigned reference_threads = 0;
  // Unchecked elements a buffer may have before its comparison is inconclusive.
  uint64_t max_unchecked = 0;
  // Undecided elements (and lanes, see Report::undecided_lanes) a buffer may have before its
  // comparison is inconclusive.
  uint64_t max_undecided = 0;
  // Report inconclusive buffers but let ok() hold when there is no violation.
  bool accept_inconclusive = false;
  // Under single rounding, judge an element an unbarriered site stored by the rounding models
  // instead of the §4 bound: it must equal one of them bit for bit (for people validating
  // compilers and drivers). Off: the bound decides, and elements inside it that equal no model
  // are counted as unexplained.
  bool exact_models = false;
  // When set, run() appends the reference and device buffers and the per-element verdicts of
  // every output buffer, in the order of Report::buffers (costs a copy of both results and a
  // byte per element).
  std::vector<BufferResults>* results = nullptr;
};

Report run(const ir::VerifiedKernel& kernel, rt::Device& device, const rt::Grid& grid,
           std::span<const rt::Arg> args, const Options& options = {});

} // namespace halfway::diff
