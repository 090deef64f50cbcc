// Float arithmetic and math nodes.
//
// f32 and f64 +, -, *, /, fma and sqrt run as plain loops over every lane of the batch (inactive
// lanes compute garbage nobody reads) on the host's IEEE instructions, with NaN results made
// canonical. Everything else, and every op of a format the float controls flush, goes through
// numerics one active lane at a time.
#include "exec.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "halfway/numerics/math.hpp"
#include "slots.hpp"

#include <bit>
#include <cmath>

namespace halfway::interp {

namespace {

template <class T> T canonical(T v) {
  if constexpr (sizeof(T) == 4)
    return v != v ? std::bit_cast<float>(0x7fc00000u) : v;
  else
    return v != v ? std::bit_cast<double>(0x7ff8000000000000ull) : v;
}

template <class T, class F> void dense2(Exec& x, const Node& n, F f) {
  const T* a = x.reg<T>(n.arg[0]);
  const T* b = x.reg<T>(n.arg[1]);
  T* __restrict r = x.reg<T>(n.reg);
  const uint32_t w = x.width();
  for (uint32_t i = 0; i < w; ++i)
    r[i] = canonical(f(a[i], b[i]));
}

template <class T> void add(Exec& x, const Node& n) {
  dense2<T>(x, n, [](T a, T b) { return a + b; });
}
template <class T> void sub(Exec& x, const Node& n) {
  dense2<T>(x, n, [](T a, T b) { return a - b; });
}
template <class T> void mul(Exec& x, const Node& n) {
  dense2<T>(x, n, [](T a, T b) { return a * b; });
}
template <class T> void div(Exec& x, const Node& n) {
  dense2<T>(x, n, [](T a, T b) { return a / b; });
}

template <class T> void fma(Exec& x, const Node& n) {
  const T* a = x.reg<T>(n.arg[0]);
  const T* b = x.reg<T>(n.arg[1]);
  const T* c = x.reg<T>(n.arg[2]);
  T* __restrict r = x.reg<T>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = canonical(std::fma(a[i], b[i], c[i]));
}

template <class T> void sqrt(Exec& x, const Node& n) {
  const T* a = x.reg<T>(n.arg[0]);
  T* __restrict r = x.reg<T>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = canonical(std::sqrt(a[i]));
}

// Sign-bit operations, exact on every format and never flushed: U is the storage type.
template <class U> constexpr U sign_of() {
  return static_cast<U>(U{1} << (sizeof(U) * 8 - 1));
}
template <class U> void neg(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = a[i] ^ sign_of<U>();
}
template <class U> void abs(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = a[i] & static_cast<U>(~sign_of<U>());
}
template <class U> void copysign(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  const U* b = x.reg<U>(n.arg[1]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = (a[i] & static_cast<U>(~sign_of<U>())) | (b[i] & sign_of<U>());
}

// ---- the general path: numerics, one active lane at a time ------------------------------------

using Scalar = uint64_t (*)(num::Format, uint64_t, uint64_t, uint64_t);

template <num::MathFn F> uint64_t math(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::math(F, f, a, b);
}
uint64_t s_add(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::add(f, a, b);
}
uint64_t s_sub(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::sub(f, a, b);
}
uint64_t s_mul(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::mul(f, a, b);
}
uint64_t s_div(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::div(f, a, b);
}
uint64_t s_fma(num::Format f, uint64_t a, uint64_t b, uint64_t c) {
  return num::fma(f, a, b, c);
}
uint64_t s_sqrt(num::Format f, uint64_t a, uint64_t, uint64_t) {
  return num::sqrt(f, a);
}
uint64_t s_min(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::min(f, a, b);
}
uint64_t s_max(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::max(f, a, b);
}
uint64_t s_clamp(num::Format f, uint64_t a, uint64_t lo, uint64_t hi) {
  return num::clamp(f, a, lo, hi);
}
uint64_t s_floor(num::Format f, uint64_t a, uint64_t, uint64_t) {
  return num::floor(f, a);
}
uint64_t s_ceil(num::Format f, uint64_t a, uint64_t, uint64_t) {
  return num::ceil(f, a);
}
uint64_t s_fract(num::Format f, uint64_t a, uint64_t, uint64_t) {
  return num::fract(f, a);
}

template <Scalar F, bool Flush> void general(Exec& x, const Node& n) {
  const num::Format f = ir::format_of(n.type);
  const uint32_t bytes = slot_bytes(n.type);
  const num::FloatControls& c = x.options().controls;
  const void* args[3] = {};
  for (int i = 0; i < n.nargs; ++i)
    args[i] = x.reg<std::byte>(n.arg[i]);
  void* r = x.reg<std::byte>(n.reg);
  for_active(x.mask(), [&](uint32_t lane) {
    uint64_t v[3] = {0, 0, 0};
    for (int i = 0; i < n.nargs; ++i) {
      v[i] = get_slot(args[i], bytes, lane);
      if constexpr (Flush)
        v[i] = num::apply_flush(f, v[i], c);
    }
    uint64_t out = F(f, v[0], v[1], v[2]);
    if constexpr (Flush)
      out = num::apply_flush(f, out, c);
    set_slot(r, bytes, lane, out);
  });
}

template <Scalar F> EvalFn general_for(bool flush) {
  return flush ? general<F, true> : general<F, false>;
}

// One evaluator per numerics function, generated from its list: an op whose table row names a
// function needs nothing here.
EvalFn math_eval(num::MathFn fn, bool flush) {
  switch (fn) {
#define HALFWAY_X(f, text, arity, libm, mpfr)                                                      \
  case num::MathFn::f:                                                                             \
    return general_for<math<num::MathFn::f>>(flush);
    HALFWAY_MATH_FNS(HALFWAY_X)
#undef HALFWAY_X
  }
  return nullptr;
}

EvalFn general_eval(ir::Op op, bool flush) {
  if (std::optional<num::MathFn> fn = ir::math_fn(op))
    return math_eval(*fn, flush);
  switch (op) {
#define HALFWAY_CASE(o, fn)                                                                        \
  case ir::Op::o:                                                                                  \
    return general_for<fn>(flush);
    HALFWAY_CASE(Add, s_add)
    HALFWAY_CASE(Sub, s_sub)
    HALFWAY_CASE(Mul, s_mul)
    HALFWAY_CASE(Div, s_div)
    HALFWAY_CASE(Fma, s_fma)
    HALFWAY_CASE(Sqrt, s_sqrt)
    HALFWAY_CASE(Min, s_min)
    HALFWAY_CASE(Max, s_max)
    HALFWAY_CASE(Clamp, s_clamp)
    HALFWAY_CASE(Floor, s_floor)
    HALFWAY_CASE(Ceil, s_ceil)
    HALFWAY_CASE(Fract, s_fract)
#undef HALFWAY_CASE
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
  case ir::Op::Rem:
  case ir::Op::Neg:
  case ir::Op::Abs:
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
  case ir::Op::Copysign:
  case ir::Op::Eq:
  case ir::Op::Ne:
  case ir::Op::Lt:
  case ir::Op::Le:
  case ir::Op::Gt:
  case ir::Op::Ge:
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Not:
  case ir::Op::Shl:
  case ir::Op::Shr:
  case ir::Op::Select:
    return nullptr;
  }
  ir::invalid_op(op);
}

template <class T> EvalFn fast_eval(ir::Op op) {
  switch (op) {
  case ir::Op::Add:
    return add<T>;
  case ir::Op::Sub:
    return sub<T>;
  case ir::Op::Mul:
    return mul<T>;
  case ir::Op::Div:
    return div<T>;
  case ir::Op::Fma:
    return fma<T>;
  case ir::Op::Sqrt:
    return sqrt<T>;
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
  case ir::Op::Rem:
  case ir::Op::Neg:
  case ir::Op::Abs:
  case ir::Op::Min:
  case ir::Op::Max:
  case ir::Op::Clamp:
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
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Not:
  case ir::Op::Shl:
  case ir::Op::Shr:
  case ir::Op::Select:
    return nullptr;
  }
  ir::invalid_op(op);
}

template <class U> EvalFn sign_eval(ir::Op op) {
  switch (op) {
  case ir::Op::Neg:
    return neg<U>;
  case ir::Op::Abs:
    return abs<U>;
  case ir::Op::Copysign:
    return copysign<U>;
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
  case ir::Op::Add:
  case ir::Op::Sub:
  case ir::Op::Mul:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Min:
  case ir::Op::Max:
  case ir::Op::Clamp:
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
  case ir::Op::Eq:
  case ir::Op::Ne:
  case ir::Op::Lt:
  case ir::Op::Le:
  case ir::Op::Gt:
  case ir::Op::Ge:
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Not:
  case ir::Op::Shl:
  case ir::Op::Shr:
  case ir::Op::Select:
    return nullptr;
  }
  ir::invalid_op(op);
}

} // namespace

EvalFn float_eval(const Program& p, const Node& n) {
  switch (slot_bytes(n.type)) {
  case 1:
    if (EvalFn f = sign_eval<uint8_t>(n.op))
      return f;
    break;
  case 2:
    if (EvalFn f = sign_eval<uint16_t>(n.op))
      return f;
    break;
  case 4:
    if (EvalFn f = sign_eval<uint32_t>(n.op))
      return f;
    break;
  default:
    if (EvalFn f = sign_eval<uint64_t>(n.op))
      return f;
    break;
  }
  const bool flush = num::flushes(ir::format_of(n.type), p.options.controls);
  if (!flush && n.type == ir::ScalarType::F32)
    if (EvalFn f = fast_eval<float>(n.op))
      return f;
  if (!flush && n.type == ir::ScalarType::F64)
    if (EvalFn f = fast_eval<double>(n.op))
      return f;
  return general_eval(n.op, flush);
}

} // namespace halfway::interp
