// The interval shadow (interval.hpp, specs/device-precision.md). Every interval end is a value of
// the register's format; an op computes its ends from its operands' ends with the interpreter's
// own correctly rounded numerics (monotone, so rounding the ends rounds outward), then widens them
// by what the op table's device precision column allows: n ulps become n representable steps,
// absolute errors are subtracted and added with rounding away from the interval.
#include "interval.hpp"

#include "access.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/math.hpp"
#include "halfway/numerics/nearest.hpp"
#include "slots.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>

namespace halfway::interp {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Iv kUndecided{0, 0, true};

Iv point(double v) {
  return {v, v, false};
}
bool is_point(const Iv& a) {
  return !a.undecided && (std::bit_cast<uint64_t>(a.lo) == std::bit_cast<uint64_t>(a.hi) ||
                          (std::isnan(a.lo) && std::isnan(a.hi)));
}

// Float helpers on values of format f held as doubles.
uint64_t bits_of(num::Format f, double v) {
  return num::from_double(f, v);
}
// Finite f32 patterns (most of the values a kernel computes) inline.
double value_of(num::Format f, uint64_t b) {
  if (f == num::Format::F32 && (b & 0x7f800000u) != 0x7f800000u)
    return num::nearest::to_double<num::Format::F32>(b);
  return num::to_double(f, b);
}

// v moved by n representable values of f (n < 0: downwards), stopping at the infinities (or the
// largest finite value of formats without one).
double step(num::Format f, double v, int64_t n) {
  if (std::isnan(v) || n == 0)
    return v;
  if (f == num::Format::F32) { // the same on the float's bits, inline (interval ends of f32 ops)
    const uint32_t b = std::bit_cast<uint32_t>(static_cast<float>(v)); // exact: an f32 value
    const int64_t magnitude = b & 0x7fffffffu, top = 0x7f800000;       // top: the infinity
    const int64_t ord = std::clamp((b >> 31 ? -magnitude : magnitude) + n, -top, top);
    return static_cast<double>(std::bit_cast<float>(
        ord < 0 ? 0x80000000u | static_cast<uint32_t>(-ord) : static_cast<uint32_t>(ord)));
  }
  const num::FormatInfo& fi = num::info(f);
  const int64_t top = static_cast<int64_t>(fi.has_inf ? fi.inf_bits : fi.max_finite);
  const uint64_t b = bits_of(f, v);
  const auto mag = static_cast<int64_t>(b & ~fi.sign_mask);
  int64_t ord = (b & fi.sign_mask) ? -mag : mag;
  ord = std::clamp(ord + n, -top, top);
  const uint64_t out =
      ord < 0 ? (fi.sign_mask | static_cast<uint64_t>(-ord)) : static_cast<uint64_t>(ord);
  return value_of(f, out);
}

double round_dir(num::Format f, double v, num::Rounding r) {
  return value_of(f, num::from_double(f, v, r));
}

// A documented ulp error as a whole number of steps. An unbounded (infinite or NaN) error, and
// any error past 2^40 steps, which already spans every finite value of every format, is 2^40: the
// conversion to an integer stays defined and step() saturates at the infinities.
int64_t steps_for(double u) {
  if (!(u + 0.5 < 0x1p40))
    return int64_t{1} << 40;
  return static_cast<int64_t>(std::floor(u + 0.5));
}

// The interval widened by n steps on each side.
Iv widen(num::Format f, Iv a, int64_t n) {
  if (a.undecided)
    return a;
  return {step(f, a.lo, -n), step(f, a.hi, n), false};
}

// Hull of two intervals.
Iv hull(const Iv& a, const Iv& b) {
  if (a.undecided || b.undecided)
    return kUndecided;
  if (std::isnan(a.lo) || std::isnan(b.lo) || std::isnan(a.hi) || std::isnan(b.hi))
    return is_point(a) && is_point(b) && std::isnan(a.lo) && std::isnan(b.lo) ? a : kUndecided;
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), false};
}

// Whether every operand of the op being evaluated is a point (set per lane by lane_value): only
// then do candidate ends that are all NaN mean the NaN point. Otherwise a NaN candidate comes from
// an end (0 times an infinite end, ...) that the values inside need not reach.
thread_local bool g_point_operands = false;

// An interval from candidate ends: undecided when some candidate is NaN (a device could produce
// a NaN or a number), except the NaN point when all are NaN and every operand is a point.
Iv from_candidates(std::initializer_list<double> c) {
  size_t nans = 0;
  double lo = kInf, hi = -kInf;
  for (double v : c) {
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    // -0 sorts below +0 so that the sign of a zero end is kept.
    if (v < lo || (v == lo && std::signbit(v)))
      lo = v;
    if (v > hi || (v == hi && !std::signbit(v)))
      hi = v;
  }
  if (nans == c.size() && g_point_operands)
    return point(std::numeric_limits<double>::quiet_NaN());
  if (nans)
    return kUndecided;
  return {lo, hi, false};
}

// ---- correctly rounded ops on ends ------------------------------------------------------------

double cr_add(num::Format f, double a, double b) {
  return value_of(f, num::add(f, bits_of(f, a), bits_of(f, b)));
}
double cr_sub(num::Format f, double a, double b) {
  return value_of(f, num::sub(f, bits_of(f, a), bits_of(f, b)));
}
double cr_mul(num::Format f, double a, double b) {
  return value_of(f, num::mul(f, bits_of(f, a), bits_of(f, b)));
}
double cr_div(num::Format f, double a, double b) {
  return value_of(f, num::div(f, bits_of(f, a), bits_of(f, b)));
}
double cr_fma(num::Format f, double a, double b, double c) {
  return value_of(f, num::fma(f, bits_of(f, a), bits_of(f, b), bits_of(f, c)));
}
double cr_math(num::MathFn fn, num::Format f, double a, double b = 0) {
  return value_of(f, num::math(fn, f, bits_of(f, a), bits_of(f, b)));
}

