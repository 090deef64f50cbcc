#pragma once
// What a differential run found, per output buffer, and its two renderings: text for people and
// JSON for tools (`halfway diff --json`).

#include "halfway/diff/bound.hpp"
#include "halfway/interp/shadow.hpp"
#include "halfway/ir/types.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "halfway/policy/budget.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::diff {

// One argument value shown next to a violation.
struct InputValue {
  std::string name; // the parameter's name
  ir::ScalarType type = ir::ScalarType::F32;
  uint64_t bits = 0;
  bool scalar = false; // a scalar argument rather than element `index` of an input buffer
};

// An element the device got wrong.
struct Violation {
  uint64_t index = 0;
  // The inputs at the same index: element `index` of every buffer the kernel reads (read and
  // read_write parameters, before the launch) that is long enough, and every scalar argument.
  // For an elementwise kernel these are exactly the values the element was computed from; for
  // any other kernel they are only what sits at the same position.
  std::vector<InputValue> inputs;
  uint64_t reference = 0; // the interpreter's element
  uint64_t device = 0;    // the device's element
  uint64_t ulps = 0;      // distance(reference, device): UINT64_MAX for a NaN against a number
  Bound bound;            // what would have been accepted
  // At an unbarriered narrowing site under single rounding: each rounding model's result there
  // (interp::RoundingModel order, bit patterns of the element type).
  std::optional<std::array<uint32_t, interp::kRoundingModels>> models;
};

// Under single rounding, the elements an unbarriered narrowing site stored (specs §4, §6): which
// rounding model each one equals. An element may equal several models (they often agree).
struct ModelCounts {
  uint64_t elements = 0; // elements at such sites (equal to the reference or not)
  std::array<uint64_t, interp::kRoundingModels> equal{}; // per model, elements equal to it
  // Each element counted once, under the first model in RoundingModel order it equals (TwoStep for
  // every element equal to the reference): the device's behaviour, "FusedF32 on 877, TwoStep on
  // 19123". Elements equal to no model are not counted here.
  std::array<uint64_t, interp::kRoundingModels> first{};
  uint64_t explained = 0; // different from the reference, equal to some model
  // Different from the reference, equal to no model, within the §4 bound: passed by default,
  // violations with Options::exact_models.
  uint64_t unexplained = 0;
  // The largest |device - reference| / (the bound's end on that side - reference), over elements
  // that differ under a single-rounding bound and are both numbers: <= 1 inside the bound.
  std::optional<double> max_bound_ratio;
  std::vector<Violation> first_unexplained; // the lowest indices, at most Options::max_shown

  // The models every element equals ("FusedF32", ...), in RoundingModel order.
  std::vector<interp::RoundingModel> fits() const;
};

// How far the device's elements are from the reference's, on a log scale of ulps (of the element
// type for floats; integer units otherwise), counted over every element of a buffer:
//   bucket 0: distance 0 (every exact element is here), bucket 1: distance 1,
//   bucket k >= 2: distances 2^(k-2)+1 .. 2^(k-1), that is 2, 3-4, 5-8, 9-16, ...
// The last bucket, 65, ends at 2^64-2, the largest distance there is. An element where exactly one
// side is a NaN has no distance: it is counted in nan_mismatch instead.
struct UlpHistogram {
  static constexpr size_t kBuckets = 66;
  std::array<uint64_t, kBuckets> counts{};
  uint64_t nan_mismatch = 0;

  static size_t bucket(uint64_t ulps);
  static uint64_t lo(size_t bucket); // the smallest and largest distance the bucket holds
  static uint64_t hi(size_t bucket);
  // "0", "1", "2", "3-4", ..., "32769-65536", then "2^16+1-2^17", ...: at most 11 characters.
  static std::string label(size_t bucket);
  // Counts one element; UINT64_MAX (diff::distance's NaN against a number) counts a NaN mismatch.
  void add(uint64_t ulps);
  // Buckets 0 up to the last non-empty one (1 when all are empty): what the renderings show.
  size_t used() const;
  uint64_t total() const; // every element counted, NaN mismatches included
};

// The histogram as text bars, one line per bucket up to used() and a "NaN" line when there are
// NaN mismatches, each line `indent` then the bucket, a bar of '#' scaled linearly to the largest
// count (a non-empty bucket gets at least one '#') and the count; no line is longer than 80
// columns. Plain characters, no colour: the text is the same on a terminal and in a pipe.
std::string histogram_text(const UlpHistogram& histogram, std::string_view indent);

