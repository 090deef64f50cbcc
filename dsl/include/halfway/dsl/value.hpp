#pragma once
// Typed values of the DSL. A Value<T> is an IR expression of type T; operators build IR nodes.
// Mixing float formats widens to the wider one (never narrows); narrowing is written out with
// narrow<T>(v), or happens when a value is stored into a narrower buffer element.
//
// Values are expressions, not variables: `auto v = x[i];` names the load, and every use of v
// reads x[i] again. Use Var<T> (a local) to capture a value at one point of the program.

#include "halfway/dsl/builder.hpp"
#include "halfway/dsl/types.hpp"

#include <concepts>
#include <cstdint>
#include <string>
#include <type_traits>

namespace halfway {

namespace detail {
// The bit pattern of a C++ literal in type T, rounded to nearest-even like a C++ cast.
uint64_t literal_bits(ir::ScalarType type, double value);
uint64_t literal_bits(ir::ScalarType type, int64_t value);
uint64_t literal_bits(ir::ScalarType type, uint64_t value);
inline dsl::Builder& b() {
  return dsl::Builder::current();
}
// Wraps a node id so that it can never be mistaken for an integer literal.
struct Node {
  ir::ExprId id;
};
} // namespace detail

template <class T> class Value {
public:
  using element_type = T;

  Value() : id_(detail::b().constant(scalar_type_v<T>, 0)) {}
  // Literals: Value<float> v = 1.5;  Value<uint32_t> n = 4;
  template <class L>
  requires(std::is_arithmetic_v<L>) Value(L literal) : id_(make_literal(literal)) {}
  explicit Value(detail::Node n) : id_(n.id) {}

  ir::ExprId id() const { return id_; }

private:
  template <class L> static ir::ExprId make_literal(L literal) {
    constexpr ir::ScalarType t = scalar_type_v<T>;
    uint64_t bits;
    if constexpr (std::is_same_v<L, bool>)
      bits = literal ? 1 : 0;
    else if constexpr (std::is_floating_point_v<L>)
      bits = detail::literal_bits(t, static_cast<double>(literal));
    else if constexpr (std::is_signed_v<L>)
      bits = detail::literal_bits(t, static_cast<int64_t>(literal));
    else
      bits = detail::literal_bits(t, static_cast<uint64_t>(literal));
    return detail::b().constant(t, bits);
  }
  ir::ExprId id_;
};

template <class T> struct is_value : std::false_type {};
template <class T> struct is_value<Value<T>> : std::true_type {};

// The Value type of an operand: Value<T> and its subclasses keep T; literals take the other side's.
template <class X> struct value_of { using type = void; };
template <class T> struct value_of<Value<T>> { using type = T; };
template <class X>
requires requires {
  typename X::element_type;
}
struct value_of<X> {
  using type = typename X::element_type;
};
template <class X> using value_elem_t = typename value_of<std::remove_cvref_t<X>>::type;
template <class X>
concept ValueLike = !std::is_void_v<value_elem_t<X>>;
template <class X>
concept Literal = std::is_arithmetic_v<std::remove_cvref_t<X>>;

namespace detail {
template <class T, class X> Value<T> as(const X& x) {
  if constexpr (Literal<X>) {
    return Value<T>(x);
  } else {
    using S = value_elem_t<X>;
    if constexpr (std::is_same_v<S, T>)
      return Value<T>(detail::Node{x.id()});
    else
      return Value<T>(
          detail::Node{b().convert(x.id(), scalar_type_v<T>)}); // only ever a widening here
  }
}

// Result element type of a binary operator between A and B (one may be a literal).
template <class A, class B> struct binary_type {
  using type = common_t<value_elem_t<A>, value_elem_t<B>>;
};
template <class A, class B>
requires(Literal<A>) struct binary_type<A, B> {
  using type = value_elem_t<B>;
};
template <class A, class B>
requires(Literal<B>) struct binary_type<A, B> {
  using type = value_elem_t<A>;
};
template <class A, class B> using binary_t = typename binary_type<A, B>::type;

// The same for three operands (clamp(x, 0.0f, 1.0f): two literals take x's type).
template <class A, class B, class C> struct ternary_type {
  // binary_t gives an element type: as the second operand it stands for a value of that type
  // (an f16 element is no literal, so clamp(x, lo, hi) over three f16 values would not combine).
  using type = binary_t<A, Value<binary_t<B, C>>>;
};
template <class A, class B, class C>
requires(Literal<B>&& Literal<C>) struct ternary_type<A, B, C> {
  using type = value_elem_t<A>;
};
template <class A, class B, class C> using ternary_t = typename ternary_type<A, B, C>::type;

template <class A, class B>
concept Operands = (ValueLike<A> && ValueLike<B>) || (ValueLike<A> && Literal<B>) ||
                   (Literal<A> && ValueLike<B>);

template <class X> ir::ExprId condition_id(const X& c) {
  static_assert(std::is_same_v<value_elem_t<X>, bool>, "halfway: conditions are Value<bool>");
  return c.id();
}

template <class T> Value<T> op(ir::Op o, const Value<T>& a, const Value<T>& c) {
  return Value<T>(detail::Node{b().binary(o, scalar_type_v<T>, a.id(), c.id())});
}
template <class T> Value<bool> cmp(ir::Op o, const Value<T>& a, const Value<T>& c) {
  return Value<bool>(detail::Node{b().binary(o, ir::ScalarType::Bool, a.id(), c.id())});
}
} // namespace detail

#define HALFWAY_BINARY(sym, code)                                                                  \
  template <class A, class B>                                                                      \
  requires detail::Operands<A, B>                                                                  \
  auto operator sym(const A& a, const B& c) {                                                      \
    using T = detail::binary_t<A, B>;                                                              \
    return detail::op(ir::Op::code, detail::as<T>(a), detail::as<T>(c));                           \
  }
HALFWAY_BINARY(+, Add)
HALFWAY_BINARY(-, Sub)
HALFWAY_BINARY(*, Mul)
HALFWAY_BINARY(/, Div)
HALFWAY_BINARY(%, Rem)
HALFWAY_BINARY(&, And)
HALFWAY_BINARY(|, Or)
HALFWAY_BINARY(^, Xor)
HALFWAY_BINARY(<<, Shl)
HALFWAY_BINARY(>>, Shr)
#undef HALFWAY_BINARY

#define HALFWAY_COMPARE(sym, code)                                                                 \
  template <class A, class B>                                                                      \
  requires detail::Operands<A, B> Value<bool>                                                      \
  operator sym(const A& a, const B& c) {                                                           \
    using T = detail::binary_t<A, B>;                                                              \
    return detail::cmp(ir::Op::code, detail::as<T>(a), detail::as<T>(c));                          \
  }
HALFWAY_COMPARE(==, Eq)
HALFWAY_COMPARE(!=, Ne)
HALFWAY_COMPARE(<, Lt)
HALFWAY_COMPARE(<=, Le)
HALFWAY_COMPARE(>, Gt)
HALFWAY_COMPARE(>=, Ge)
#undef HALFWAY_COMPARE

template <class A>
requires ValueLike<A>
auto operator-(const A& a) {
  using T = value_elem_t<A>;
  return Value<T>(detail::Node{detail::b().unary(ir::Op::Neg, scalar_type_v<T>, a.id())});
}
namespace detail {
// A value as C++ reads it in a condition: a bool as it is, an integer as `x != 0`. Floats are
// refused: C++ would accept them, but a float's truth is almost always a mistake in a kernel.
template <class X> Value<bool> truth(const X& x) {
  if constexpr (Literal<X>) {
    return Value<bool>(static_cast<bool>(x));
  } else {
    using T = value_elem_t<X>;
    static_assert(std::is_same_v<T, bool> || is_int_v<T>,
                  "halfway: !, && and || take bool or integer values (as C++ does for integers: "
                  "x != 0); compare a float explicitly");
    if constexpr (std::is_same_v<T, bool>)
      return Value<bool>(detail::Node{x.id()});
    else
      return cmp(ir::Op::Ne, Value<T>(detail::Node{x.id()}), Value<T>(0));
  }
}
} // namespace detail

// Logical operators mean what they mean in C++: on integers `!x` is `x == 0`, and `a && b` and
// `a || b` test each side against 0; the result is a Value<bool>. Unlike C++ both sides are
// always evaluated (an expression has no control flow): guard a load with If, not with &&.
// The bitwise operators are ~, &, | and ^.
template <class A, class B>
requires detail::Operands<A, B> Value<bool>
operator&&(const A& a, const B& c) {
  return detail::op(ir::Op::And, detail::truth(a), detail::truth(c));
}
template <class A, class B>
requires detail::Operands<A, B> Value<bool>
operator||(const A& a, const B& c) {
  return detail::op(ir::Op::Or, detail::truth(a), detail::truth(c));
}
template <class A>
requires ValueLike<A> Value<bool>
operator!(const A& a) {
  return Value<bool>(
      detail::Node{detail::b().unary(ir::Op::Not, ir::ScalarType::Bool, detail::truth(a).id())});
}
// Bitwise complement: every bit of an integer, or the negation of a bool.
template <class A>
requires ValueLike<A>
auto operator~(const A& a) {
  using T = value_elem_t<A>;
  static_assert(std::is_same_v<T, bool> || is_int_v<T>, "halfway: ~ takes bool or integer values");
  return Value<T>(detail::Node{detail::b().unary(ir::Op::Not, scalar_type_v<T>, a.id())});
}

} // namespace halfway