// NaNs that the ends do not show: a value inside one interval meets an infinite end of the other
// (0 * inf, inf - inf). Only intervals that are not points have values inside them; points are
// decided by their ends (from_candidates).
bool has_inf(const Iv& a, double inf) {
  return a.lo == inf || a.hi == inf;
}
bool holds_zero(const Iv& a) {
  return !is_point(a) && a.lo <= 0 && a.hi >= 0;
}

Iv add(num::Format f, const Iv& a, const Iv& b) {
  if (a.undecided || b.undecided)
    return kUndecided;
  // -inf in one and +inf in the other: their sum is NaN (ends meeting ends are seen below).
  if ((!is_point(a) || !is_point(b)) &&
      ((has_inf(a, -kInf) && has_inf(b, kInf)) || (has_inf(a, kInf) && has_inf(b, -kInf))))
    return kUndecided;
  return from_candidates({cr_add(f, a.lo, b.lo), cr_add(f, a.hi, b.hi)});
}
Iv sub(num::Format f, const Iv& a, const Iv& b) {
  if (a.undecided || b.undecided)
    return kUndecided;
  if ((!is_point(a) || !is_point(b)) &&
      ((has_inf(a, kInf) && has_inf(b, kInf)) || (has_inf(a, -kInf) && has_inf(b, -kInf))))
    return kUndecided;
  return from_candidates({cr_sub(f, a.lo, b.hi), cr_sub(f, a.hi, b.lo)});
}
Iv mul(num::Format f, const Iv& a, const Iv& b) {
  if (a.undecided || b.undecided)
    return kUndecided;
  // Zero inside one and an infinity in the other: the product may be NaN (pow(1, inf) on Vulkan is
  // exp2(inf * log2(1)), and log2(1) may be 0).
  const bool a_inf = has_inf(a, kInf) || has_inf(a, -kInf);
  const bool b_inf = has_inf(b, kInf) || has_inf(b, -kInf);
  if ((holds_zero(a) && b_inf) || (holds_zero(b) && a_inf))
    return kUndecided;
  return from_candidates(
      {cr_mul(f, a.lo, b.lo), cr_mul(f, a.lo, b.hi), cr_mul(f, a.hi, b.lo), cr_mul(f, a.hi, b.hi)});
}
Iv neg(const Iv& a) {
  return a.undecided ? a : Iv{-a.hi, -a.lo, false};
}

// Division: correctly rounded ends, then Vulkan's ulps where the divisor is inside the format's
// range [2^-emax, 2^emax]; undefined (undecided) where it may be outside, or contains zero.
Iv div(num::Format f, const Iv& a, const Iv& b, ir::MathProfile profile, bool range_rule = true) {
  if (a.undecided || b.undecided)
    return kUndecided;
  if (!is_point(b) && b.lo <= 0 && b.hi >= 0)
    return kUndecided;
  Iv r = from_candidates(
      {cr_div(f, a.lo, b.lo), cr_div(f, a.lo, b.hi), cr_div(f, a.hi, b.lo), cr_div(f, a.hi, b.hi)});
  if (profile == ir::MathProfile::CorrectlyRounded)
    return r;
  const ir::DevicePrecision& d = ir::info(ir::Op::Div).device;
  const num::FormatInfo& fi = num::info(f);
  if (range_rule) {
    const double lo_mag = b.lo > 0 ? b.lo : -b.hi, hi_mag = b.lo > 0 ? b.hi : -b.lo;
    const double edge = std::ldexp(1.0, fi.emax - 1); // 2^126 for f32, 2^14 for f16
    if (std::isnan(lo_mag) || lo_mag < 1 / edge || hi_mag > edge)
      return kUndecided;
  }
  return widen(f, r, steps_for(d.ulp(fi.total_bits)));
}

// n steps for an ulp bound u: the device's result is a value of the format within u ulps of the
// exact result, which lies within half an ulp of the correctly rounded one.

// A monotone function of one argument, correctly rounded at the ends. `own`: fn's value at a
// point operand when the caller already has it (the reference's own result).
Iv monotone(num::MathFn fn, num::Format f, const Iv& a, bool increasing,
            std::optional<double> own = std::nullopt) {
  if (a.undecided)
    return a;
  if (is_point(a)) { // the common case (an input, an exact op's result): one evaluation
    const double v = own ? *own : cr_math(fn, f, a.lo);
    return from_candidates({v, v});
  }
  const double lo = cr_math(fn, f, a.lo), hi = cr_math(fn, f, a.hi);
  return increasing ? from_candidates({lo, hi}) : from_candidates({hi, lo});
}

// Subtracts and adds an absolute error (plus half an ulp of the format for the correctly rounded
// end it starts from), rounding away from the interval.
Iv widen_absolute(num::Format f, Iv r, double e) {
  if (r.undecided || std::isnan(r.lo) || std::isnan(r.hi))
    return r;
  const double lo = round_dir(f, std::nextafter(r.lo - e, -kInf), num::Rounding::Down);
  const double hi = round_dir(f, std::nextafter(r.hi + e, kInf), num::Rounding::Up);
  return {step(f, lo, -1), step(f, hi, 1), false};
}

Iv exp_like(num::MathFn fn, num::Format f, const Iv& a, ir::Op op, ir::MathProfile profile,
            std::optional<double> own = std::nullopt) {
  Iv r = monotone(fn, f, a, true, own);
  if (profile == ir::MathProfile::CorrectlyRounded || r.undecided)
    return r;
  const ir::DevicePrecision& d = ir::info(op).device;
  const double x = std::max(std::fabs(a.lo), std::fabs(a.hi));
  return widen(f, r, steps_for(d.ulp(num::info(f).total_bits) + 2 * x));
}

