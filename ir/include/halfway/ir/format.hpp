#pragma once
// The bridge from IR scalar types to the numerics library's formats and rounding directions.

#include "halfway/ir/types.hpp"
#include "halfway/numerics/formats.hpp"

namespace halfway::ir {

// The numerics format of a float type; only call with is_float(t).
constexpr num::Format format_of(ScalarType t) {
  switch (t) {
  case ScalarType::F16:
    return num::Format::F16;
  case ScalarType::BF16:
    return num::Format::BF16;
  case ScalarType::F32:
    return num::Format::F32;
  case ScalarType::F64:
    return num::Format::F64;
  case ScalarType::E4M3:
    return num::Format::E4M3;
  default:
    return num::Format::E5M2;
  }
}

constexpr num::Rounding rounding_of(RoundingMode r) {
  switch (r) {
  case RoundingMode::NearestEven:
    return num::Rounding::NearestEven;
  case RoundingMode::TowardZero:
    return num::Rounding::TowardZero;
  case RoundingMode::Up:
    return num::Rounding::Up;
  case RoundingMode::Down:
    return num::Rounding::Down;
  }
  return num::Rounding::NearestEven;
}

} // namespace halfway::ir
