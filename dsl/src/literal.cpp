#include "halfway/dsl/value.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/support/error.hpp"

#include <bit>
#include <cmath>

namespace halfway::detail {

uint64_t literal_bits(ir::ScalarType type, double v) {
  using ir::ScalarType;
  if (ir::is_float(type)) {
    if (type == ScalarType::F64)
      return std::bit_cast<uint64_t>(v);
    if (type == ScalarType::F32)
      return std::bit_cast<uint32_t>(static_cast<float>(v));
    return num::from_double(ir::format_of(type), v);
  }
  if (type == ScalarType::Bool)
    return v != 0;
  if (v != std::trunc(v))
    throw Error(ErrorKind::Usage, "fractional literal for an integer type");
  return ir::truncate_bits(type, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

uint64_t literal_bits(ir::ScalarType type, int64_t v) {
  if (ir::is_float(type))
    return literal_bits(type, static_cast<double>(v));
  return ir::truncate_bits(type, static_cast<uint64_t>(v));
}

uint64_t literal_bits(ir::ScalarType type, uint64_t v) {
  if (ir::is_float(type))
    return literal_bits(type, static_cast<double>(v));
  return ir::truncate_bits(type, v);
}

} // namespace halfway::detail