Iv log_like(num::MathFn fn, num::Format f, const Iv& a, ir::Op op, ir::MathProfile profile,
            std::optional<double> own = std::nullopt) {
  Iv r = monotone(fn, f, a, true, own);
  if (profile == ir::MathProfile::CorrectlyRounded || r.undecided)
    return r;
  if (!(a.lo > 0))
    return kUndecided; // undefined for x <= 0
  const ir::DevicePrecision& d = ir::info(op).device;
  const int bits = num::info(f).total_bits;
  Iv out = r;
  // The ulp rule holds outside [0.5, 2], the absolute one inside: where the interval meets both,
  // the union of the two widenings.
  if (a.lo < 0.5 || a.hi > 2)
    out = hull(out, widen(f, r, steps_for(d.ulp(bits))));
  if (a.lo <= 2 && a.hi >= 0.5)
    out = hull(out, widen_absolute(f, r, std::ldexp(1.0, d.abs_exp(bits))));
  return out;
}

// sin or cos on [-pi, pi]: the range over the interval (ends and the extrema inside), then the
// absolute error.
Iv sin_cos(num::MathFn fn, num::Format f, const Iv& a, ir::Op op, ir::MathProfile profile) {
  if (a.undecided)
    return a;
  if (is_point(a) && profile == ir::MathProfile::CorrectlyRounded)
    return point(cr_math(fn, f, a.lo));
  if (std::isnan(a.lo) || std::isnan(a.hi))
    return kUndecided;
  const double pi = std::numbers::pi;
  if (profile == ir::MathProfile::Vulkan && (a.lo < -pi || a.hi > pi))
    return kUndecided; // the table gives no precision outside [-pi, pi]
  if (a.hi - a.lo >= 2 * pi)
    return {-1, 1, false};
  double lo = std::min(cr_math(fn, f, a.lo), cr_math(fn, f, a.hi));
  double hi = std::max(cr_math(fn, f, a.lo), cr_math(fn, f, a.hi));
  // Extrema: sin at pi/2 + k*pi, cos at k*pi.
  const double offset = fn == num::MathFn::Sin ? pi / 2 : 0;
  for (double k = std::floor((a.lo - offset) / pi) - 1; k <= std::ceil((a.hi - offset) / pi) + 1;
       ++k) {
    const double c = offset + k * pi;
    // Slightly inside or outside the interval: take the extremum whenever it might be inside.
    if (c >= a.lo - 1e-12 && c <= a.hi + 1e-12) {
      const bool max = std::fmod(std::fabs(k), 2.0) == 0;
      (max ? hi : lo) = max ? 1.0 : -1.0;
    }
  }
  Iv r{lo, hi, false};
  if (profile == ir::MathProfile::CorrectlyRounded)
    return widen(f, r, 1); // the extrema's ends are exact, the rest within one step
  const ir::DevicePrecision& d = ir::info(op).device;
  return widen_absolute(f, r, std::ldexp(1.0, d.abs_exp(num::info(f).total_bits)));
}

Iv ulp_op(ir::Op op, num::Format f, Iv r, ir::MathProfile profile) {
  if (profile == ir::MathProfile::CorrectlyRounded || r.undecided)
    return r;
  return widen(f, r, steps_for(ir::info(op).device.ulp(num::info(f).total_bits)));
}

// atan2(y, x): the angles of a box not containing the origin and not crossing the negative x axis
// are spanned by its corners.
Iv atan2_iv(num::Format f, const Iv& y, const Iv& x, ir::MathProfile profile) {
  if (y.undecided || x.undecided)
    return kUndecided;
  if (!(is_point(y) && is_point(x)) && x.lo <= 0 && y.lo <= 0 && y.hi >= 0)
    return kUndecided;
  if (profile == ir::MathProfile::Vulkan && x.lo <= 0 && x.hi >= 0 && y.lo <= 0 && y.hi >= 0)
    return kUndecided; // undefined at the origin
  auto at = [&](double a, double b) { return cr_math(num::MathFn::Atan2, f, a, b); };
  Iv r = from_candidates({at(y.lo, x.lo), at(y.lo, x.hi), at(y.hi, x.lo), at(y.hi, x.hi)});
  return ulp_op(ir::Op::Atan2, f, r, profile);
}

Iv floor_iv(num::Format f, const Iv& a) {
  if (a.undecided)
    return a;
  return from_candidates(
      {value_of(f, num::floor(f, bits_of(f, a.lo))), value_of(f, num::floor(f, bits_of(f, a.hi)))});
}

