#include "halfway/ir/bits.hpp"

#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"

#include <bit>
#include <cmath>

namespace halfway::ir {

namespace {
struct Layout {
  int exp_bits, man_bits, bias;
  bool ieee_specials; // all-ones exponent means inf/NaN (false for E4M3FN: only S.1111.111 is NaN)
};
Layout layout(ScalarType t) {
  switch (t) {
  case ScalarType::F16:
    return {5, 10, 15, true};
  case ScalarType::BF16:
    return {8, 7, 127, true};
  case ScalarType::F32:
    return {8, 23, 127, true};
  case ScalarType::F64:
    return {11, 52, 1023, true};
  case ScalarType::E4M3:
    return {4, 3, 7, false};
  case ScalarType::E5M2:
    return {5, 2, 15, true};
  default:
    return {0, 0, 0, false};
  }
}
} // namespace

double widen_to_double(ScalarType type, uint64_t bits) {
  if (type == ScalarType::F64)
    return std::bit_cast<double>(bits);
  if (type == ScalarType::F32)
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  Layout l = layout(type);
  uint64_t man = bits & ((1ull << l.man_bits) - 1);
  uint64_t exp = (bits >> l.man_bits) & ((1ull << l.exp_bits) - 1);
  bool neg = (bits >> (l.man_bits + l.exp_bits)) & 1;
  uint64_t all_ones = (1ull << l.exp_bits) - 1;
  double v;
  if (l.ieee_specials && exp == all_ones)
    v = man ? std::nan("") : HUGE_VAL;
  else if (!l.ieee_specials && exp == all_ones && man == (1ull << l.man_bits) - 1)
    v = std::nan("");
  else if (exp == 0)
    v = std::ldexp(static_cast<double>(man), 1 - l.bias - l.man_bits);
  else
    v = std::ldexp(static_cast<double>(man | (1ull << l.man_bits)),
                   static_cast<int>(exp) - l.bias - l.man_bits);
  return neg ? -v : v;
}

bool exact_bits(ScalarType type, double v, uint64_t& bits) {
  if (type == ScalarType::F64) {
    bits = std::bit_cast<uint64_t>(v);
    return true;
  }
  if (type == ScalarType::F32) {
    float f = static_cast<float>(v);
    bits = std::bit_cast<uint32_t>(f);
    return static_cast<double>(f) == v || (v != v);
  }
  // Round once, then check that nothing was lost (NaN never compares equal, so handle it first).
  if (v != v) {
    bits = num::quiet_nan(format_of(type), std::signbit(v));
    return true;
  }
  bits = num::from_double(format_of(type), v);
  double back = widen_to_double(type, bits);
  return back == v && std::signbit(back) == std::signbit(v);
}

int64_t sign_extend(uint64_t v, uint32_t width) {
  if (width >= 64)
    return static_cast<int64_t>(v);
  uint64_t m = 1ull << (width - 1);
  v &= (1ull << width) - 1;
  return static_cast<int64_t>((v ^ m) - m);
}

uint64_t truncate_bits(ScalarType type, uint64_t v) {
  uint32_t w = info(type).bits;
  if (type == ScalarType::Bool)
    return v ? 1 : 0;
  return w >= 64 ? v : (v & ((1ull << w) - 1));
}

} // namespace halfway::ir
