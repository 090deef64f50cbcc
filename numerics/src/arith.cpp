#include "halfway/numerics/arith.hpp"

#include "halfway/numerics/convert.hpp"

#include <cmath>

namespace halfway::num {

namespace {

// Exact widening of a sub-f32 format to f32.
float widen(Format f, uint64_t b) {
  switch (f) {
  case Format::F16:
    return f32_from_bits(f16_to_f32(static_cast<uint16_t>(b)));
  case Format::BF16:
    return f32_from_bits(bf16_to_f32(static_cast<uint16_t>(b)));
  case Format::E4M3:
    return f32_from_bits(e4m3_to_f32(static_cast<uint8_t>(b)));
  case Format::E5M2:
    return f32_from_bits(e5m2_to_f32(static_cast<uint8_t>(b)));
  default:
    return f32_from_bits(static_cast<uint32_t>(b));
  }
}

// One rounding of an f32 result to `f`, NaNs canonical and positive.
uint64_t narrow(Format f, float x, Fp8Overflow ov) {
  if (std::isnan(x))
    return quiet_nan(f);
  if (f == Format::F16)
    return f32_to_f16(f32_bits(x));
  return convert_bits(Format::F32, f32_bits(x), f, Rounding::NearestEven, ov);
}

uint64_t from_f32(float x) {
  return std::isnan(x) ? quiet_nan(Format::F32) : f32_bits(x);
}
uint64_t from_f64(double x) {
  return std::isnan(x) ? quiet_nan(Format::F64) : f64_bits(x);
}

template <class Op> uint64_t binary(Format f, uint64_t a, uint64_t b, Fp8Overflow ov, Op op) {
  if (f == Format::F64)
    return from_f64(op(f64_from_bits(a), f64_from_bits(b)));
  if (f == Format::F32)
    return from_f32(
        op(f32_from_bits(static_cast<uint32_t>(a)), f32_from_bits(static_cast<uint32_t>(b))));
  return narrow(f, op(widen(f, a), widen(f, b)), ov);
}

// p + c rounded to odd: if the sum is inexact, the last bit of the result is forced to 1. The exact
// value then lies strictly inside the interval between two doubles, so a later rounding to at most
// 51 bits sees no false tie.
double add_round_to_odd(double p, double c) {
  const double s = p + c;
  if (!std::isfinite(s))
    return s;
  const double bb = s - p;
  const double err = (p - (s - bb)) + (c - bb); // TwoSum: p + c == s + err exactly
  uint64_t bits = f64_bits(s);
  if (err == 0 || (bits & 1))
    return s;
  bits = ((err > 0) == (s > 0)) ? bits + 1 : bits - 1; // s != 0 when err != 0
  return f64_from_bits(bits);
}

// One greater or smaller? -0 sorts below +0; NaNs are filtered out before.
int64_t order_key(Format f, uint64_t b) {
  const auto mag = static_cast<int64_t>(magnitude(f, b));
  return sign_bit(f, b) ? -mag - 1 : mag;
}

uint64_t one_bits(Format f) {
  return static_cast<uint64_t>(info(f).bias) << info(f).man_bits;
}

template <class Op> uint64_t integral(Format f, uint64_t a, Op op) {
  if (is_nan(f, a))
    return quiet_nan(f);
  if (f == Format::F64)
    return from_f64(op(f64_from_bits(a)));
  return from_double(f, op(to_double(f, a))); // exact: an integral value of a format is in it
}

} // namespace

uint64_t add(Format f, uint64_t a, uint64_t b, Fp8Overflow ov) {
  return binary(f, a, b, ov, [](auto x, auto y) { return x + y; });
}
uint64_t sub(Format f, uint64_t a, uint64_t b, Fp8Overflow ov) {
  return binary(f, a, b, ov, [](auto x, auto y) { return x - y; });
}
uint64_t mul(Format f, uint64_t a, uint64_t b, Fp8Overflow ov) {
  return binary(f, a, b, ov, [](auto x, auto y) { return x * y; });
}
uint64_t div(Format f, uint64_t a, uint64_t b, Fp8Overflow ov) {
  return binary(f, a, b, ov, [](auto x, auto y) { return x / y; });
}

uint64_t sqrt(Format f, uint64_t a) {
  if (f == Format::F64)
    return from_f64(std::sqrt(f64_from_bits(a)));
  if (f == Format::F32)
    return from_f32(std::sqrt(f32_from_bits(static_cast<uint32_t>(a))));
  return narrow(f, std::sqrt(widen(f, a)), Fp8Overflow::Nan);
}

uint64_t fma(Format f, uint64_t a, uint64_t b, uint64_t c, Fp8Overflow ov) {
  if (f == Format::F64)
    return from_f64(std::fma(f64_from_bits(a), f64_from_bits(b), f64_from_bits(c)));
  if (f == Format::F32) {
    const auto x = [](uint64_t v) { return f32_from_bits(static_cast<uint32_t>(v)); };
    return from_f32(std::fma(x(a), x(b), x(c)));
  }
  const double p =
      to_double(f, a) * to_double(f, b); // exact: at most 22 bits, far inside double range
  const double s = add_round_to_odd(p, to_double(f, c));
  if (std::isnan(s))
    return quiet_nan(f);
  return from_double(f, s, Rounding::NearestEven, ov);
}

uint64_t min(Format f, uint64_t a, uint64_t b) {
  const bool na = is_nan(f, a), nb = is_nan(f, b);
  if (na && nb)
    return quiet_nan(f);
  if (na)
    return b;
  if (nb)
    return a;
  return order_key(f, b) < order_key(f, a) ? b : a;
}

uint64_t max(Format f, uint64_t a, uint64_t b) {
  const bool na = is_nan(f, a), nb = is_nan(f, b);
  if (na && nb)
    return quiet_nan(f);
  if (na)
    return b;
  if (nb)
    return a;
  return order_key(f, b) > order_key(f, a) ? b : a;
}

uint64_t clamp(Format f, uint64_t x, uint64_t lo, uint64_t hi) {
  return min(f, max(f, x, lo), hi);
}

uint64_t abs(Format f, uint64_t a) {
  return a & ~info(f).sign_mask;
}
uint64_t neg(Format f, uint64_t a) {
  return a ^ info(f).sign_mask;
}
uint64_t copysign(Format f, uint64_t magnitude_from, uint64_t sign_from) {
  const uint64_t s = info(f).sign_mask;
  return (magnitude_from & ~s) | (sign_from & s);
}

uint64_t floor(Format f, uint64_t a) {
  return integral(f, a, [](double x) { return std::floor(x); });
}
uint64_t ceil(Format f, uint64_t a) {
  return integral(f, a, [](double x) { return std::ceil(x); });
}

uint64_t fract(Format f, uint64_t a) {
  uint64_t r;
  if (f == Format::F64) {
    const double x = f64_from_bits(a);
    r = from_f64(x - std::floor(x));
  } else if (f == Format::F32) {
    // One subtraction of two f32 values in double, rounded to f32: exact by Figueroa (53 >= 50).
    const double x = f32_from_bits(static_cast<uint32_t>(a));
    const double d = x - std::floor(x);
    r = std::isnan(d) ? quiet_nan(f) : from_double(f, d);
  } else {
    const float x = widen(f, a);
    r = narrow(f, x - std::floor(x), Fp8Overflow::Nan);
  }
  return r == one_bits(f) ? r - 1 : r; // the largest value below 1
}

float f32_fma(float a, float b, float c) {
  return f32_from_bits(
      static_cast<uint32_t>(fma(Format::F32, f32_bits(a), f32_bits(b), f32_bits(c))));
}

} // namespace halfway::num
