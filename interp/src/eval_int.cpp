// Integer (and bool bitwise) nodes: two's-complement wrapping arithmetic, truncating division,
// arithmetic right shift for signed types. Division by zero and shifts by at least the width are
// errors, checked on the active lanes only.
#include "exec.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace halfway::interp {

namespace {

// U: the unsigned storage type; S: the type the values mean (signed or unsigned).
// Arithmetic happens in W, an unsigned type of at least 32 bits, so nothing is promoted to int.
template <class U> using Wide = std::conditional_t<(sizeof(U) < 4), uint32_t, U>;

template <class U, class F> void dense2(Exec& x, const Node& n, F f) {
  const U* a = x.reg<U>(n.arg[0]);
  const U* b = x.reg<U>(n.arg[1]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = static_cast<U>(f(a[i], b[i]));
}
template <class U, class F> void dense1(Exec& x, const Node& n, F f) {
  const U* a = x.reg<U>(n.arg[0]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = static_cast<U>(f(a[i]));
}

template <class U> void add(Exec& x, const Node& n) {
  dense2<U>(x, n, [](U a, U b) { return Wide<U>(a) + Wide<U>(b); });
}
template <class U> void sub(Exec& x, const Node& n) {
  dense2<U>(x, n, [](U a, U b) { return Wide<U>(a) - Wide<U>(b); });
}
template <class U> void mul(Exec& x, const Node& n) {
  dense2<U>(x, n, [](U a, U b) { return Wide<U>(a) * Wide<U>(b); });
}
template <class U> void and_(Exec& x, const Node& n) {
  dense2<U>(x, n, [](U a, U b) { return a & b; });
}
template <class U> void or_(Exec& x, const Node& n) {
  dense2<U>(x, n, [](U a, U b) { return a | b; });
}
template <class U> void xor_(Exec& x, const Node& n) {
  dense2<U>(x, n, [](U a, U b) { return a ^ b; });
}
template <class U> void not_(Exec& x, const Node& n) {
  dense1<U>(x, n, [](U a) { return ~Wide<U>(a); });
}
void not_bool(Exec& x, const Node& n) {
  dense1<uint8_t>(x, n, [](uint8_t a) { return a ^ 1; });
}
template <class U> void neg(Exec& x, const Node& n) {
  dense1<U>(x, n, [](U a) { return Wide<U>(0) - Wide<U>(a); });
}
template <class U, class S> void abs(Exec& x, const Node& n) {
  dense1<U>(x, n, [](U a) { return static_cast<S>(a) < 0 ? Wide<U>(0) - Wide<U>(a) : Wide<U>(a); });
}
template <class U, class S> void min(Exec& x, const Node& n) {
  dense2<U>(x, n, [](U a, U b) { return static_cast<S>(b) < static_cast<S>(a) ? b : a; });
}
template <class U, class S> void max(Exec& x, const Node& n) {
  dense2<U>(x, n, [](U a, U b) { return static_cast<S>(b) > static_cast<S>(a) ? b : a; });
}

// min(max(x, lo), hi), by definition (specs/ir.md): hi when lo > hi.
template <class U, class S> void clamp(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  const U* lo = x.reg<U>(n.arg[1]);
  const U* hi = x.reg<U>(n.arg[2]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i) {
    U m = static_cast<S>(lo[i]) > static_cast<S>(a[i]) ? lo[i] : a[i];
    r[i] = static_cast<S>(hi[i]) < static_cast<S>(m) ? hi[i] : m;
  }
}

template <class U, class S, bool Rem> void div(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  const U* b = x.reg<U>(n.arg[1]);
  U* r = x.reg<U>(n.reg);
  for_active(x.mask(), [&](uint32_t i) {
    const S sa = static_cast<S>(a[i]), sb = static_cast<S>(b[i]);
    if (sb == 0) {
      r[i] = 0;
      x.fail(i, ErrorKind::DivideByZero,
             std::string(Rem ? "rem" : "div") + " of " + std::string(ir::name(n.type)) + " by zero",
             {}, n.id);
      return;
    }
    if constexpr (std::is_signed_v<S>) {
      if (sa == std::numeric_limits<S>::min() && sb == -1) { // the quotient wraps to MIN
        r[i] = Rem ? U{0} : a[i];
        return;
      }
    }
    r[i] = static_cast<U>(Rem ? sa % sb : sa / sb);
  });
}

template <class U, class S, bool Left> U shifted(U a, U amount) {
  if constexpr (Left)
    return static_cast<U>(Wide<U>(a) << amount);
  else
    return static_cast<U>(static_cast<S>(a) >> amount);
}

template <class U, class S, bool Left> void shift(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  const U* b = x.reg<U>(n.arg[1]);
  U* r = x.reg<U>(n.reg);
  constexpr uint32_t width = sizeof(U) * 8;
  const LaneMask& m = x.mask();
  // A negative signed amount reads as a huge unsigned one.
  // Quick test on every lane (vectorises); only when it fails, look at the active lanes.
  U largest = 0;
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    largest = std::max<U>(largest, b[i]);
  bool over = largest >= width;
  if (over) {
    over = false;
    for_active(m, [&](uint32_t i) { over |= b[i] >= width; });
  }
  if (!over) {
    for (uint32_t i = 0, w = x.width(); i < w; ++i)
      r[i] = shifted<U, S, Left>(a[i], b[i] & (width - 1));
    return;
  }
  for_active(m, [&](uint32_t i) {
    if (b[i] < width) {
      r[i] = shifted<U, S, Left>(a[i], b[i]);
      return;
    }
    r[i] = 0;
    x.fail(i, ErrorKind::ShiftOverflow,
           std::string(Left ? "shl" : "shr") + " of " + std::string(ir::name(n.type)) + " by " +
               std::to_string(static_cast<S>(b[i])) + ", not below the width " +
               std::to_string(width),
           {}, n.id);
  });
}

template <class U, class S> EvalFn typed(ir::Op op) {
  switch (op) {
  case ir::Op::Add:
    return add<U>;
  case ir::Op::Sub:
    return sub<U>;
  case ir::Op::Mul:
    return mul<U>;
  case ir::Op::Div:
    return div<U, S, false>;
  case ir::Op::Rem:
    return div<U, S, true>;
  case ir::Op::Neg:
    return neg<U>;
  case ir::Op::Abs:
    return abs<U, S>;
  case ir::Op::Min:
    return min<U, S>;
  case ir::Op::Max:
    return max<U, S>;
  case ir::Op::Clamp:
    return clamp<U, S>;
  case ir::Op::And:
    return and_<U>;
  case ir::Op::Or:
    return or_<U>;
  case ir::Op::Xor:
    return xor_<U>;
  case ir::Op::Not:
    return not_<U>;
  case ir::Op::Shl:
    return shift<U, S, true>;
  case ir::Op::Shr:
    return shift<U, S, false>;
  case ir::Op::Const:
  case ir::Op::LocalGet:
  case ir::Op::ParamGet:
  case ir::Op::GlobalId:
  case ir::Op::LocalId:
  case ir::Op::GroupId:
  case ir::Op::GroupSize:
  case ir::Op::NumGroups:
  case ir::Op::BufferLen:
  case ir::Op::Load:
  case ir::Op::Convert:
  case ir::Op::Bitcast:
  case ir::Op::Pack:
  case ir::Op::Unpack:
  case ir::Op::Fma:
  case ir::Op::Sqrt:
  case ir::Op::Rsqrt:
  case ir::Op::Exp:
  case ir::Op::Exp2:
  case ir::Op::Log:
  case ir::Op::Log2:
  case ir::Op::Sin:
  case ir::Op::Cos:
  case ir::Op::Tan:
  case ir::Op::Tanh:
  case ir::Op::Pow:
  case ir::Op::Erf:
  case ir::Op::Atan2:
  case ir::Op::Atan:
  case ir::Op::Floor:
  case ir::Op::Ceil:
  case ir::Op::Fract:
  case ir::Op::Copysign:
  case ir::Op::Eq:
  case ir::Op::Ne:
  case ir::Op::Lt:
  case ir::Op::Le:
  case ir::Op::Gt:
  case ir::Op::Ge:
  case ir::Op::Select:
    return nullptr;
  }
  ir::invalid_op(op);
}

} // namespace

EvalFn int_eval(const Program&, const Node& n) {
  using T = ir::ScalarType;
  switch (n.type) {
  case T::Bool:
    if (n.op == ir::Op::Not)
      return not_bool;
    return typed<uint8_t, uint8_t>(n.op);
  case T::I8:
    return typed<uint8_t, int8_t>(n.op);
  case T::U8:
    return typed<uint8_t, uint8_t>(n.op);
  case T::I16:
    return typed<uint16_t, int16_t>(n.op);
  case T::U16:
    return typed<uint16_t, uint16_t>(n.op);
  case T::I32:
    return typed<uint32_t, int32_t>(n.op);
  case T::U32:
    return typed<uint32_t, uint32_t>(n.op);
  case T::I64:
    return typed<uint64_t, int64_t>(n.op);
  case T::U64:
    return typed<uint64_t, uint64_t>(n.op);
  default:
    return nullptr;
  }
}

} // namespace halfway::interp
