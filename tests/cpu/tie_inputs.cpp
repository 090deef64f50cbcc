#include "tie_inputs.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <random>

namespace halfway::cpu_test {

namespace {

using Quad = __float128;

double f16_value(uint16_t h) {
  return static_cast<double>(std::bit_cast<_Float16>(h));
}

// The midpoint above the non-negative f16 pattern h (65520 above the largest finite value).
double midpoint_above(uint16_t h) {
  double next = h == 0x7bff ? 65536.0 : f16_value(static_cast<uint16_t>(h + 1));
  return (f16_value(h) + next) / 2;
}

double ulp32(double m) {
  int e = std::ilogb(std::fabs(m));
  return std::ldexp(1.0, std::max(e, -126) - 23);
}

} // namespace

double distance_to_f16_midpoint(float a, float b, float c) {
  Quad exact = Quad(a) * Quad(b) + Quad(c);
  double approx = static_cast<double>(exact);
  if (!std::isfinite(approx) || std::fabs(approx) > 65536)
    return INFINITY;
  uint16_t h =
      std::bit_cast<uint16_t>(static_cast<_Float16>(static_cast<float>(std::fabs(approx))));
  double best = INFINITY;
  for (int d = -2; d <= 1; ++d) {
    int hh = int(h) + d;
    if (hh < 0 || hh > 0x7bff)
      continue;
    double m = std::copysign(midpoint_above(static_cast<uint16_t>(hh)), approx);
    double dist = static_cast<double>(exact - Quad(m));
    best = std::min(best, std::fabs(dist) / ulp32(m));
  }
  return best;
}

MulAddInputs tie_mul_add(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> pattern(0, 0x7bff);
  std::uniform_real_distribution<double> unit(1.0, 2.0);
  std::uniform_int_distribution<int> scale(0, 3), small(-3, 3), coin(0, 1);
  MulAddInputs out;
  while (out.a.size() < n) {
    uint16_t h = static_cast<uint16_t>(pattern(rng));
    double m = midpoint_above(h) * (coin(rng) ? -1 : 1);
    float a = static_cast<float>(std::ldexp(unit(rng), small(rng)) * (coin(rng) ? -1 : 1));
    double target = std::fabs(m) * std::ldexp(unit(rng), scale(rng)) * (coin(rng) ? -1 : 1);
    float b = static_cast<float>(target / a);
    float p = static_cast<float>(static_cast<double>(a) * static_cast<double>(b));
    float c = static_cast<float>(m - static_cast<double>(p));
    if (!std::isfinite(b) || !std::isfinite(c) || b == 0)
      continue;
    if (distance_to_f16_midpoint(a, b, c) > 1.0)
      continue;
    out.a.push_back(a);
    out.b.push_back(b);
    out.c.push_back(c);
  }
  return out;
}

std::vector<float> tie_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> pattern(0, 0x7bff);
  std::uniform_int_distribution<int> offset(-1, 1), coin(0, 1);
  std::vector<float> out;
  while (out.size() < n) {
    double m = midpoint_above(static_cast<uint16_t>(pattern(rng)));
    float f = static_cast<float>(m);
    uint32_t bits = std::bit_cast<uint32_t>(f) + offset(rng);
    out.push_back(std::bit_cast<float>(bits) * (coin(rng) ? -1.0f : 1.0f));
  }
  return out;
}

std::vector<float> special_floats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          INFINITY,
                          -INFINITY,
                          std::bit_cast<float>(0x7fc00000u),
                          std::bit_cast<float>(0xffc00000u),
                          std::bit_cast<float>(0x7f800001u), // signalling
                          std::bit_cast<float>(0x7fffffffu), // payload all ones
                          std::bit_cast<float>(0xffbfe000u),
                          65504.0f,
                          65519.996f,
                          65520.0f,
                          -65520.0f,
                          std::ldexp(1.0f, -24),
                          std::ldexp(1.0f, -25),
                          std::ldexp(1.5f, -25),
                          -std::ldexp(1.0f, -25),
                          std::ldexp(1.0f, -14),
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::max(),
                          1.0f,
                          -1.0f,
                          0.5f,
                          3.0f};
  return v;
}

uint16_t exact_f16_mul_add(float a, float b, float c) {
  Quad exact = Quad(a) * Quad(b) + Quad(c);
  return std::bit_cast<uint16_t>(static_cast<_Float16>(exact));
}

uint16_t two_step_f16_mul_add(float a, float b, float c) {
  float p = a * b; // the project builds with -ffp-contract=off: two roundings
  float s = p + c;
  return std::bit_cast<uint16_t>(static_cast<_Float16>(s));
}

} // namespace halfway::cpu_test