// The operation of a float node on intervals, in the node's format.
// `own`: for exp, exp2, log and log2 of a point, the reference's own result (lane_value).
Iv float_op(const Node& n, num::Format f, const Iv* a, ir::MathProfile profile,
            std::optional<double> own = std::nullopt) {
  using ir::Op;
  const bool vk = profile == ir::MathProfile::Vulkan;
  switch (n.op) {
  case Op::Add:
    return add(f, a[0], a[1]);
  case Op::Sub:
    return sub(f, a[0], a[1]);
  case Op::Mul:
    return mul(f, a[0], a[1]);
  case Op::Div:
    return div(f, a[0], a[1], profile);
  case Op::Neg:
    return neg(a[0]);
  case Op::Abs: {
    if (a[0].undecided)
      return a[0];
    if (!std::signbit(a[0].lo))
      return a[0];
    if (std::signbit(a[0].hi))
      return neg(a[0]);
    return {0.0, std::max(-a[0].lo, a[0].hi), false};
  }
  case Op::Copysign: {
    if (a[0].undecided || a[1].undecided || std::signbit(a[1].lo) != std::signbit(a[1].hi))
      return kUndecided;
    Iv m = float_op(Node{.op = Op::Abs}, f, a, profile);
    return std::signbit(a[1].lo) ? neg(m) : m;
  }
  case Op::Min:
  case Op::Max: {
    if (a[0].undecided || a[1].undecided)
      return kUndecided;
    auto g = [&](double x, double y) {
      return value_of(f, n.op == Op::Min ? num::min(f, bits_of(f, x), bits_of(f, y))
                                         : num::max(f, bits_of(f, x), bits_of(f, y)));
    };
    return from_candidates({g(a[0].lo, a[1].lo), g(a[0].hi, a[1].hi)});
  }
  case Op::Clamp: {
    // Defined as min(max(x, lo), hi) on every device, so the interval is that composition.
    const Iv inner[2] = {a[0], a[1]};
    const Iv outer[2] = {float_op(Node{.op = Op::Max}, f, inner, profile), a[2]};
    return float_op(Node{.op = Op::Min}, f, outer, profile);
  }
  case Op::Fma: {
    if (a[0].undecided || a[1].undecided || a[2].undecided)
      return kUndecided;
    Iv fused = from_candidates(
        {cr_fma(f, a[0].lo, a[1].lo, a[2].lo), cr_fma(f, a[0].lo, a[1].hi, a[2].lo),
         cr_fma(f, a[0].hi, a[1].lo, a[2].lo), cr_fma(f, a[0].hi, a[1].hi, a[2].lo),
         cr_fma(f, a[0].lo, a[1].lo, a[2].hi), cr_fma(f, a[0].lo, a[1].hi, a[2].hi),
         cr_fma(f, a[0].hi, a[1].lo, a[2].hi), cr_fma(f, a[0].hi, a[1].hi, a[2].hi)});
    // Inherited from OpFMul followed by OpFAdd: a device may round once or twice.
    return vk ? hull(fused, add(f, mul(f, a[0], a[1]), a[2])) : fused;
  }
  case Op::Sqrt: {
    if (a[0].undecided)
      return a[0];
    Iv r = from_candidates({value_of(f, num::sqrt(f, bits_of(f, a[0].lo))),
                            value_of(f, num::sqrt(f, bits_of(f, a[0].hi)))});
    if (!vk || r.undecided)
      return r;
    if (a[0].lo == 0 && a[0].hi == 0)
      return r; // sqrt(+-0) = +-0: 1 / inversesqrt(0) = 1 / inf
    if (a[0].lo < 0)
      return kUndecided;
    // Inherited from 1.0 / inversesqrt(x): the reciprocal of the inversesqrt interval (not a
    // point, so a NaN end decides nothing).
    g_point_operands = false;
    Iv rs = widen(f, monotone(num::MathFn::Rsqrt, f, a[0], false),
                  steps_for(ir::info(Op::Rsqrt).device.ulp(num::info(f).total_bits)));
    return div(f, point(1.0), rs, profile, false);
  }
  case Op::Rsqrt: {
    if (vk && !(a[0].undecided) && !(a[0].lo > 0))
      return kUndecided;
    return ulp_op(Op::Rsqrt, f, monotone(num::MathFn::Rsqrt, f, a[0], false), profile);
  }
  case Op::Exp:
    return exp_like(num::MathFn::Exp, f, a[0], Op::Exp, profile, own);
  case Op::Exp2:
    return exp_like(num::MathFn::Exp2, f, a[0], Op::Exp2, profile, own);
  case Op::Log:
    return log_like(num::MathFn::Log, f, a[0], Op::Log, profile, own);
  case Op::Log2:
    return log_like(num::MathFn::Log2, f, a[0], Op::Log2, profile, own);
  case Op::Sin:
    return sin_cos(num::MathFn::Sin, f, a[0], Op::Sin, profile);
  case Op::Cos:
    return sin_cos(num::MathFn::Cos, f, a[0], Op::Cos, profile);
  case Op::Tan: {
    if (!vk) {
      if (!is_point(a[0]))
        return kUndecided;
      return point(cr_math(num::MathFn::Tan, f, a[0].lo));
    }
    // Inherited from sin(x) / cos(x).
    g_point_operands = false;
    return div(f, sin_cos(num::MathFn::Sin, f, a[0], Op::Sin, profile),
               sin_cos(num::MathFn::Cos, f, a[0], Op::Cos, profile), profile);
  }
  case Op::Tanh: {
    if (!vk)
      return monotone(num::MathFn::Tanh, f, a[0], true);
    if (is_point(a[0]) && std::isinf(a[0].lo))
      return point(std::copysign(1.0, a[0].lo));
    // Inherited from (exp(x) - exp(-x)) / (exp(x) + exp(-x)), each op at its own precision.
    g_point_operands = false;
    const Iv e = exp_like(num::MathFn::Exp, f, a[0], Op::Exp, profile);
    const Iv m = exp_like(num::MathFn::Exp, f, neg(a[0]), Op::Exp, profile);
    Iv r = div(f, sub(f, e, m), add(f, e, m), profile);
    if (!r.undecided && !std::isnan(r.lo)) // tanh's range: no conforming formula leaves [-1, 1]
      r = {std::max(r.lo, -1.0), std::min(r.hi, 1.0), false};
    return r;
  }
  case Op::Pow: {
    if (!vk) {
      if (!is_point(a[0]) || !is_point(a[1]))
        return kUndecided;
      return point(cr_math(num::MathFn::Pow, f, a[0].lo, a[1].lo));
    }
    if (a[0].undecided || a[1].undecided || !(a[0].lo > 0))
      return kUndecided; // undefined for x < 0, and for x = 0 with y <= 0
    // Inherited from exp2(y * log2(x)).
    g_point_operands = false;
    const Iv l = log_like(num::MathFn::Log2, f, a[0], Op::Log2, profile);
    return exp_like(num::MathFn::Exp2, f, mul(f, a[1], l), Op::Exp2, profile);
  }
  case Op::Erf:
    return ulp_op(Op::Erf, f, monotone(num::MathFn::Erf, f, a[0], true), profile);
  case Op::Atan:
    return ulp_op(Op::Atan, f, monotone(num::MathFn::Atan, f, a[0], true), profile);
  case Op::Atan2:
    return atan2_iv(f, a[0], a[1], profile);
  case Op::Floor:
    return floor_iv(f, a[0]);
  case Op::Ceil:
    if (a[0].undecided)
      return a[0];
    return from_candidates({value_of(f, num::ceil(f, bits_of(f, a[0].lo))),
                            value_of(f, num::ceil(f, bits_of(f, a[0].hi)))});
  case Op::Fract: {
    if (a[0].undecided)
      return a[0];
    const Iv fl = floor_iv(f, a[0]);
    const Iv own = is_point(fl) ? from_candidates({value_of(f, num::fract(f, bits_of(f, a[0].lo))),
                                                   value_of(f, num::fract(f, bits_of(f, a[0].hi)))})
                                : Iv{0.0, step(f, 1.0, -1), false};
    // Inherited from x - floor(x) on Vulkan, which rounds to 1 just below an integer where the
    // IR's fract gives the largest value below 1: the interval holds both, so that it still holds
    // the reference (a bitcast of fract(-tiny) is undecided, not a violation).
    if (vk)
      return hull(sub(f, a[0], fl), own);
    return own;
  }
  case Op::Const:
  case Op::LocalGet:
  case Op::ParamGet:
  case Op::GlobalId:
  case Op::LocalId:
  case Op::GroupId:
  case Op::GroupSize:
  case Op::NumGroups:
  case Op::BufferLen:
  case Op::Load:
  case Op::Convert:
  case Op::Bitcast:
  case Op::Pack:
  case Op::Unpack:
  case Op::Rem:
  case Op::Eq:
  case Op::Ne:
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::And:
  case Op::Or:
  case Op::Xor:
  case Op::Not:
  case Op::Shl:
  case Op::Shr:
  case Op::Select:
    break;
  }
  ir::invalid_op(n.op);
}

