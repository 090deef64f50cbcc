#pragma once
// Shadow records: what the interpreter saw at every narrowing site, lane by lane, so that the
// differential checker can judge a device's output against the exact value instead of against
// one particular rounding.
//
// A narrowing site (ir::narrowing_sites) is a Convert from a wider float type to a narrower one.
// Its producer expression is the tree of float add, sub, mul, fma and neg nodes feeding the
// convert (NarrowingSite::producers), stopping at loads, locals, parameters, conversions and any
// other op; those stopping points are the tree's leaves and take the values this run computed.
// The exact value of the producer expression is that tree evaluated without any rounding.
//
// Tolerance: a device that fuses the whole producer tree into the narrowing rounds the exact value
// once; one that rounds every op (the strict two-step model) gets the two-step result. For
// f32 -> f16 a*b+c both lie within 1 f16 ulp + product_sum * 2^-24 of each other
// (docs/measured.md).
//
// Rounding models (specs/f16-narrowing-barrier.md §4): the exact results a device may realise at
// an unbarriered site, each evaluated over the producer tree with the leaves this run computed.
// Every op rounds to nearest-even in the source type unless the model says otherwise; the last
// rounding into the target uses the convert's own rounding:
//  - TwoStep: every op rounded in the source type, then narrowed (the reference);
//  - FusedF32: as TwoStep, but a mul that is an operand of an add or sub (through negations) is
//    contracted into it, one rounding for the pair (LLVM `contract` / fmuladd, NIR ffma fusion);
//    when both operands of the add are muls, the first (args[0]) is contracted, the second rounded,
//    as LLVM's DAG combiner does for single-use products;
//  - Single: the exact value rounded once into the target (a mixed-precision FMA, v_fma_mix);
//  - FusedMul: every mul (not the product inside an fma) rounded once in the source type, every
//    add, sub and fma exact, the root rounded once into the target (v_mad_mix: the product rounded,
//    the sum narrowed directly).

#include "halfway/ir/kernel.hpp"
#include "halfway/support/zeroed_array.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>

namespace halfway::interp {

// Where a narrowed value went, when the convert is the stored value of a store statement.
struct Destination {
  ir::Space space = ir::Space::Buffer;
  uint32_t memory = 0; // parameter id (Buffer), shared-array id (Shared), private-array id
  uint64_t index = 0;  // element index (row-major on rank-2 and rank-3 arrays)
};

enum class RoundingModel : uint8_t { TwoStep, FusedF32, Single, FusedMul };
inline constexpr size_t kRoundingModels = 4;
inline constexpr std::array<RoundingModel, kRoundingModels> kAllRoundingModels = {
    RoundingModel::TwoStep, RoundingModel::FusedF32, RoundingModel::Single,
    RoundingModel::FusedMul};

constexpr std::string_view name(RoundingModel m) {
  switch (m) {
  case RoundingModel::TwoStep:
    return "TwoStep";
  case RoundingModel::FusedF32:
    return "FusedF32";
  case RoundingModel::Single:
    return "Single";
  case RoundingModel::FusedMul:
    return "FusedMul";
  }
  return "TwoStep";
}

// One evaluation of one narrowing site by one lane.
struct ShadowRecord {
  ir::ExprId site = ir::kNone;            // the narrowing Convert node (NarrowingSite::convert)
  uint64_t workgroup = 0;                 // linear workgroup id: x + nx * (y + ny * z)
  uint32_t lane = 0;                      // local invocation index inside the workgroup
  uint64_t global_lane = 0;               // workgroup * workgroup lanes + lane
  std::optional<Destination> destination; // set when the convert is a store's value
  // The producer's value in the source type, rounded op by op (the value the strict model
  // narrows), as a zero-extended bit pattern of NarrowingSite::from.
  uint64_t source_bits = 0;
  // The narrowed value this run produced (two-step, or one rounding of the exact value for a
  // Barrier site under NarrowingModel::SingleRounding), a bit pattern of NarrowingSite::to.
  uint64_t result_bits = 0;
  // The exact value of the producer expression as an unevaluated sum exact_hi + exact_lo:
  // exact_hi is the exact value rounded to the nearest double and exact_lo the remainder rounded
  // to the nearest double. For f32, f16 and bf16 sources with at most two terms (a*b, a*b+c,
  // a*b+c*d, ...) the pair is exact; otherwise it carries at least 106 bits. NaN when the exact
  // value is undefined (inf - inf, 0 * inf, a NaN leaf); exact_hi is +-inf beyond double range.
  double exact_hi = 0;
  double exact_lo = 0;
  // The sum of |x * y| over every product (mul node, and the product of an fma) in the producer
  // tree, each product taken of its operands' exact values; computed exactly, rounded to the
  // nearest double. 0 when the tree has no product.
  double product_sum = 0;
  // The site's result under each rounding model, indexed by RoundingModel: bit patterns of
  // NarrowingSite::to (at most 32 bits wide, the widest narrowing target being f32), not flushed.
  std::array<uint32_t, kRoundingModels> models{};
};

// One evaluation of one narrowing site by the active lanes of a batch of workgroups, column by
// column: entry k of every column belongs to the k-th active lane, lanes in increasing order. It
// holds what `count` ShadowRecords would (record(k) builds one), without a 112-byte record per
// lane: the differential checker reads the columns it needs and builds a record only for the
// few elements whose bound it must compute. The pointers are valid during ShadowSink::take only.
struct ShadowLanes {
  ir::ExprId site = ir::kNone;  // the narrowing Convert node
  size_t count = 0;             // lanes that evaluated the site: the length of every column
  uint64_t first_workgroup = 0; // the batch's first workgroup (linear id)
  uint32_t wg_lanes = 1;        // lanes per workgroup
  // The lane's index in the batch: workgroup first_workgroup + lane / wg_lanes, local invocation
  // lane % wg_lanes.
  const uint32_t* lane = nullptr;
  const uint64_t* source_bits = nullptr;                 // ShadowRecord::source_bits
  std::array<const uint32_t*, kRoundingModels> models{}; // ShadowRecord::models, per model
  // ShadowRecord::result_bits is models[Single] when the run rounded the site once, else
  // models[TwoStep].
  bool single = false;
  const double* exact_hi = nullptr;
  const double* exact_lo = nullptr;
  const double* product_sum = nullptr;
  // Set when the convert is a store's value: every lane stored into `memory` of `space`, at
  // index[k] (ShadowRecord::destination).
  bool stored = false;
  ir::Space space = ir::Space::Buffer;
  uint32_t memory = 0;
  const uint64_t* index = nullptr;

