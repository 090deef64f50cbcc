#pragma once
// What a device may return for one output element, and the check against it.
//
// Without an opt-in every element is compared bit for bit (compare.hpp). With single rounding, an
// element written by an unbarriered narrowing site gets the interval of
// specs/f16-narrowing-barrier.md §4, computed from that evaluation's shadow record:
//
//   x = the exact value of the producer expression (exact_hi + exact_lo),
//   E = the source-precision error a device may skip (skipped_error below),
//   lo = min(R_t(x - E), R_t(R_s(x - E))),  hi = max(R_t(x + E), R_t(R_s(x + E))),
//
// R_t the site's own rounding into the target (nearest-even unless the convert says otherwise),
// R_s nearest-even into the source type. Every value between lo and hi (by value, so +0 and -0
// alike) is accepted, and so is the interpreter's own result (which always lies inside, except
// when the two-step evaluation overflowed to an infinity or a NaN where the exact value did not:
// then a fused device may legitimately return the rounding of the exact value instead, and both
// are accepted). In formats the device flushes, the ends are flushed too.
//
// E per shape (§4 table): 0 for a product, a single op or a value that is not rounded (only the
// tie of Lemma A remains); u_s * product_sum for a multiply-add (u_s = 2^-q, 2^-24 for f32); for a
// chain with n intermediate rounding ops, u_s * n * (2 * product_sum + |x|) / (1 - n * u_s), which
// bounds the general rule for sums of products with at most one addend that is not a product, and
// estimates it (to first order) otherwise: the interpreter records no per-node magnitudes from
// which the general rule could be evaluated exactly.
//
// With relaxed accumulation, an element whose last accumulation record (interp shadow.hpp,
// AccumulationRecord) is bounded gets the §5 bound: the reference and the device each summed the
// same terms in some order, each within gamma_m * Sum|t_k| of the exact sum, so
//
//   |device - reference| <= 2 * gamma_m * S  (+ one ulp of the stored type, at the larger of the
//                                             two values, when the store narrows)
//
// with u = 2^-p of the accumulation type, m = terms - 1 + depth (additions a term passes through
// plus the multiplications inside it) and gamma_m = m*u / (1 - m*u); S = upper_abs_sum(), an upper
// bound of the exact Sum|t_k| over the rounding of the interpreter's double bookkeeping. Where the
// device flushes subnormals of the accumulation type, each of the m operations on a term may lose
// up to one smallest normal more: 2 * m * terms * min_normal is added. A product that may be
// subnormal is off by up to eta (half the smallest subnormal spacing) absolutely, scaled by the
// factors after it: 2 * eta * W * (1 + gamma_m) is added, W = upper_underflow_weight(). The bound
// is computed in double and inflated by 2^-50 relative so that its own rounding never shrinks it.
// An element whose record is unbounded, whose Sum|t_k| is not finite or whose m*u >= 1/2 is
// unchecked.

#include "halfway/interp/shadow.hpp"
#include "halfway/ir/kernel.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "halfway/numerics/formats.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace halfway::diff {

struct Bound {
  enum class Kind : uint8_t {
    BitExact,            // no opt-in covers this element
    SingleRounding,      // the §4 interval
    Unchecked,           // relaxed accumulation holds and nothing bounds the element (see diff.hpp)
    RelaxedAccumulation, // |device - reference| <= error (+ one ulp when `narrowed`)
    // The device's documented math precision (specs/device-precision.md): the element's
    // propagated interval [lo, hi] from the interpreter's interval shadow.
    DevicePrecision,
  };
  Kind kind = Kind::BitExact;
  // SingleRounding, DevicePrecision: the interval's ends, bit patterns of the element type.
  uint64_t lo = 0, hi = 0;
  double error = 0; // E
  double exact = 0; // x, rounded to a double (for reports)
  ir::SiteShape shape = ir::SiteShape::NotRounded;
  ir::ExprId site = ir::kNone; // the narrowing convert node
  // RelaxedAccumulation: the record's term count, accumulation steps and Sum|t_k| (error is the
  // bound on |device - reference| before the narrowing ulp, exact the reference value).
  uint64_t steps = 0, terms = 0;
  double abs_sum = 0;
  bool narrowed = false; // the store narrowed the accumulation type: one ulp more is accepted
};

std::string_view name(Bound::Kind kind);
// "bit-exact", "single rounding (multiply-add): [0.5 (0x3800), 0.50048828 (0x3801)], E = 1.2e-08".
std::string describe(const Bound& bound, ir::ScalarType type);

// E for the evaluations of one site (see above), from the two fields of a record it reads: the
// site's constants are worked out once, since the checker evaluates E for millions of elements.
class SkippedError {
public:
  SkippedError() = default; // E = 0
  SkippedError(const ir::Kernel& kernel, const ir::NarrowingSite& site);
  double operator()(double product_sum, double exact_hi) const {
    constexpr double kSlack = 1 + 0x1p-50; // E is an upper bound: never let rounding shrink it
    switch (shape_) {
    case ir::SiteShape::MulAdd:
      return u_ * product_sum * kSlack;
    case ir::SiteShape::Chain:
      return rounding_ops_ == 0 ? 0
                                : u_ * rounding_ops_ * (2 * product_sum + std::fabs(exact_hi)) /
                                      (1 - rounding_ops_ * u_) * kSlack;
    default:
      return 0;
    }
  }

private:
  ir::SiteShape shape_ = ir::SiteShape::NotRounded;
  double u_ = 0;            // the unit roundoff of the site's source type
  double rounding_ops_ = 0; // Chain: producer ops below the root that round
};

// E for one evaluation of `site`.
double skipped_error(const ir::Kernel& kernel, const ir::NarrowingSite& site,
                     const interp::ShadowRecord& record);

// The §4 interval for one evaluation of a narrowing site whose reference result is `reference`.
Bound single_rounding_bound(const ir::Kernel& kernel, const ir::NarrowingSite& site,
                            const interp::ShadowRecord& record, uint64_t reference,
                            const num::FloatControls& controls);

// The §5 bound for an element of type `stored` whose last accumulation record is `record`;
// Unchecked when the record does not bound it (see above).
Bound relaxed_accumulation_bound(const interp::AccumulationRecord& record, ir::ScalarType stored,
                                 uint64_t reference, const num::FloatControls& controls);

// Whether `device` is acceptable for `reference` under `bound` (BitExact: same_bits; Unchecked:
// always; RelaxedAccumulation: both finite numbers within the bound, after flushing).
bool accepts(const Bound& bound, ir::ScalarType type, uint64_t reference, uint64_t device,
             const num::FloatControls& controls);

// For an interval bound (SingleRounding, DevicePrecision): |device - reference| over the distance
// from the reference to the interval's end on the device's side (NaN ends count as infinities of
// their sign), after flushing; 0 when they are equal, at most 1 inside the interval. None when
// either is not a finite number.
std::optional<double> bound_ratio(const Bound& bound, num::Format f, uint64_t reference,
                                  uint64_t device, const num::FloatControls& controls);

} // namespace halfway::diff
