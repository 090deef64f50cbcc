#pragma once
// Scalar types of the IR. Every value, buffer element and shared element has one of these.
// fp8 formats are storage formats: they are loaded, stored, converted, packed and unpacked, but
// the verifier refuses arithmetic on them (widen to f32 first, as every real fp8 kernel does).

#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace halfway::ir {

#define HALFWAY_SCALAR_TYPES(X)                                                                    \
  /* name,  text,   bits, float, signed, precision (significand bits incl. hidden) */              \
  X(Bool, "bool", 1, false, false, 0)                                                              \
  X(I8, "i8", 8, false, true, 0)                                                                   \
  X(U8, "u8", 8, false, false, 0)                                                                  \
  X(I16, "i16", 16, false, true, 0)                                                                \
  X(U16, "u16", 16, false, false, 0)                                                               \
  X(I32, "i32", 32, false, true, 0)                                                                \
  X(U32, "u32", 32, false, false, 0)                                                               \
  X(I64, "i64", 64, false, true, 0)                                                                \
  X(U64, "u64", 64, false, false, 0)                                                               \
  X(F16, "f16", 16, true, true, 11)                                                                \
  X(BF16, "bf16", 16, true, true, 8)                                                               \
  X(F32, "f32", 32, true, true, 24)                                                                \
  X(F64, "f64", 64, true, true, 53)                                                                \
  X(E4M3, "e4m3", 8, true, true, 4)                                                                \
  X(E5M2, "e5m2", 8, true, true, 3)

enum class ScalarType : uint8_t {
#define HALFWAY_X(name, text, bits, is_float, is_signed, precision) name,
  HALFWAY_SCALAR_TYPES(HALFWAY_X)
#undef HALFWAY_X
};

struct TypeInfo {
  std::string_view name;
  uint32_t bits;
  bool is_float;
  bool is_signed;
  uint32_t precision; // significand bits p for floats, 0 otherwise
};

inline constexpr TypeInfo kTypeInfo[] = {
#define HALFWAY_X(name, text, bits, is_float, is_signed, precision)                                \
  TypeInfo{text, bits, is_float, is_signed, precision},
    HALFWAY_SCALAR_TYPES(HALFWAY_X)
#undef HALFWAY_X
};

constexpr const TypeInfo& info(ScalarType t) {
  return kTypeInfo[static_cast<size_t>(t)];
}
constexpr std::string_view name(ScalarType t) {
  return info(t).name;
}
std::optional<ScalarType> parse_type(std::string_view text);

constexpr bool is_float(ScalarType t) {
  return info(t).is_float;
}
constexpr bool is_int(ScalarType t) {
  return !info(t).is_float && t != ScalarType::Bool;
}
constexpr bool is_fp8(ScalarType t) {
  return t == ScalarType::E4M3 || t == ScalarType::E5M2;
}
// A type arithmetic may be done in: integers and f16/bf16/f32/f64, not bool or fp8.
constexpr bool is_arithmetic(ScalarType t) {
  return is_int(t) || (is_float(t) && !is_fp8(t));
}
// Bytes per element in memory (bool values live in 32-bit slots, as in SPIR-V).
constexpr uint32_t bytes(ScalarType t) {
  return t == ScalarType::Bool ? 4 : info(t).bits / 8;
}

// Exponent of the largest finite binade and of the smallest subnormal of a float type.
constexpr int max_exponent(ScalarType t) {
  switch (t) {
  case ScalarType::F16:
    return 15;
  case ScalarType::BF16:
    return 127;
  case ScalarType::F32:
    return 127;
  case ScalarType::F64:
    return 1023;
  case ScalarType::E4M3:
    return 8;
  case ScalarType::E5M2:
    return 15;
  default:
    return 0;
  }
}
constexpr int min_exponent(ScalarType t) {
  switch (t) {
  case ScalarType::F16:
    return -24;
  case ScalarType::BF16:
    return -133;
  case ScalarType::F32:
    return -149;
  case ScalarType::F64:
    return -1074;
  case ScalarType::E4M3:
    return -9;
  case ScalarType::E5M2:
    return -16;
  default:
    return 0;
  }
}

// True when every value of `from` is exactly a value of `to` (so a conversion cannot round).
constexpr bool widens_exactly(ScalarType from, ScalarType to) {
  if (from == to)
    return true;
  if (is_float(from) && is_float(to))
    return info(to).precision >= info(from).precision && max_exponent(to) >= max_exponent(from) &&
           min_exponent(to) <= min_exponent(from);
  if (is_int(from) && is_int(to)) {
    if (info(from).is_signed && !info(to).is_signed)
      return false;
    return info(to).bits > info(from).bits ||
           (info(to).bits == info(from).bits && info(from).is_signed == info(to).is_signed);
  }
  if (is_int(from) && is_float(to))
    return !is_fp8(to) && info(to).precision >= info(from).bits - (info(from).is_signed ? 1 : 0);
  return false;
}
// True for a float-to-float conversion that can round: the narrowing sites the policy reasons
// about.
constexpr bool is_narrowing(ScalarType from, ScalarType to) {
  return is_float(from) && is_float(to) && !widens_exactly(from, to);
}

// Rounding of a conversion. Nearest-even is the default everywhere.
enum class RoundingMode : uint8_t { NearestEven, TowardZero, Up, Down };
std::string_view name(RoundingMode r);
std::optional<RoundingMode> parse_rounding(std::string_view text);

} // namespace halfway::ir