  uint32_t result_bits(size_t k) const {
    return models[static_cast<size_t>(single ? RoundingModel::Single : RoundingModel::TwoStep)][k];
  }
  ShadowRecord record(size_t k) const {
    ShadowRecord r;
    r.site = site;
    r.workgroup = first_workgroup + lane[k] / wg_lanes;
    r.lane = lane[k] % wg_lanes;
    r.global_lane = first_workgroup * wg_lanes + lane[k];
    if (stored)
      r.destination = Destination{space, memory, index[k]};
    r.source_bits = source_bits[k];
    r.result_bits = result_bits(k);
    r.exact_hi = exact_hi[k];
    r.exact_lo = exact_lo[k];
    r.product_sum = product_sum[k];
    for (size_t m = 0; m < kRoundingModels; ++m)
      r.models[m] = models[m][k];
    return r;
  }
};

// Takes the shadow of a launch while it runs, instead of Stats::shadow (Options::sink): each
// worker hands over the site evaluations of one batch of workgroups once the batch has finished,
// destinations attached, in the order a deterministic run makes them within the batch
// (statement by statement, then lane by lane). Batches arrive from several worker threads at
// once and in no fixed order between them, so take() must be thread-safe; the columns are only
// valid during the call. For the differential checker, which judges every element where it is
// computed rather than keeping a record per evaluation (a launch over 2^24 elements would
// otherwise gather gigabytes). An exception thrown by take() fails the launch like any other
// (the buffers are restored).
class ShadowSink {
public:
  virtual ~ShadowSink() = default;
  virtual void take(std::span<const ShadowLanes> evaluations) = 0;
};

// Relaxed accumulation (specs/f16-narrowing-barrier.md §5). An accumulation local is a float local
// assigned by one of ir::accumulations(kernel) (`acc = acc + e`, `acc = e + acc`, `acc = acc - e`,
// `acc = fma(a, b, acc)` in a loop). With Options::shadow the interpreter keeps, per lane and per
// accumulation local, the bookkeeping of the sum the local holds since its last plain definition
// (a `let` or an assignment that is not an accumulation step; its value is the sum's initial term):
//  - steps: the accumulation statements executed;
//  - terms: the number of terms t_k summed: 1 for the initial value, plus for each step the
//    monomials of its term e (the products and leaves e is a sum of: e = a*b is one term,
//    e = a*b + c*d two; a leaf of e is any node that is not a float add, sub, mul, fma or neg);
//  - depth: the most multiplications in one monomial (1 for a dot product, 0 for a plain sum);
//  - abs_sum: Sum |t_k|, the monomials evaluated as products of the |values| of their leaves.
//    Computed in double, every operation rounded to nearest: each of the at most
//    terms + depth operations on a monomial's path has relative error <= 2^-53 on non-negative
//    values, so the exact sum is at most abs_sum * (1 + gamma) with
//    gamma = m * 2^-53 / (1 - m * 2^-53), m = terms + depth, plus terms * 2^-1074 where double
//    products underflow (upper_abs_sum() below). +inf or NaN when a leaf is not finite;
//  - underflow_weight: a product whose result is subnormal is off by up to half the smallest
//    subnormal spacing eta, not by a relative error, and the monomial's later factors scale that
//    (specs/f16-narrowing-barrier.md §5, "Underflow"). The weight is the sum, over the monomials
//    and over their multiplications that may underflow, of Prod max(1, |leaf|) over the leaves
//    multiplied in after it, in the same double bookkeeping; a multiplication of two single
//    monomials whose |product| is at least twice the smallest normal cannot underflow and counts
//    nothing. upper_underflow_weight() bounds the exact weight.
// A store whose value is such a local, or a float conversion of it (`y[row] = acc`,
// `y16[row] = narrow<f16>(acc)`), makes one AccumulationRecord per active lane. The bookkeeping
// becomes unbounded (bounded == false on the records) when a lane's sum is defined from, or a
// step's term reads, an accumulation local (the error of one sum would flow into another), or
// when an atomic writes the local. Every other store or atomic to a buffer or shared array that
// some accumulation store targets makes a record with bounded == false for its element, so that
// the last record of an element always describes its final value. Values that reach the sum
// through other locals are taken as given.
struct AccumulationRecord {
  uint32_t local = ir::kNone;                // the accumulation local (ir::kNone: another store)
  uint64_t workgroup = 0;                    // linear workgroup id
  uint32_t lane = 0;                         // local invocation index inside the workgroup
  uint64_t global_lane = 0;                  // workgroup * workgroup lanes + lane
  Destination destination;                   // the element the store wrote
  ir::ScalarType type = ir::ScalarType::F32; // the accumulation local's type
  bool bounded = false;                      // the fields below describe the stored value
  uint64_t steps = 0;                        // n: accumulation steps
  uint64_t terms = 0;                        // terms summed, the initial value included
  uint32_t depth = 0;                        // most multiplications in one term
  double abs_sum = 0;                        // Sum |t_k| as computed (see above)
  double underflow_weight = 0;               // as computed (see above)

