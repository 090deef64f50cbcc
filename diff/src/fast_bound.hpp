#pragma once
// The site judge's fast path (sites.cpp): the §4 bound's verdict on one element, for the common
// site, with inline arithmetic instead of the generic bound functions (bound.hpp).

#include "exact.hpp"
#include "halfway/interp/shadow.hpp"
#include "halfway/numerics/formats.hpp"
#include "halfway/numerics/nearest.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace halfway::diff::detail {

// The §4 bound's verdict on a device value that differs from the reference, for the common site
// (an f32 producer rounded to nearest into T = f16, bf16 or f32, nothing flushed): the ends
// single_rounding_bound computes, and what accepts and bound_ratio make of them, with inline
// arithmetic (the judge bounds millions of elements). Nothing when a case falls outside it (a
// value or an end that is not finite, a sum the error-free path cannot decide): the generic
// functions decide those.
// A site qualifies when its producer is f32 and its convert rounds to nearest; the caller passes
// the site's skipped error E (skipped_error) and makes sure nothing is flushed.
struct FastVerdict {
  bool inside = false;
  double ratio = 0;
};

template <num::Format T>
std::optional<FastVerdict> fast_verdict(double exact_hi, double exact_lo, double error,
                                        uint64_t ref, uint64_t device) {
  namespace nearest = num::nearest;
  constexpr int kTotal = nearest::Layout<T>::kTotal, kFrac = nearest::Layout<T>::P - 1;
  constexpr uint64_t kExp = ((uint64_t{1} << (kTotal - 1)) - 1) & ~((uint64_t{1} << kFrac) - 1);
  auto finite = [](uint64_t bits) { return (bits & kExp) != kExp; };
  if (!std::isfinite(exact_hi) || !finite(ref) || !finite(device))
    return std::nullopt;
  // Only the end on the device's side decides (the device differs from the reference, and the
  // reference lies inside the bound): the upper end (+error) above it, the lower one below.
  const double rv = nearest::to_double<T>(ref), dv = nearest::to_double<T>(device);
  const bool up = dv > rv;
  const std::optional<double> odd = fast_sum_odd(exact_hi, exact_lo, up ? error : -error);
  if (!odd)
    return std::nullopt;
  // Rounded once from the exact value, and through the f32 source first.
  const uint64_t once = nearest::from_finite<T>(*odd);
  const uint64_t source = nearest::from_finite<num::Format::F32>(*odd);
  if (!finite(once) || (source & 0x7f800000u) == 0x7f800000u)
    return std::nullopt;
  const double via = nearest::to_double<num::Format::F32>(source);
  const uint64_t twice = T == num::Format::F32 ? source : nearest::from_finite<T>(via);
  if (!finite(twice))
    return std::nullopt;
  const double a = nearest::to_double<T>(once), b = nearest::to_double<T>(twice);
  const double end = up ? std::max(a, b) : std::min(a, b);
  FastVerdict v;
  v.inside = up ? dv <= end : end <= dv;
  const double width = std::fabs(end - rv), diff = std::fabs(dv - rv);
  v.ratio = diff == 0 ? 0 : width == 0 ? std::numeric_limits<double>::infinity() : diff / width;
  return v;
}

// The shadow record's exact value exact_hi + exact_lo.
inline std::optional<FastVerdict> fast_verdict(num::Format t, double exact_hi, double exact_lo,
                                               double error, uint64_t ref, uint64_t device) {
  switch (t) {
  case num::Format::F16:
    return fast_verdict<num::Format::F16>(exact_hi, exact_lo, error, ref, device);
  case num::Format::BF16:
    return fast_verdict<num::Format::BF16>(exact_hi, exact_lo, error, ref, device);
  case num::Format::F32:
    return fast_verdict<num::Format::F32>(exact_hi, exact_lo, error, ref, device);
  default:
    return std::nullopt;
  }
}

} // namespace halfway::diff::detail