// A float comparison on intervals: decided when every pair of values gives the same answer.
bool compare_decided(ir::Op op, const Iv& a, const Iv& b) {
  if (a.undecided || b.undecided)
    return false;
  if (is_point(a) && is_point(b))
    return true;
  // A NaN is unordered with every number, so against the NaN point every value of the other
  // interval (numbers only: it is not undecided) gives the same answer (campaign 20261205, kernel
  // 28365: le(atan2(-0.0, -0.4375), exp2(c)) on lavapipe, whose atan2 there is -NaN).
  if ((is_point(a) && std::isnan(a.lo)) || (is_point(b) && std::isnan(b.lo)))
    return true;
  if (std::isnan(a.lo) || std::isnan(a.hi) || std::isnan(b.lo) || std::isnan(b.hi))
    return false;
  switch (op) {
  case ir::Op::Lt:
  case ir::Op::Ge: // a < b everywhere, or a >= b everywhere
    return a.hi < b.lo || a.lo >= b.hi;
  case ir::Op::Le:
  case ir::Op::Gt:
    return a.hi <= b.lo || a.lo > b.hi;
  default: // eq, ne: disjoint intervals
    return a.hi < b.lo || b.hi < a.lo;
  }
}

bool is_float_type(ir::ScalarType t) {
  return ir::is_float(t);
}

} // namespace

IntervalState::IntervalState(const Program& p, uint32_t capacity)
    : capacity_(capacity), regs_(static_cast<size_t>(p.registers) * capacity),
      kept_(p.registers, 1), types_(p.registers), lanes_(capacity, 0) {
  const ir::Kernel& k = *p.kernel;
  for (const Node& n : p.nodes) {
    if (p.cls[n.id] == NodeClass::Fixed || p.cls[n.id] == NodeClass::Lane)
      kept_[n.reg] = 0;
    if (p.cls[n.id] != NodeClass::LocalAlias)
      types_[n.reg] = n.type;
  }
  for (uint32_t l = 0; l < k.locals.size(); ++l)
    types_[p.local_reg(l)] = k.locals[l].type;
  for (const ir::SharedArray& s : k.shared)
    shared_.emplace_back(s.size);
  for (const ir::PrivateArray& a : k.privates)
    private_.emplace_back(static_cast<size_t>(a.size) * capacity);
}

void IntervalState::begin_batch(uint32_t lanes) {
  std::fill(lanes_.begin(), lanes_.begin() + lanes, 0);
  // Shared memory starts as zeros in every workgroup: points.
  for (auto& s : shared_)
    std::fill(s.begin(), s.end(), Iv{});
  // So do private arrays, in every lane (specs/ir.md).
  for (auto& a : private_)
    std::fill(a.begin(), a.end(), Iv{});
}

