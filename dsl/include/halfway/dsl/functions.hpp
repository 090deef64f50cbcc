#pragma once
// Builtins, conversions and math intrinsics of the DSL.

#include "halfway/dsl/memory.hpp"

namespace halfway {

namespace detail {
inline Value<uint32_t> builtin(ir::Op op, uint32_t dim) {
  ir::Expr e;
  e.op = op;
  e.type = ir::ScalarType::U32;
  e.imm = dim;
  return Value<uint32_t>(detail::Node{b().add(e)});
}
template <class T, class X> Value<T> unary(ir::Op op, const X& x) {
  return Value<T>(detail::Node{b().unary(op, scalar_type_v<T>, as<T>(x).id())});
}
} // namespace detail

// Lane and group coordinates, dimension 0, 1 or 2. global_id = group_id * group_size + local_id.
inline Value<uint32_t> global_id(uint32_t dim = 0) {
  return detail::builtin(ir::Op::GlobalId, dim);
}
inline Value<uint32_t> local_id(uint32_t dim = 0) {
  return detail::builtin(ir::Op::LocalId, dim);
}
inline Value<uint32_t> group_id(uint32_t dim = 0) {
  return detail::builtin(ir::Op::GroupId, dim);
}
inline Value<uint32_t> group_size(uint32_t dim = 0) {
  return detail::builtin(ir::Op::GroupSize, dim);
}
inline Value<uint32_t> num_groups(uint32_t dim = 0) {
  return detail::builtin(ir::Op::NumGroups, dim);
}

// ---- conversions ------------------------------------------------------------------------------
// Any conversion: widening, narrowing (rounded with `r`), int<->float (float->int truncates and
// saturates, NaN -> 0). `saturate` clamps e4m3 overflow to +-448 instead of NaN.
template <class T, class X>
Value<T> convert(const X& x, ir::RoundingMode r = ir::RoundingMode::NearestEven,
                 bool saturate = false) {
  return Value<T>(detail::Node{detail::b().convert(x.id(), scalar_type_v<T>, r, saturate)});
}
// An explicit narrowing site: the value rounds to T (default nearest-even).
template <class T, class X>
Value<T> narrow(const X& x, ir::RoundingMode r = ir::RoundingMode::NearestEven) {
  static_assert(is_float_v<T> && is_float_v<value_elem_t<X>>,
                "halfway: narrow<T> is float to float");
  return convert<T>(x, r, false);
}
// Exact widening, e.g. f16 or fp8 weights to f32 for f32 accumulation.
template <class T, class X> Value<T> widen(const X& x) {
  static_assert(ir::widens_exactly(scalar_type_v<value_elem_t<X>>, scalar_type_v<T>),
                "halfway: widen<T> must be exact; use narrow<T> or convert<T>");
  return convert<T>(x);
}
template <class X> Value<float> to_f32(const X& x) {
  return widen<float>(x);
}
template <class X> Value<double> to_f64(const X& x) {
  return widen<double>(x);
}
template <class T, class X> Value<T> bitcast(const X& x) {
  static_assert(ir::info(scalar_type_v<T>).bits == ir::info(scalar_type_v<value_elem_t<X>>).bits,
                "halfway: bitcast keeps the width");
  return Value<T>(detail::Node{detail::b().unary(ir::Op::Bitcast, scalar_type_v<T>, x.id())});
}

// Packs 2 x f16/bf16 or 4 x fp8 into a u32, element 0 in the lowest bits.
template <class T, class... X> Value<uint32_t> pack(const X&... parts) {
  static_assert(sizeof...(X) == (ir::info(scalar_type_v<T>).bits == 16 ? 2 : 4),
                "halfway: pack takes 2 x 16-bit or 4 x 8-bit values");
  ir::Expr e;
  e.op = ir::Op::Pack;
  e.type = ir::ScalarType::U32;
  e.aux = scalar_type_v<T>;
  e.nargs = sizeof...(X);
  int i = 0;
  ((e.args[i++] = detail::as<T>(parts).id()), ...);
  return Value<uint32_t>(detail::Node{detail::b().add(e)});
}
template <class T, class X> Value<T> unpack(const X& word, uint32_t lane) {
  ir::Expr e;
  e.op = ir::Op::Unpack;
  e.type = scalar_type_v<T>;
  e.aux = scalar_type_v<T>;
  e.imm = lane;
  e.nargs = 1;
  e.args[0] = detail::as<uint32_t>(word).id();
  return Value<T>(detail::Node{detail::b().add(e)});
}

// ---- math -------------------------------------------------------------------------------------
// One function per op table row with a DSL form, spelled as the row says.
#define HALFWAY_DSL_Unary(fn, code)                                                                \
  template <class X>                                                                               \
  requires ValueLike<X>                                                                            \
  auto fn(const X& x) {                                                                            \
    return detail::unary<value_elem_t<X>>(ir::Op::code, x);                                        \
  }
#define HALFWAY_DSL_Binary(fn, code)                                                               \
  template <class A, class B>                                                                      \
  requires detail::Operands<A, B>                                                                  \
  auto fn(const A& a, const B& c) {                                                                \
    using T = detail::binary_t<A, B>;                                                              \
    return detail::op(ir::Op::code, detail::as<T>(a), detail::as<T>(c));                           \
  }
#define HALFWAY_DSL_Ternary(fn, code)                                                              \
  template <class A, class B, class C>                                                             \
  requires(ValueLike<A> || ValueLike<B> || ValueLike<C>) auto fn(const A& a, const B& bb,          \
                                                                 const C& c) {                     \
    using T = detail::ternary_t<A, B, C>;                                                          \
    ir::Expr e;                                                                                    \
    e.op = ir::Op::code;                                                                           \
    e.type = scalar_type_v<T>;                                                                     \
    e.nargs = 3;                                                                                   \
    e.args[0] = detail::as<T>(a).id();                                                             \
    e.args[1] = detail::as<T>(bb).id();                                                            \
    e.args[2] = detail::as<T>(c).id();                                                             \
    return Value<T>(detail::Node{detail::b().add(e)});                                             \
  }
#define HALFWAY_DSL_None(fn, code)
#define HALFWAY_X(op, text, arity, rule, family, rounds, figueroa, exact, math, dsl, spelling,     \
                  ulp, precision)                                                                  \
  HALFWAY_DSL_##dsl(spelling, op)