  // An upper bound of the exact Sum |t_k|, accounting for the rounding of abs_sum.
  double upper_abs_sum() const { return inflate(abs_sum); }
  // The same for underflow_weight.
  double upper_underflow_weight() const { return inflate(underflow_weight); }

private:
  double inflate(double v) const {
    const double m = static_cast<double>(terms + depth + 1) * 0x1p-53;
    return v * (1 + m / (1 - m)) * (1 + 0x1p-52) + static_cast<double>(terms) * 0x1p-1074;
  }
};

// The interval shadow (Options::intervals, specs/device-precision.md): the values a device that
// follows Options::profile could produce for one value. Floats: every such value lies in
// [lo, hi] (values of the value's format, as doubles; a NaN point when the reference is NaN).
// Integers and bools carry no ends: decided means the device computes exactly the reference's
// value. Undecided: the interval could not decide a comparison, branch, index or reinterpretation
// on the way, or the precision table leaves the result undefined there.
struct ValueInterval {
  double lo = 0, hi = 0;
  bool undecided = false;
  // Elements of written buffers only: a store or atomic of the launch wrote the element. One the
  // launch left alone may still have been written by a lane that took a branch the intervals could
  // not decide (Stats::undecided_lanes) on the way the reference did not take.
  bool stored = false;
};

// The intervals of one written buffer's elements (Stats::intervals), one per element, in pages
// that start zeroed (ValueInterval{}) and are filled where the interpreter's threads first write
// them: 24 bytes per element, 400 MB for 2^24 elements, which value-initialising a std::vector
// on one thread took a third of an interval diff to provide.
class ElementIntervals {
public:
  ElementIntervals() = default;
  explicit ElementIntervals(size_t count) : data_(count), size_(count) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  ValueInterval* data() const { return data_.get(); }
  ValueInterval& operator[](size_t i) const { return data_[i]; }
  ValueInterval& at(size_t i) const {
    if (i >= size_)
      throw std::out_of_range("ElementIntervals::at");
    return data_[i];
  }
  ValueInterval* begin() const { return data_.get(); }
  ValueInterval* end() const { return data_.get() + size_; }

private:
  support::ZeroedArray<ValueInterval> data_;
  size_t size_ = 0;
};

} // namespace halfway::interp
