#include "halfway/diff/compare.hpp"

#include "halfway/ir/bits.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/ulp.hpp"

#include <cfloat>
#include <cmath>
#include <cstdio>

namespace halfway::diff {

std::optional<num::Format> float_format(ir::ScalarType type) {
  switch (type) {
  case ir::ScalarType::F16:
    return num::Format::F16;
  case ir::ScalarType::BF16:
    return num::Format::BF16;
  case ir::ScalarType::F32:
    return num::Format::F32;
  case ir::ScalarType::F64:
    return num::Format::F64;
  case ir::ScalarType::E4M3:
    return num::Format::E4M3;
  case ir::ScalarType::E5M2:
    return num::Format::E5M2;
  default:
    return std::nullopt;
  }
}

bool same_bits(ir::ScalarType type, uint64_t reference, uint64_t device,
               const num::FloatControls& controls) {
  if (auto f = float_format(type))
    return num::same_result(*f, reference, device, controls);
  return reference == device;
}

uint64_t distance(ir::ScalarType type, uint64_t a, uint64_t b, const num::FloatControls& controls) {
  if (auto f = float_format(type))
    return num::ulp_distance(*f, num::apply_flush(*f, a, controls),
                             num::apply_flush(*f, b, controls));
  if (ir::info(type).is_signed) {
    int64_t x = ir::sign_extend(a, ir::info(type).bits),
            y = ir::sign_extend(b, ir::info(type).bits);
    return x > y ? uint64_t(x) - uint64_t(y) : uint64_t(y) - uint64_t(x);
  }
  return a > b ? a - b : b - a;
}

std::string value_text(ir::ScalarType type, uint64_t bits) {
  if (auto f = float_format(type)) {
    double v = num::to_double(*f, bits);
    bool neg = num::sign_bit(*f, bits);
    if (std::isnan(v))
      return neg ? "-nan" : "nan";
    if (std::isinf(v))
      return neg ? "-inf" : "inf";
    char buf[40];
    std::snprintf(buf, sizeof buf, *f == num::Format::F64 ? "%.17g" : "%.9g", v);
    return buf;
  }
  if (type == ir::ScalarType::Bool)
    return bits ? "true" : "false";
  if (ir::info(type).is_signed)
    return std::to_string(ir::sign_extend(bits, ir::info(type).bits));
  return std::to_string(bits);
}

std::string inexact_reason(ir::ScalarType type, double v) {
  const num::Format fmt = *float_format(type);
  const std::string name(ir::name(type));
  const uint64_t max_bits = num::from_double(fmt, DBL_MAX, num::Rounding::TowardZero);
  if (std::fabs(v) > num::to_double(fmt, max_bits))
    return "out of range for " + name + " (the largest finite value is " +
           value_text(type, max_bits) + ")";
  return "not exactly representable in " + name + "; the nearest value is " +
         value_text(type, num::from_double(fmt, v));
}

std::string bits_text(ir::ScalarType type, uint64_t bits) {
  char buf[24];
  int digits = static_cast<int>((ir::info(type).bits + 3) / 4);
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(bits));
  return buf;
}

std::string format_value(ir::ScalarType type, uint64_t bits) {
  return value_text(type, bits) + " (" + bits_text(type, bits) + ")";
}

} // namespace halfway::diff
