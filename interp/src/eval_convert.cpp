// Conversions, bitcasts, pack and unpack. Every conversion is numerics' (one rounding, the node's
// rounding mode, saturation for e4m3 when the node asks for it); f32 <-> f16 at nearest-even use
// numerics' vectorised bulk routines over the whole batch.
#include "exec.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/int_convert.hpp"
#include "slots.hpp"

#include <cstring>

namespace halfway::interp {

namespace {

void f32_to_f16(Exec& x, const Node& n) {
  num::f32_to_f16_array(x.reg<float>(n.arg[0]), x.reg<uint16_t>(n.reg), x.width());
}
void f16_to_f32(Exec& x, const Node& n) {
  num::f16_to_f32_array(x.reg<uint16_t>(n.arg[0]), x.reg<float>(n.reg), x.width());
}

// Reads the source, converts, writes the result, one active lane at a time.
template <class F> void per_lane(Exec& x, const Node& n, F convert) {
  const uint32_t in = slot_bytes(n.arg_type), out = slot_bytes(n.type);
  const void* a = x.reg<std::byte>(n.arg[0]);
  void* r = x.reg<std::byte>(n.reg);
  for_active(x.mask(), [&](uint32_t i) { set_slot(r, out, i, convert(get_slot(a, in, i))); });
}

num::Fp8Overflow overflow_of(const ir::Expr& e) {
  return e.saturate ? num::Fp8Overflow::Saturate : num::Fp8Overflow::Nan;
}

void float_to_float(Exec& x, const Node& n) {
  const num::Format from = ir::format_of(n.arg_type), to = ir::format_of(n.type);
  const num::Rounding r = ir::rounding_of(n.expr->rounding);
  const num::Fp8Overflow ov = overflow_of(*n.expr);
  per_lane(x, n, [&](uint64_t v) { return num::convert_bits(from, v, to, r, ov); });
}

void int_to_float(Exec& x, const Node& n) {
  const int width = static_cast<int>(ir::info(n.arg_type).bits);
  const bool is_signed = ir::info(n.arg_type).is_signed;
  const num::Format to = ir::format_of(n.type);
  const num::Rounding r = ir::rounding_of(n.expr->rounding);
  const num::Fp8Overflow ov = overflow_of(*n.expr);
  per_lane(x, n, [&](uint64_t v) { return num::int_to_float(v, width, is_signed, to, r, ov); });
}

void float_to_int(Exec& x, const Node& n) {
  const num::Format from = ir::format_of(n.arg_type);
  const int width = static_cast<int>(ir::info(n.type).bits);
  const bool is_signed = ir::info(n.type).is_signed;
  per_lane(x, n, [&](uint64_t v) { return num::float_to_int(from, v, width, is_signed); });
}

// Integer to integer: sign- or zero-extend the source, keep the target's low bits.
void int_to_int(Exec& x, const Node& n) {
  const uint32_t from_bits = ir::info(n.arg_type).bits;
  const bool is_signed = ir::info(n.arg_type).is_signed;
  const ir::ScalarType to = n.type;
  per_lane(x, n, [&](uint64_t v) {
    uint64_t wide = is_signed ? static_cast<uint64_t>(ir::sign_extend(v, from_bits)) : v;
    return ir::truncate_bits(to, wide);
  });
}

void bitcast(Exec& x, const Node& n) {
  std::memcpy(x.reg<std::byte>(n.reg), x.reg<std::byte>(n.arg[0]),
              size_t{x.width()} * slot_bytes(n.type));
}

// Element 0 in the lowest bits; 2 x 16-bit or 4 x 8-bit elements (the verifier checked the count).
template <class E> void pack(Exec& x, const Node& n) {
  constexpr uint32_t bits = sizeof(E) * 8;
  constexpr int parts = 4 / sizeof(E);
  const E* a[parts];
  for (int k = 0; k < parts; ++k)
    a[k] = x.reg<E>(n.arg[k]);
  uint32_t* __restrict r = x.reg<uint32_t>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i) {
    uint32_t word = 0;
    for (int k = 0; k < parts; ++k)
      word |= uint32_t{a[k][i]} << (k * bits);
    r[i] = word;
  }
}

template <class E> void unpack(Exec& x, const Node& n) {
  const uint32_t shift = static_cast<uint32_t>(n.expr->imm) * sizeof(E) * 8;
  const uint32_t* a = x.reg<uint32_t>(n.arg[0]);
  E* __restrict r = x.reg<E>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = static_cast<E>(a[i] >> shift);
}

EvalFn convert(const Node& n) {
  using T = ir::ScalarType;
  const bool from_float = ir::is_float(n.arg_type), to_float = ir::is_float(n.type);
  if (from_float && to_float) {
    const bool nearest = n.expr->rounding == ir::RoundingMode::NearestEven;
    if (n.arg_type == T::F32 && n.type == T::F16 && nearest)
      return f32_to_f16;
    if (n.arg_type == T::F16 && n.type == T::F32)
      return f16_to_f32;
    return float_to_float;
  }
  if (to_float)
    return int_to_float;
  if (from_float)
    return float_to_int;
  return int_to_int;
}

} // namespace

EvalFn convert_eval(const Program&, const Node& n) {
  switch (n.op) {
  case ir::Op::Convert:
    return convert(n);
  case ir::Op::Bitcast:
    return bitcast;
  case ir::Op::Pack:
    return ir::info(n.arg_type).bits == 16 ? pack<uint16_t> : pack<uint8_t>;
  case ir::Op::Unpack:
    return ir::info(n.type).bits == 16 ? unpack<uint16_t> : unpack<uint8_t>;
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
  ir::invalid_op(n.op);
}

} // namespace halfway::interp
