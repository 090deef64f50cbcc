#include "halfway/diff/bound.hpp"

#include "exact.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/ulp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace halfway::diff {

namespace {

num::Rounding rounding_of(ir::RoundingMode m) {
  switch (m) {
  case ir::RoundingMode::TowardZero:
    return num::Rounding::TowardZero;
  case ir::RoundingMode::Up:
    return num::Rounding::Up;
  case ir::RoundingMode::Down:
    return num::Rounding::Down;
  default:
    return num::Rounding::NearestEven;
  }
}

// An interval end as a value; NaN ends (an E4M3 overflow, or a NaN exact value) count as the
// infinity of their sign so that comparisons stay ordered.
double end_value(num::Format f, uint64_t bits) {
  double v = num::to_double(f, bits);
  if (std::isnan(v))
    return num::sign_bit(f, bits) ? -std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::infinity();
  return v;
}

} // namespace

std::string_view name(Bound::Kind kind) {
  switch (kind) {
  case Bound::Kind::BitExact:
    return "bit-exact";
  case Bound::Kind::SingleRounding:
    return "single rounding";
  case Bound::Kind::Unchecked:
    return "unchecked";
  case Bound::Kind::RelaxedAccumulation:
    return "relaxed accumulation";
  case Bound::Kind::DevicePrecision:
    return "device precision";
  }
  return "bit-exact";
}

std::string describe(const Bound& bound, ir::ScalarType type) {
  switch (bound.kind) {
  case Bound::Kind::BitExact:
    return "bit-exact";
  case Bound::Kind::Unchecked:
    return "unchecked (relaxed accumulation)";
  case Bound::Kind::RelaxedAccumulation: {
    char buf[160];
    std::snprintf(
        buf, sizeof buf,
        "relaxed accumulation (%llu steps, %llu terms, sum |t| = %.6g): |d - r| <= %.3g%s",
        static_cast<unsigned long long>(bound.steps), static_cast<unsigned long long>(bound.terms),
        bound.abs_sum, bound.error, bound.narrowed ? " + 1 ulp" : "");
    return buf;
  }
  case Bound::Kind::DevicePrecision:
    return "device precision: [" + format_value(type, bound.lo) + ", " +
           format_value(type, bound.hi) + "]";
  case Bound::Kind::SingleRounding:
    break;
  }
  char e[32];
  std::snprintf(e, sizeof e, "%.3g", bound.error);
  return "single rounding (" + std::string(ir::name(bound.shape)) + "): [" +
         format_value(type, bound.lo) + ", " + format_value(type, bound.hi) + "], E = " + e;
}

SkippedError::SkippedError(const ir::Kernel& kernel, const ir::NarrowingSite& site)
    : shape_(site.shape), u_(std::ldexp(1.0, -static_cast<int>(ir::info(site.from).precision))) {
  if (shape_ == ir::SiteShape::Chain)
    for (ir::ExprId id : site.producers)
      if (id != site.producer && ir::info(kernel.expr(id).op).rounds)
        ++rounding_ops_;
}

double skipped_error(const ir::Kernel& kernel, const ir::NarrowingSite& site,
                     const interp::ShadowRecord& record) {
  return SkippedError(kernel, site)(record.product_sum, record.exact_hi);
}

Bound single_rounding_bound(const ir::Kernel& kernel, const ir::NarrowingSite& site,
                            const interp::ShadowRecord& record, uint64_t reference,
                            const num::FloatControls& controls) {
  (void)reference; // accepted by accepts(); never needed to build the interval
  Bound b;
  b.kind = Bound::Kind::SingleRounding;
  b.shape = site.shape;
  b.site = site.convert;
  b.exact = record.exact_hi;
  const num::Format t = *float_format(site.to), s = *float_format(site.from);
  const ir::Expr& convert = kernel.expr(site.convert);
  const num::Rounding r = rounding_of(convert.rounding);
  const num::Fp8Overflow ov = convert.saturate ? num::Fp8Overflow::Saturate : num::Fp8Overflow::Nan;

  if (!std::isfinite(record.exact_hi)) { // NaN or an infinity: its own rounding, nothing else
    b.lo = b.hi = num::from_double(t, record.exact_hi, r, ov);
    return b;
  }
  b.error = skipped_error(kernel, site, record);
  // Rounded once from the exact value, and rounded to the source first (nearest-even), then to
  // the target: the two things a device may do with the root of the producer tree.
  auto once = [&](double delta) {
    return num::from_double(t, detail::sum_odd(record.exact_hi, record.exact_lo, delta), r, ov);
  };
  auto twice = [&](double delta) {
    uint64_t src =
        s == num::Format::F64
            ? num::f64_bits(detail::sum_nearest(record.exact_hi, record.exact_lo, delta))
            : num::from_double(s, detail::sum_odd(record.exact_hi, record.exact_lo, delta));
    // convert_bits(s, src, t, r, ov), through from_double's fast paths: the source value is exact
    // in a double, and both round it once into t.
    return num::from_double(t, num::to_double(s, src), r, ov);
  };
  uint64_t d1 = once(-b.error), d2 = twice(-b.error), u1 = once(b.error), u2 = twice(b.error);
  b.lo = end_value(t, d1) <= end_value(t, d2) ? d1 : d2;
  b.hi = end_value(t, u1) >= end_value(t, u2) ? u1 : u2;
  b.lo = num::apply_flush(t, b.lo, controls);
  b.hi = num::apply_flush(t, b.hi, controls);
  return b;
}

