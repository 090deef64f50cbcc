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
// once; one that rounds every op (the strict two-step model) gets `result_bits` under TwoStep. For
// f32 -> f16 a*b+c both lie within 1 f16 ulp + product_sum * 2^-24 of each other
// (shared/notes/measured.md).

#include "halfway/ir/kernel.hpp"

#include <cstdint>
#include <optional>

namespace halfway::interp {

// Where a narrowed value went, when the convert is the stored value of a store statement.
struct Destination {
  ir::Space space = ir::Space::Buffer;
  uint32_t memory = 0; // parameter id (Space::Buffer) or shared-array id (Space::Shared)
  uint64_t index = 0;  // element index
};

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
};

} // namespace halfway::interp