namespace {

// The interval of register r on one lane.
Iv get(Exec& x, IntervalState& s, uint32_t r, uint32_t lane) {
  if (s.kept(r))
    return s.reg(r)[lane];
  const ir::ScalarType t = s.type(r);
  if (!is_float_type(t))
    return Iv{};
  const num::Format f = ir::format_of(t);
  return point(value_of(f, get_slot(x.reg<std::byte>(r), slot_bytes(t), lane)));
}

// The point interval of a node's own result (what an exact op leaves).
Iv own_point(Exec& x, const Node& n, uint32_t lane) {
  if (!is_float_type(n.type))
    return Iv{};
  const num::Format f = ir::format_of(n.type);
  return point(value_of(f, get_slot(x.reg<std::byte>(n.reg), slot_bytes(n.type), lane)));
}

// The intervals of buffer, shared or private array `id` (null: a read-only buffer, whose
// elements are points). A private array's are lane-major (IntervalState::private_array).
std::optional<std::span<Iv>> element_intervals(Exec& x, IntervalState& s, ir::Space space,
                                               uint32_t id) {
  if (space == ir::Space::Shared)
    return s.shared(id);
  if (space == ir::Space::Private)
    return s.private_array(id);
  auto& all = x.launch().intervals;
  if (id < all.size() && !all[id].empty())
    return std::span<Iv>(all[id].data(), all[id].size());
  return std::nullopt;
}

// The interval an access with indices `regs` (one per dimension, kNone past the rank) names at
// `lane`, or null when an index is outside its dimension (the access itself then fails).
Iv* element_at(Exec& x, std::span<Iv> elems, ir::Space space, uint32_t id,
               const std::array<uint32_t, 3>& regs, const std::array<ir::ScalarType, 3>& types,
               uint32_t lane) {
  const ir::Kernel& k = *x.program().kernel;
  uint64_t linear = 0;
  if (space == ir::Space::Buffer) {
    const Index ix = read_index(x.reg<std::byte>(regs[0]), types[0], lane);
    if (ix.negative || ix.value >= elems.size())
      return nullptr;
    return &elems[ix.value];
  }
  const ir::SharedArray& a = k.array(space, id);
  for (uint32_t d = 0; d < a.rank(); ++d) {
    const Index ix = read_index(x.reg<std::byte>(regs[d]), types[d], lane);
    if (ix.negative || ix.value >= a.dim(d))
      return nullptr;
    linear = linear * a.dim(d) + ix.value;
  }
  if (space == ir::Space::Private)
    linear += static_cast<uint64_t>(lane) * a.size;
  return linear < elems.size() ? &elems[linear] : nullptr;
}

// `v` where a device may flush a denormal of format `f` to zero: an interval that reaches the
// denormals also holds zero.
Iv flushable(Iv v, num::Format f) {
  const double tiny = num::info(f).min_normal_value;
  if (v.lo < tiny && v.hi > -tiny && !(v.lo == 0 && v.hi == 0))
    return {std::min(v.lo, 0.0), std::max(v.hi, 0.0), false};
  return v;
}

Iv lane_value(Exec& x, IntervalState& s, const Node& n, uint32_t lane) {
  using ir::Op;
  const ir::Op op = n.op;
  // Up to four operands: a pack of four 8-bit values has the most.
  Iv a[4];
  bool any_undecided = false;
  for (int i = 0; i < n.nargs && i < 4; ++i) {
    a[i] = get(x, s, n.arg[i], lane);
    any_undecided = any_undecided || a[i].undecided;
  }
  const ir::MathProfile profile = x.options().profile;
  // Without the DenormPreserve execution mode a Vulkan device may flush a denormal operand to zero
  // as well as a result (below): for an op the profile does not round correctly (the math
  // family), an operand interval that reaches the denormals also holds zero. lavapipe's
  // atan2(0, 2^-149) is NaN, which atan2(0, 0), undefined, allows (campaign of seed 20261203,
  // kernel 9386).
  if (profile == ir::MathProfile::Vulkan && ir::info(op).family == ir::OpFamily::Math)
    for (int i = 0; i < n.nargs && i < 4; ++i) {
      const ir::ScalarType t = x.intervals()->type(n.arg[i]);
      if (a[i].undecided || !is_float_type(t) || std::isnan(a[i].lo))
        continue;
      a[i] = flushable(a[i], ir::format_of(t));
    }
  g_point_operands = true;
  for (int i = 0; i < n.nargs && i < 4; ++i)
    g_point_operands = g_point_operands && is_point(a[i]);
  switch (ir::info(op).family) {
  case ir::OpFamily::Leaf:
  case ir::OpFamily::Builtin:
    return own_point(x, n, lane);
  case ir::OpFamily::Memory: {
    if (a[0].undecided)
      return kUndecided;
    const ir::Expr& e = *n.expr;
    const std::optional<std::span<Iv>> elems = element_intervals(x, s, e.space, e.ref);
    if (!elems)
      return own_point(x, n, lane);
    std::array<uint32_t, 3> regs{};
    std::array<ir::ScalarType, 3> types{};
    for (int i = 0; i < n.nargs && i < 3; ++i) {
      if (get(x, s, n.arg[i], lane).undecided)
        return kUndecided;
      regs[i] = n.arg[i];
      types[i] = s.type(n.arg[i]);
    }
    const Iv* v = element_at(x, *elems, e.space, e.ref, regs, types, lane);
    return v ? *v : kUndecided;
  }
  case ir::OpFamily::Convert: {
    if (a[0].undecided)
      return kUndecided;
    const bool from_float = is_float_type(n.arg_type), to_float = is_float_type(n.type);
    if (!from_float)
      return own_point(x, n, lane); // an integer converted: exact input, one rounding
    const num::Format from = ir::format_of(n.arg_type);
    if (!to_float) {
      // Decided when both ends convert to the same integer.
      if (is_point(a[0]) || (std::trunc(a[0].lo) == std::trunc(a[0].hi)))
        return Iv{};
      return kUndecided;
    }
    const num::Format to = ir::format_of(n.type);
    const num::Rounding r = ir::rounding_of(n.expr->rounding);
    const num::Fp8Overflow ov =
        n.expr->saturate ? num::Fp8Overflow::Saturate : num::Fp8Overflow::Nan;
    auto conv = [&](double v) {
      return value_of(to, num::convert_bits(from, bits_of(from, v), to, r, ov));
    };
    return from_candidates({conv(a[0].lo), conv(a[0].hi)});
  }
  case ir::OpFamily::Bits:
    // A float reinterpreted as bits (or packed) is only known when it is a point.
    for (int i = 0; i < n.nargs && i < 4; ++i)
      if (a[i].undecided || (is_float_type(x.intervals()->type(n.arg[i])) && !is_point(a[i])))
        return kUndecided;
    return own_point(x, n, lane);
  case ir::OpFamily::Compare: {
    if (!is_float_type(n.arg_type))
      return any_undecided ? kUndecided : Iv{};
    return compare_decided(op, a[0], a[1]) ? Iv{} : kUndecided;
  }
  case ir::OpFamily::Select: {
    if (!a[0].undecided)
      return x.reg<uint8_t>(n.arg[0])[lane] ? a[1] : a[2];
    if (!is_float_type(n.type))
      return kUndecided;
    return hull(a[1], a[2]); // either arm
  }
  case ir::OpFamily::Logic:
  case ir::OpFamily::Shift:
    return any_undecided ? kUndecided : Iv{};
  case ir::OpFamily::Arith:
  case ir::OpFamily::Sign:
  case ir::OpFamily::MinMax:
  case ir::OpFamily::Fma:
  case ir::OpFamily::Math:
  case ir::OpFamily::Integral:
    if (!is_float_type(n.type))
      return any_undecided ? kUndecided : Iv{};
    break;
  }
  const num::Format f = ir::format_of(n.type);
  // exp, exp2, log and log2 of a point that is the operand's reference value: the reference
  // computed the correctly rounded value already (unless the controls flush, which the interval
  // ends do not).
  std::optional<double> own;
  if ((op == Op::Exp || op == Op::Exp2 || op == Op::Log || op == Op::Log2) && is_point(a[0]) &&
      !num::flushes(f, x.options().controls) && n.arg_type == n.type &&
      std::bit_cast<uint64_t>(value_of(f, get_slot(x.reg<std::byte>(n.arg[0]), slot_bytes(n.type),
                                                   lane))) == std::bit_cast<uint64_t>(a[0].lo))
    own = own_point(x, n, lane).lo;
  Iv r = float_op(n, f, a, profile, own);
  // Without the DenormPreserve execution mode a Vulkan device may flush a denormal result to zero
  // (lavapipe's exp does, below -87.3 for f32): an interval that reaches the denormals also holds
  // zero. Min and max only pick an operand, so they make no new denormal.
  const ir::OpFamily family = ir::info(op).family;
  if (profile == ir::MathProfile::Vulkan && !r.undecided && !std::isnan(r.lo) &&
      family != ir::OpFamily::MinMax && family != ir::OpFamily::Sign) {
    r = flushable(r, f);
  }
  return r;
}

// The nodes whose interval follows, on every lane, from whether their operands are decided
// alone: an integer or boolean result of decided operands is exact (undecided otherwise), and a
// leaf, a builtin or a load from a buffer the launch does not write is its own value (a load with
// an undecided index is undecided). One pass over the lanes instead of lane_value's dispatch per
// lane, with lane_value's results; false for every other node.
bool bulk_node(Exec& x, IntervalState& s, const Node& n, Iv* out) {
  using ir::OpFamily;
  const bool float_result = is_float_type(n.type);
  bool own = false; // the node's own value (a point), else decided (Iv{})
  switch (ir::info(n.op).family) {
  case OpFamily::Leaf:
  case OpFamily::Builtin:
    own = true;
    break;
  case OpFamily::Memory:
    if (element_intervals(x, s, n.expr->space, n.expr->ref))
      return false;
    own = true;
    break;
  case OpFamily::Compare:
    if (is_float_type(n.arg_type))
      return false;
    break;
  case OpFamily::Arith:
  case OpFamily::Sign:
  case OpFamily::MinMax:
  case OpFamily::Fma:
  case OpFamily::Math:
  case OpFamily::Integral:
    if (float_result)
      return false;
    break;
  case OpFamily::Logic:
  case OpFamily::Shift:
    break;
  case OpFamily::Convert:
  case OpFamily::Bits:
  case OpFamily::Select:
    return false;
  }
  // Operands whose intervals are not kept are points of their registers: decided.
  std::array<const Iv*, 4> kept{};
  int count = 0;
  for (int i = 0; i < n.nargs && i < 4; ++i)
    if (s.kept(n.arg[i]))
      kept[count++] = s.reg(n.arg[i]);
  const bool point_value = own && float_result;
  const num::Format f = point_value ? ir::format_of(n.type) : num::Format::F32;
  const std::byte* reg = x.reg<std::byte>(n.reg);
  const uint32_t bytes = slot_bytes(n.type);
  for_active(x.mask(), [&](uint32_t lane) {
    bool undecided = false;
    for (int k = 0; k < count; ++k)
      undecided |= kept[k][lane].undecided;
    out[lane] = undecided     ? kUndecided
                : point_value ? point(value_of(f, get_slot(reg, bytes, lane)))
                              : Iv{};
  });
  return true;
}

// exp and exp2 of f32 (the math of softmax, attention and SiLU kernels) on the lanes whose
// operand is a point equal to its reference value, a number and not a denormal: the reference's
// own result, widened as exp_like widens it under the Vulkan profile and flushable after, as
// lane_value computes it, without its dispatch per lane. The other lanes (NaN, denormal or
// non-point operands, undecided ones) take lane_value. False for every other node.
bool bulk_exp(Exec& x, IntervalState& s, const Node& n, Iv* out) {
  if ((n.op != ir::Op::Exp && n.op != ir::Op::Exp2) || n.type != ir::ScalarType::F32 ||
      n.arg_type != ir::ScalarType::F32 || num::flushes(num::Format::F32, x.options().controls))
    return false;
  const bool vulkan = x.options().profile == ir::MathProfile::Vulkan;
  const Iv* kept = s.kept(n.arg[0]) ? s.reg(n.arg[0]) : nullptr;
  const float* operand = x.reg<float>(n.arg[0]);
  const float* result = x.reg<float>(n.reg);
  const double ulp = ir::info(n.op).device.ulp(32);
  const double tiny = num::info(num::Format::F32).min_normal_value;
  for_active(x.mask(), [&](uint32_t lane) {
    const double a = operand[lane]; // exact
    const bool usable =
        (!kept || (!kept[lane].undecided &&
                   std::bit_cast<uint64_t>(kept[lane].lo) == std::bit_cast<uint64_t>(a) &&
                   std::bit_cast<uint64_t>(kept[lane].hi) == std::bit_cast<uint64_t>(a))) &&
        !std::isnan(a) && (a == 0 || std::fabs(a) >= tiny);
    if (!usable) {
      out[lane] = lane_value(x, s, n, lane);
      return;
    }
    const double v = result[lane]; // never NaN: exp of a number
    Iv r = point(v);
    if (vulkan) {
      const int64_t steps = steps_for(ulp + 2 * std::fabs(a));
      r = {step(num::Format::F32, v, -steps), step(num::Format::F32, v, steps), false};
      r = flushable(r, num::Format::F32);
    }
    out[lane] = r;
  });
  return true;
}

} // namespace