struct BufferReport {
  std::string name; // the parameter's name (the first one, when a buffer is bound twice)
  uint32_t param = 0;
  ir::ScalarType type = ir::ScalarType::F32;
  uint64_t size = 0;
  uint64_t exact = 0; // identical under the comparison rules of compare.hpp
  // Different, and inside the element's §4 or §5 bound (with Options::exact_models, for an
  // element an unbarriered site stored: equal to a rounding model instead).
  uint64_t within_bound = 0;
  uint64_t violations = 0;
  // Different, under relaxed accumulation, with no bounded accumulation record (diff.hpp).
  uint64_t unchecked = 0;
  // The largest distance(reference, device) over the elements where both are numbers (or both
  // NaN), within-bound and unchecked ones included: in ulps of the element type for floats.
  uint64_t max_ulps = 0;
  // Elements where exactly one side is a NaN (within bound or not): they have no distance.
  uint64_t nan_mismatches = 0;
  std::vector<Violation> first_violations; // the lowest indices, at most Options::max_shown
  // Elements of the reference result that are NaN, and that still hold the buffer's contents from
  // before the launch: an output that is all NaN, or that the reference never changed, proves
  // nothing about the device (see Report::inconclusive).
  uint64_t reference_nan = 0;
  uint64_t unchanged = 0;
  // With intervals (Report::intervals): different, and inside the element's propagated interval;
  // and the elements whose interval could not be decided (undecided: never passed silently, see
  // Report::inconclusive). The largest |device - reference| over the distance from the
  // reference to the interval's end on that side (<= 1 inside), over elements that differ.
  uint64_t within_interval = 0;
  uint64_t undecided = 0;
  std::optional<double> max_interval_ratio;
  UlpHistogram histogram; // distance(reference, device) of every element
  ModelCounts models;     // empty unless single rounding holds
};

// Why a comparison proves nothing about one output buffer.
struct Inconclusive {
  std::string buffer;
  std::string reason; // "every element of the reference is NaN", ...
};

struct Report {
  std::string kernel;
  std::string reference = "interp (two-step)";
  std::string device;
  std::array<uint32_t, 3> groups{0, 0, 0}; // the launch's workgroups along x, y and z
  policy::Budget budget;                   // as read from the registry when the comparison ran
  num::FloatControls controls; // the device's, applied to the reference and the comparison
  std::vector<BufferReport> buffers;
  std::vector<std::string> notes; // anything that limits what the comparison proves
  // Buffers whose comparison proves nothing (diff.hpp, "Inconclusive comparisons"), and whether
  // the caller accepted that explicitly (Options::accept_inconclusive).
  std::vector<Inconclusive> inconclusive;
  bool inconclusive_accepted = false;
  // Options::exact_models: an element no rounding model explains is a violation.
  bool exact_models = false;
  // The device's math profile ("correctly rounded", "vulkan"), and whether the comparison used
  // the interval shadow (a non-correctly-rounded profile and a kernel with an op whose device
  // precision is not exact or correctly rounded: specs/device-precision.md).
  std::string math_precision = "correctly rounded";
  bool intervals = false;
  // Lanes whose branch or loop condition the intervals could not decide (interp::Stats).
  uint64_t undecided_lanes = 0;

  uint64_t violations() const;
  // True when no element is a violation and every comparison proved something (or the caller
  // accepted that some did not). A report that compared nothing is never OK.
  bool ok() const { return violations() == 0 && (inconclusive.empty() || inconclusive_accepted); }
};

// A few lines per buffer: counts, max ulps, the first violations with their inputs, then the
// budget with its reasons and the notes. Ends with "result: OK", "result: FAILED (...)" or
// "result: INCONCLUSIVE (...)" (or "result: OK, inconclusive accepted (...)").
std::string to_text(const Report& report);

// One JSON object (no trailing newline):
// {"kernel", "reference", "device", "groups": [x, y, z], "ok", "violations",
//  "budget": {"single_rounding": {"held", "reason"}, "relaxed_accumulation": {"held", "reason"}},
//  "float_controls": {"flush_f16", "flush_f32", "flush_f64", "preserve_signed_zero_inf_nan"},
//  "inconclusive": [{"buffer", "reason"}], "inconclusive_accepted",
//  "buffers": [{"name", "param", "type", "size", "exact", "within_bound", "violations",
//               "unchecked", "within_interval", "undecided", "max_interval_ratio" (null when
//               nothing differs), "max_ulps", "nan_mismatches", "reference_nan", "unchanged",
//               "histogram": {"buckets": [{"label", "lo", "hi", "count"}] (buckets 0 to
//                                          UlpHistogram::used()), "nan_mismatch"},
//               "first_violations": [{"index", "inputs": [{"name", "type", "scalar", "bits",
//                                     "value"}], "reference": {"bits", "value"},
//                                     "device": {"bits", "value"}, "ulps",
//                                     "bound": {"kind", ... "lo", "hi", "error", "shape";
//                                               or "steps", "terms", "abs_sum", "error",
//                                               "narrowed"},
//                                     "models": {"TwoStep": {"bits", "value"}, ...} or null}],
//               "rounding_models": {"elements", "first": {"TwoStep", "FusedF32", "Single",
//                                   "FusedMul"}, "equal": {same keys}, "fits": [...], "explained",
//                                   "unexplained", "max_bound_ratio" (null when nothing differs;
//                                   the string "inf" when the bound admits only the reference),
//                                   "first_unexplained": [as first_violations]},
//               "models": rounding_models.equal, or null when no model was counted}],
//  "exact_models", "math_precision", "intervals", "undecided_lanes", "notes": [...]}
// (a violation's bound under device precision: {"kind": "device precision", "lo", "hi"}).
// Bit patterns and values are strings ("0x3c00", "1", "nan", "-inf") so that every value
// survives a JSON parser; a violation's ulps is null for a NaN against a number; a reason is
// null when the opt-in does not hold.
std::string to_json(const Report& report);

// `s` as a JSON string literal (RFC 8259): quotes, backslashes and control characters escaped,
// bytes that are not valid UTF-8 replaced with U+FFFD, so the document stays valid whatever a
// kernel, file or buffer name holds.
std::string json_quote(std::string_view s);

} // namespace halfway::diff
