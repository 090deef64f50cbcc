// Comparisons and select. Float comparisons are IEEE: eq, lt, le, gt, ge are false when either
// operand is NaN and ne is true; -0 == +0. Formats the float controls flush compare their flushed
// operands.
#include "exec.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "slots.hpp"

namespace halfway::interp {

namespace {

template <ir::Op Op, class T> bool compare(T a, T b) {
  if constexpr (Op == ir::Op::Eq)
    return a == b;
  else if constexpr (Op == ir::Op::Ne)
    return a != b;
  else if constexpr (Op == ir::Op::Lt)
    return a < b;
  else if constexpr (Op == ir::Op::Le)
    return a <= b;
  else if constexpr (Op == ir::Op::Gt)
    return a > b;
  else
    return a >= b;
}

// T: how the slot's bits are compared (float, double, or a signed/unsigned integer); U: storage.
template <ir::Op Op, class U, class T> void dense_compare(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  const U* b = x.reg<U>(n.arg[1]);
  uint8_t* __restrict r = x.reg<uint8_t>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i) {
    T va, vb;
    if constexpr (std::is_floating_point_v<T>) {
      va = std::bit_cast<T>(a[i]);
      vb = std::bit_cast<T>(b[i]);
    } else {
      va = static_cast<T>(a[i]);
      vb = static_cast<T>(b[i]);
    }
    r[i] = compare<Op>(va, vb);
  }
}

// Any float format, flushed or not: exact widening to double, one active lane at a time.
template <ir::Op Op> void general_compare(Exec& x, const Node& n) {
  const num::Format f = ir::format_of(n.arg_type);
  const uint32_t bytes = slot_bytes(n.arg_type);
  const num::FloatControls& c = x.options().controls;
  const void* a = x.reg<std::byte>(n.arg[0]);
  const void* b = x.reg<std::byte>(n.arg[1]);
  uint8_t* r = x.reg<uint8_t>(n.reg);
  for_active(x.mask(), [&](uint32_t i) {
    double va = num::to_double(f, num::apply_flush(f, get_slot(a, bytes, i), c));
    double vb = num::to_double(f, num::apply_flush(f, get_slot(b, bytes, i), c));
    r[i] = compare<Op>(va, vb);
  });
}

template <ir::Op Op> EvalFn compare_eval(const Program& p, ir::ScalarType t) {
  using T = ir::ScalarType;
  if (ir::is_float(t)) {
    if (num::flushes(ir::format_of(t), p.options.controls))
      return general_compare<Op>;
    if (t == T::F32)
      return dense_compare<Op, uint32_t, float>;
    if (t == T::F64)
      return dense_compare<Op, uint64_t, double>;
    return general_compare<Op>;
  }
  switch (t) {
  case T::Bool:
  case T::U8:
    return dense_compare<Op, uint8_t, uint8_t>;
  case T::I8:
    return dense_compare<Op, uint8_t, int8_t>;
  case T::U16:
    return dense_compare<Op, uint16_t, uint16_t>;
  case T::I16:
    return dense_compare<Op, uint16_t, int16_t>;
  case T::U32:
    return dense_compare<Op, uint32_t, uint32_t>;
  case T::I32:
    return dense_compare<Op, uint32_t, int32_t>;
  case T::U64:
    return dense_compare<Op, uint64_t, uint64_t>;
  case T::I64:
    return dense_compare<Op, uint64_t, int64_t>;
  default:
    return nullptr;
  }
}

template <class U> void select(Exec& x, const Node& n) {
  const uint8_t* c = x.reg<uint8_t>(n.arg[0]);
  const U* a = x.reg<U>(n.arg[1]);
  const U* b = x.reg<U>(n.arg[2]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = c[i] ? a[i] : b[i];
}

} // namespace

EvalFn logic_eval(const Program& p, const Node& n) {
  switch (n.op) {
  case ir::Op::Eq:
    return compare_eval<ir::Op::Eq>(p, n.arg_type);
  case ir::Op::Ne:
    return compare_eval<ir::Op::Ne>(p, n.arg_type);
  case ir::Op::Lt:
    return compare_eval<ir::Op::Lt>(p, n.arg_type);
  case ir::Op::Le:
    return compare_eval<ir::Op::Le>(p, n.arg_type);
  case ir::Op::Gt:
    return compare_eval<ir::Op::Gt>(p, n.arg_type);
  case ir::Op::Ge:
    return compare_eval<ir::Op::Ge>(p, n.arg_type);
  case ir::Op::Select:
    switch (slot_bytes(n.type)) {
    case 1:
      return select<uint8_t>;
    case 2:
      return select<uint16_t>;
    case 4:
      return select<uint32_t>;
    default:
      return select<uint64_t>;
    }
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
  case ir::Op::Neg:
  case ir::Op::Abs:
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
  case ir::Op::Copysign:
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Not:
  case ir::Op::Shl:
  case ir::Op::Shr:
    return nullptr;
  }
  ir::invalid_op(n.op);
}

} // namespace halfway::interp