void interval_node(Exec& x, const Node& n) {
  IntervalState& s = *x.intervals();
  Iv* out = s.reg(n.reg);
  if (bulk_node(x, s, n, out) || bulk_exp(x, s, n, out))
    return;
  for_active(x.mask(), [&](uint32_t lane) { out[lane] = lane_value(x, s, n, lane); });
}

void interval_assign(Exec& x, uint32_t local, uint32_t from, const LaneMask& m) {
  IntervalState& s = *x.intervals();
  const uint32_t to = x.program().local_reg(local);
  if (to == from)
    return;
  Iv* out = s.reg(to);
  for_active(m, [&](uint32_t lane) { out[lane] = get(x, s, from, lane); });
}

void interval_condition(Exec& x, uint32_t cond, const LaneMask& m) {
  IntervalState& s = *x.intervals();
  uint8_t* lanes = s.lane_undecided();
  for_active(m, [&](uint32_t lane) {
    if (get(x, s, cond, lane).undecided)
      lanes[lane] = 1;
  });
}

void interval_for_compare(Exec& x, uint32_t local, uint32_t bound, const LaneMask& m) {
  IntervalState& s = *x.intervals();
  uint8_t* lanes = s.lane_undecided();
  for_active(m, [&](uint32_t lane) {
    if (get(x, s, local, lane).undecided || get(x, s, bound, lane).undecided)
      lanes[lane] = 1;
  });
}