Bound relaxed_accumulation_bound(const interp::AccumulationRecord& record, ir::ScalarType stored,
                                 uint64_t reference, const num::FloatControls& controls) {
  Bound b;
  b.kind = Bound::Kind::Unchecked;
  const auto acc = float_format(record.type), t = float_format(stored);
  if (!record.bounded || !acc || !t || record.terms == 0)
    return b;
  const double u = std::ldexp(1.0, -num::info(*acc).precision());
  const double m = static_cast<double>(record.terms - 1 + record.depth);
  const double sum = record.upper_abs_sum();
  if (m * u >= 0.5 || !std::isfinite(sum))
    return b;
  constexpr double kSlack = 1 + 0x1p-50;
  const double gamma = m * u / (1 - m * u);
  double error = 2 * gamma * sum;
  if (num::flushes(*acc, controls))
    error += 2 * m * static_cast<double>(record.terms) * num::info(*acc).min_normal_value;
  // Underflow: a subnormal product is off by up to half the smallest subnormal, absolutely, and
  // the monomial's later factors scale that (campaign 20261207, kernel 28489: an f16 sum of
  // x * 2^-21 * -1409, whose inner product the CPU device kept unrounded).
  const double eta =
      std::ldexp(num::info(*acc).min_normal_value, -static_cast<int>(num::info(*acc).precision()));
  const double weight = record.upper_underflow_weight();
  if (!std::isfinite(weight))
    return b;
  error += 2 * eta * weight * (1 + gamma);
  b.kind = Bound::Kind::RelaxedAccumulation;
  b.error = error * kSlack;
  b.exact = num::to_double(*t, reference);
  b.steps = record.steps;
  b.terms = record.terms;
  b.abs_sum = record.abs_sum;
  b.narrowed = num::info(*t).precision() < num::info(*acc).precision() ||
               num::info(*t).emax < num::info(*acc).emax ||
               num::info(*t).emin > num::info(*acc).emin;
  return b;
}

bool accepts(const Bound& bound, ir::ScalarType type, uint64_t reference, uint64_t device,
             const num::FloatControls& controls) {
  if (same_bits(type, reference, device, controls))
    return true;
  switch (bound.kind) {
  case Bound::Kind::BitExact:
    return false;
  case Bound::Kind::Unchecked:
    return true;
  case Bound::Kind::RelaxedAccumulation: {
    auto f = float_format(type);
    if (!f)
      return false;
    const double r = num::to_double(*f, num::apply_flush(*f, reference, controls));
    const double d = num::to_double(*f, num::apply_flush(*f, device, controls));
    if (!std::isfinite(r) || !std::isfinite(d))
      return false;
    double allowed = bound.error;
    if (bound.narrowed)
      allowed += num::ulp_of(*f, std::max(std::fabs(r), std::fabs(d)));
    return std::fabs(d - r) <= allowed;
  }
  case Bound::Kind::SingleRounding:
  case Bound::Kind::DevicePrecision:
    break;
  }
  auto f = float_format(type);
  if (!f)
    return false;
  uint64_t d = num::apply_flush(*f, device, controls);
  if (num::is_nan(*f, d))
    return num::is_nan(*f, bound.lo) || num::is_nan(*f, bound.hi);
  double v = num::to_double(*f, d);
  return end_value(*f, bound.lo) <= v && v <= end_value(*f, bound.hi);
}

std::optional<double> bound_ratio(const Bound& bound, num::Format f, uint64_t reference,
                                  uint64_t device, const num::FloatControls& controls) {
  const double r = num::to_double(f, num::apply_flush(f, reference, controls));
  const double d = num::to_double(f, num::apply_flush(f, device, controls));
  if (!std::isfinite(r) || !std::isfinite(d))
    return std::nullopt;
  const double end = d > r ? end_value(f, bound.hi) : end_value(f, bound.lo);
  const double width = std::fabs(end - r), diff = std::fabs(d - r);
  if (diff == 0)
    return 0.0;
  return width == 0 ? std::numeric_limits<double>::infinity() : diff / width;
}

} // namespace halfway::diff
