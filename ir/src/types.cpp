#include "halfway/ir/types.hpp"

namespace halfway::ir {

std::optional<ScalarType> parse_type(std::string_view text) {
  for (size_t i = 0; i < std::size(kTypeInfo); ++i)
    if (kTypeInfo[i].name == text)
      return static_cast<ScalarType>(i);
  return std::nullopt;
}

std::string_view name(RoundingMode r) {
  switch (r) {
  case RoundingMode::NearestEven:
    return "rte";
  case RoundingMode::TowardZero:
    return "rtz";
  case RoundingMode::Up:
    return "rtp";
  case RoundingMode::Down:
    return "rtn";
  }
  return "rte";
}

std::optional<RoundingMode> parse_rounding(std::string_view text) {
  for (auto r :
       {RoundingMode::NearestEven, RoundingMode::TowardZero, RoundingMode::Up, RoundingMode::Down})
    if (name(r) == text)
      return r;
  return std::nullopt;
}

} // namespace halfway::ir
