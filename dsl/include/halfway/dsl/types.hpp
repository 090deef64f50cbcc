#pragma once
// C++ types that stand for IR scalar types in the DSL. float, double, bool and the fixed-width
// integers stand for themselves; the formats C++ lacks get tag types carrying their bit pattern.

#include "halfway/ir/types.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

namespace halfway {

struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};
struct e4m3 {
  uint8_t bits;
};
struct e5m2 {
  uint8_t bits;
};

template <class T> struct scalar_type_of; // deliberately undefined: unsupported types fail here
#define HALFWAY_MAP(cpp, ir_type)                                                                  \
  template <> struct scalar_type_of<cpp> {                                                         \
    static constexpr ir::ScalarType value = ir::ScalarType::ir_type;                               \
  };
HALFWAY_MAP(bool, Bool)
HALFWAY_MAP(int8_t, I8)
HALFWAY_MAP(uint8_t, U8)
HALFWAY_MAP(int16_t, I16)
HALFWAY_MAP(uint16_t, U16)
HALFWAY_MAP(int32_t, I32)
HALFWAY_MAP(uint32_t, U32)
HALFWAY_MAP(int64_t, I64)
HALFWAY_MAP(uint64_t, U64)
HALFWAY_MAP(f16, F16)
HALFWAY_MAP(bf16, BF16)
HALFWAY_MAP(float, F32)
HALFWAY_MAP(double, F64)
HALFWAY_MAP(e4m3, E4M3)
HALFWAY_MAP(e5m2, E5M2)
#undef HALFWAY_MAP

template <class T> inline constexpr ir::ScalarType scalar_type_v = scalar_type_of<T>::value;

// "f32", "f16", ...: the IR's name, so generic kernels can be named "linear<" + type_name<T>() +
// ">".
template <class T> std::string type_name() {
  return std::string(ir::name(scalar_type_v<T>));
}

template <class T> inline constexpr bool is_float_v = ir::is_float(scalar_type_v<T>);
template <class T> inline constexpr bool is_int_v = ir::is_int(scalar_type_v<T>);
template <class T>
inline constexpr bool is_fp8_v = std::is_same_v<T, e4m3> || std::is_same_v<T, e5m2>;

namespace detail {
// The type two operands of a mixed expression widen to. Floats widen to the wider format; f16 and
// bf16 together widen to f32, since neither holds the other. Integers never mix implicitly, and
// neither do integers and floats: those need an explicit convert<>.
template <class A, class B> struct common {
  static_assert(std::is_same_v<A, B> || (is_float_v<A> && is_float_v<B>),
                "halfway: operands of different integer or int/float types: convert<> explicitly");
  static constexpr bool a_holds_b = ir::widens_exactly(scalar_type_v<B>, scalar_type_v<A>);
  static constexpr bool b_holds_a = ir::widens_exactly(scalar_type_v<A>, scalar_type_v<B>);
  using type = std::conditional_t<
      std::is_same_v<A, B>, A,
      std::conditional_t<a_holds_b, A,
                         std::conditional_t<b_holds_a, B,
                                            std::conditional_t<std::is_same_v<A, double> ||
                                                                   std::is_same_v<B, double>,
                                                               double, float>>>>;
};
} // namespace detail

template <class A, class B> using common_t = typename detail::common<A, B>::type;

} // namespace halfway