void interval_for_step(Exec& x, uint32_t local, uint32_t step_reg, const LaneMask& m) {
  IntervalState& s = *x.intervals();
  Iv* out = s.reg(local);
  for_active(m, [&](uint32_t lane) {
    out[lane].undecided = out[lane].undecided || get(x, s, step_reg, lane).undecided;
  });
}

void interval_store(Exec& x, const CStmt& cs, const LaneMask& m) {
  IntervalState& s = *x.intervals();
  const ir::Stmt& st = *cs.stmt;
  const std::optional<std::span<Iv>> elems = element_intervals(x, s, st.space, st.mem);
  if (!elems)
    return;
  const Program& p = x.program();
  const uint32_t value_reg = p.nodes[st.b].reg;
  const std::array<ir::ExprId, 3> indices = ir::store_indices(st);
  std::array<uint32_t, 3> regs{};
  std::array<ir::ScalarType, 3> types{};
  for (uint32_t d = 0; d < 3 && indices[d] != ir::kNone; ++d) {
    regs[d] = p.nodes[indices[d]].reg;
    types[d] = p.nodes[indices[d]].type;
  }
  const uint8_t* lanes = s.lane_undecided();
  for_active(m, [&](uint32_t lane) {
    if (x.stopped(lane))
      return;
    Iv* slot = element_at(x, *elems, st.space, st.mem, regs, types, lane);
    if (!slot)
      return;
    Iv v = get(x, s, value_reg, lane);
    bool undecided = lanes[lane] != 0;
    for (uint32_t d = 0; d < 3 && indices[d] != ir::kNone; ++d)
      undecided = undecided || get(x, s, regs[d], lane).undecided;
    if (undecided)
      v = kUndecided;
    v.stored = true;
    *slot = v;
  });
}

void interval_atomic(Exec& x, const CStmt& cs, const LaneMask& m) {
  IntervalState& s = *x.intervals();
  const ir::Stmt& st = *cs.stmt;
  const std::optional<std::span<Iv>> elems = element_intervals(x, s, st.space, st.mem);
  if (!elems)
    return;
  const Program& p = x.program();
  const uint32_t index_reg = p.nodes[st.a].reg;
  const ir::ScalarType index_type = p.nodes[st.a].type;
  const uint8_t* lanes = s.lane_undecided();
  for_active(m, [&](uint32_t lane) {
    if (x.stopped(lane))
      return;
    const Index ix = read_index(x.reg<std::byte>(index_reg), index_type, lane);
    if (ix.negative || ix.value >= elems->size())
      return;
    bool undecided = lanes[lane] != 0 || (*elems)[ix.value].undecided;
    for (ir::ExprId e : {st.a, st.b, st.c})
      if (e != ir::kNone)
        undecided = undecided || get(x, s, p.nodes[e].reg, lane).undecided;
    Iv v = undecided ? kUndecided : Iv{};
    v.stored = true;
    (*elems)[ix.value] = v;
  });
}

} // namespace halfway::interp
