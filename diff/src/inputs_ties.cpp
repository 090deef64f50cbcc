// Operands that put a*b or a*b + c on the ties of f16 or bf16, and the exact checks behind them.
#include "exact.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/ulp.hpp"
#include "halfway/support/error.hpp"
#include "random.hpp"

#include <algorithm>
#include <cmath>

namespace halfway::diff::inputs {

namespace {

num::Format tie_target(ir::ScalarType target) {
  if (target == ir::ScalarType::F16)
    return num::Format::F16;
  if (target == ir::ScalarType::BF16)
    return num::Format::BF16;
  throw Error(ErrorKind::Usage, "tie-stressing inputs narrow f32 to f16 or bf16, not to " +
                                    std::string(ir::name(target)));
}

// A positive rounding tie of t in binade e: a value of t plus half its ulp (the overflow
// threshold when the value is the largest finite one; between two subnormals in the binades
// below the smallest normal).
double random_tie(detail::Random& r, num::Format t, int e) {
  const num::FormatInfo& fi = num::info(t);
  e = std::clamp(e, fi.emin - fi.man_bits, fi.emax);
  const double v = num::to_double(t, r.float_in_binade(t, e, true));
  return v + std::ldexp(1.0, std::max(e, fi.emin) - fi.man_bits - 1);
}

// A random positive f32 in [1/8, 16).
float random_factor(detail::Random& r) {
  return num::f32_from_bits(
      static_cast<uint32_t>(r.float_in_binade(num::Format::F32, r.in(-3, 3), true)));
}

float step(float x, int k) {
  for (; k > 0; --k)
    x = std::nextafter(x, INFINITY);
  for (; k < 0; ++k)
    x = std::nextafter(x, -INFINITY);
  return x;
}

MulAdd make(size_t n) {
  return {rt::HostBuffer(ir::ScalarType::F32, n), rt::HostBuffer(ir::ScalarType::F32, n),
          rt::HostBuffer(ir::ScalarType::F32, n)};
}

void put(MulAdd& m, size_t i, float a, float b, float c) {
  m.a.set_bits(i, num::f32_bits(a));
  m.b.set_bits(i, num::f32_bits(b));
  m.c.set_bits(i, num::f32_bits(c));
}

void check_ties(ir::ScalarType target, int tries, size_t found) {
  if (tries > 1000)
    throw Error(ErrorKind::Internal, "no tie found after 1000 tries for element " +
                                         std::to_string(found) + " (" +
                                         std::string(ir::name(target)) + ")");
}

} // namespace

bool near_tie(ir::ScalarType target, float a, float b, float c) {
  const num::Format t = tie_target(target);
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(c))
    return false;
  const double x = detail::mul_add_odd(a, b, c);
  if (!std::isfinite(x))
    return false;
  const uint64_t down = num::from_double(t, x, num::Rounding::Down);
  const uint64_t up = num::from_double(t, x, num::Rounding::Up);
  if (down == up)
    return false; // x is a value of t
  const double lo = num::to_double(t, down), hi = num::to_double(t, up);
  double m;
  if (std::isinf(hi)) // beyond the largest finite value: the overflow threshold
    m = lo + std::ldexp(1.0, num::info(t).emax - num::info(t).man_bits - 1);
  else if (std::isinf(lo))
    m = hi - std::ldexp(1.0, num::info(t).emax - num::info(t).man_bits - 1);
  else
    m = lo / 2 + hi / 2;
  const double ulp = num::ulp_of(num::Format::F32, m);
  return detail::compare_mul_add(a, b, c, m) != 0 &&
         detail::compare_mul_add(a, b, c, m - ulp) >= 0 &&
         detail::compare_mul_add(a, b, c, m + ulp) <= 0;
}

uint64_t two_step(ir::ScalarType target, float a, float b, float c) {
  const float p = a * b; // the project builds with -ffp-contract=off: two roundings
  const float s = p + c;
  return num::convert_bits(num::Format::F32, num::f32_bits(s), tie_target(target));
}

uint64_t single_rounding(ir::ScalarType target, float a, float b, float c) {
  return num::from_double(tie_target(target), detail::mul_add_odd(a, b, c));
}

MulAdd product_ties(size_t n, ir::ScalarType target, uint64_t seed, Exponents ties) {
  const num::Format t = tie_target(target);
  detail::Random r(seed);
  MulAdd out = make(n);
  for (size_t i = 0; i < n; ++i) {
    for (int tries = 0;; ++tries) {
      check_ties(target, tries, i);
      const double m =
          random_tie(r, t, r.in(std::min(ties.min, ties.max), std::max(ties.min, ties.max)));
      float a = random_factor(r);
      const float b0 = static_cast<float>(m / a);
      float b = 0;
      bool found = false;
      for (int k = -3; k <= 3 && !found; ++k) {
        b = step(b0, k);
        const double p = static_cast<double>(a) * b; // exact: 48 bits
        found = static_cast<float>(p) == static_cast<float>(m) && p != m;
      }
      if (!found)
        continue;
      if (r.coin())
        a = -a; // the tie at -m
      if (r.coin())
        a = -a, b = -b;
      if (!near_tie(target, a, b, 0.0f))
        continue;
      put(out, i, a, b, 0.0f);
      break;
    }
  }
  return out;
}

MulAdd mul_add_ties(size_t n, ir::ScalarType target, uint64_t seed, Exponents ties) {
  const num::Format t = tie_target(target);
  detail::Random r(seed);
  MulAdd out = make(n);
  for (size_t i = 0; i < n; ++i) {
    for (int tries = 0;; ++tries) {
      check_ties(target, tries, i);
      double m = random_tie(r, t, r.in(std::min(ties.min, ties.max), std::max(ties.min, ties.max)));
      if (r.coin())
        m = -m;
      const float a = random_factor(r);
      const float b = static_cast<float>(m * (0.5 + 1.5 * r.unit()) / a);
      const float p = a * b;
      if (!(std::fabs(p) >= std::fabs(m) / 2 && std::fabs(p) <= 2 * std::fabs(m)))
        continue;
      const float c = static_cast<float>(m) - p; // exact (Sterbenz): RN32(a*b) + c is the tie
      if (static_cast<double>(c) != m - static_cast<double>(p))
        continue;
      if (static_cast<double>(a) * b == static_cast<double>(p))
        continue; // exactly on the tie
      float sa = a, sb = b;
      if (r.coin())
        sa = -a, sb = -b;
      if (!near_tie(target, sa, sb, c))
        continue;
      put(out, i, sa, sb, c);
      break;
    }
  }
  return out;
}

MulAdd cancellation(size_t n, ir::ScalarType target, uint64_t seed) {
  const num::Format t = tie_target(target);
  detail::Random r(seed);
  MulAdd out = make(n);
  for (size_t i = 0; i < n; ++i) {
    double m = num::to_double(t, r.float_in_binade(t, r.in(-4, 4)));
    if (r.coin())
      m += std::copysign(num::ulp_of(t, m) / 2, m); // a tie half of the time
    const double product = -m * std::ldexp(1.0 + r.unit(), r.in(8, 20));
    const float a = random_factor(r);
    const float b = static_cast<float>(product / a);
    const float p = a * b;
    const float c = static_cast<float>(m - static_cast<double>(p));
    put(out, i, a, b, c);
  }
  return out;
}

} // namespace halfway::diff::inputs