HALFWAY_OPS(HALFWAY_X)
#undef HALFWAY_X
#undef HALFWAY_DSL_None
#undef HALFWAY_DSL_Ternary
#undef HALFWAY_DSL_Binary
#undef HALFWAY_DSL_Unary

// fma(a, b, c) = a*b + c rounded once (on the interpreter; Vulkan devices may round twice, see
// the op table's device precision).
template <class A, class B, class C> auto fma(const A& a, const B& bb, const C& c) {
  using T = detail::binary_t<A, detail::binary_t<B, C>>;
  ir::Expr e;
  e.op = ir::Op::Fma;
  e.type = scalar_type_v<T>;
  e.nargs = 3;
  e.args[0] = detail::as<T>(a).id();
  e.args[1] = detail::as<T>(bb).id();
  e.args[2] = detail::as<T>(c).id();
  return Value<T>(detail::Node{detail::b().add(e)});
}

template <class C, class A, class B> auto select(const C& cond, const A& a, const B& c) {
  using T = detail::binary_t<A, B>;
  ir::Expr e;
  e.op = ir::Op::Select;
  e.type = scalar_type_v<T>;
  e.nargs = 3;
  e.args[0] = detail::condition_id(cond);
  e.args[1] = detail::as<T>(a).id();
  e.args[2] = detail::as<T>(c).id();
  return Value<T>(detail::Node{detail::b().add(e)});
}

} // namespace halfway
