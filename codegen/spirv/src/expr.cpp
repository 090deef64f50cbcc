// Expressions: each IR node becomes SPIR-V in some representation (Repr), converted on demand.

#include "emitter.hpp"
#include "halfway/codegen/spirv/fault.hpp"
#include "halfway/ir/bits.hpp"

#include <bit>
#include <spirv/unified1/GLSL.std.450.h>

namespace halfway::codegen::spirv {

using ir::ScalarType;
using O = spv::Op;

namespace {
bool is_small_int(ScalarType t) {
  return ir::is_int(t) && ir::info(t).bits < 32;
}
bool is_sub32_float(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::BF16 || ir::is_fp8(t);
}
} // namespace

// ---- representations ----------------------------------------------------------------------------

uint32_t Emitter::as(Val v, ScalarType t, Repr want) {
  if (v.repr == want)
    return v.id;
  if (is_small_int(t)) {
    const bool s = ir::info(t).is_signed;
    if (want == Repr::Wide)
      return b_.op(s ? O::OpSConvert : O::OpUConvert, repr_type(t, want), {v.id});
    if (want == Repr::Native)
      return b_.op(s ? O::OpSConvert : O::OpUConvert, t_int(t), {v.id});
  }
  if (ir::is_int(t) && (want == Repr::Wide || v.repr == Repr::Wide))
    return v.id; // 32/64: the same
  if (is_sub32_float(t)) {
    switch (want) {
    case Repr::F32:
      if (v.repr == Repr::Native)
        return b_.op(O::OpFConvert, t_f32(), {v.id});
      if (v.repr == Repr::Bits)
        return soft_widen(t, v.id);
      break;
    case Repr::Bits:
      if (t == ScalarType::BF16) {
        uint32_t f = as(v, t, Repr::F32);
        return b_.op(O::OpShiftRightLogical, t_u32(), {b_.op(O::OpBitcast, t_u32(), {f}), u32(16)});
      }
      // The value is exact in the format, so any rounding gives its bits.
      return soft_narrow(t, as(v, t, Repr::F32), ir::RoundingMode::NearestEven, false);
    case Repr::Native:
      if (t == ScalarType::F16)
        return b_.op(O::OpFConvert, b_.type_float(16), {as(v, t, Repr::F32)});
      break;
    case Repr::Wide:
      break;
    }
  }
  internal("no conversion of a " + std::string(ir::name(t)) + " value between representations");
}

Val Emitter::eval(ir::ExprId id) {
  if (auto it = cache_.find(id); it != cache_.end())
    return it->second;
  Val v = eval_uncached(id, k_.expr(id));
  cache_.emplace(id, v);
  return v;
}

uint32_t Emitter::get(ir::ExprId id, Repr want) {
  const ir::Expr& e = k_.expr(id);
  if (e.op == ir::Op::Const)
    return constant(e.type, e.imm, want);
  return as(eval(id), e.type, want);
}

uint32_t Emitter::constant(ScalarType t, uint64_t bits, Repr want) {
  switch (want) {
  case Repr::Bits:
    return u32(static_cast<uint32_t>(bits));
  case Repr::F32:
    // A bf16 value is the top half of its f32: the pattern shifted, so that a NaN keeps its
    // payload (a select or a store moves it, and a bitcast shows it; through a double and a
    // float conversion it became the canonical NaN).
    if (t == ScalarType::BF16)
      return b_.constant(t_f32(), static_cast<uint32_t>(bits) << 16);
    return b_.constant_f32(static_cast<float>(ir::widen_to_double(t, bits)));
  case Repr::Wide: {
    uint64_t v = ir::info(t).is_signed
                     ? static_cast<uint64_t>(ir::sign_extend(bits, ir::info(t).bits))
                     : bits;
    return b_.constant(repr_type(t, want), v & 0xffffffffu);
  }
  case Repr::Native:
    break;
  }
  if (t == ScalarType::Bool)
    return b_.constant_bool(bits != 0);
  return b_.constant(repr_type(t, Repr::Native), bits);
}

// ---- dispatch -----------------------------------------------------------------------------------

Val Emitter::eval_uncached(ir::ExprId id, const ir::Expr& e) {
  const SpirvRow& row = spirv_row(e.op);
  // Rows that are special for every operand class (leaves, conversions, select, ...).
  if (row.f.kind == ImplKind::Special && row.s.kind == ImplKind::Special)
    return eval_special(id, e, static_cast<Special>(row.f.code));
  return eval_generic(id, e, row);
}

Val Emitter::eval_special(ir::ExprId id, const ir::Expr& e, Special which) {
  switch (which) {
  case Special::Leaf:
    return eval_leaf(id, e);
  case Special::Convert:
    return eval_convert(id, e);
  case Special::Bitcast:
    return eval_bitcast(e);
  case Special::Pack:
    return eval_pack(e);
  case Special::Unpack:
    return eval_unpack(e);
  case Special::FloatMin:
    return eval_float_min_max(e, true);
  case Special::FloatMax:
    return eval_float_min_max(e, false);
  case Special::Clamp:
    return eval_clamp(e);
  case Special::Copysign:
    return eval_copysign(e);
  case Special::Identity:
    return eval(e.args[0]);
  case Special::Select:
    return eval_select(e);
  case Special::Erf:
    refuse(id, "erf (GLSL.std.450 has no erf instruction and this backend emits no polynomial for "
               "it; run the kernel on the interpreter or the CPU device)");
  }
  internal("unknown special op");
}

// Arithmetic, comparisons, bitwise ops and GLSL.std.450 math: one table row, one instruction.
Val Emitter::eval_generic(ir::ExprId id, const ir::Expr& e, const SpirvRow& row) {
  const ir::OpInfo& info = ir::info(e.op);
  const bool compare = info.rule == ir::TypeRule::Compare;
  const ScalarType t = compare ? k_.expr(e.args[0]).type : e.type;
  const bool is_float = ir::is_float(t);
  Impl impl = is_float                ? row.f
              : t == ScalarType::Bool ? row.b
              : ir::info(t).is_signed ? row.s
                                      : row.u;
  if (impl.kind == ImplKind::None)
    internal(std::string(info.name) + " on " + std::string(ir::name(t)));
  if (impl.kind == ImplKind::Special)
    return eval_special(id, e, static_cast<Special>(impl.code));

  // The representation the op works in.
  Repr repr = Repr::Native;
  if (t == ScalarType::BF16) {
    if (row.bf16_refused)
      refuse(id, std::string(info.name) + " on bf16 (computing it in f32 would round twice)");
    repr = Repr::F32;
  } else if (t == ScalarType::F16 && (compare || !info.rounds)) {
    repr = Repr::F32; // exact on the f32 form: no Float16 needed
  } else if (is_small_int(t) && compare) {
    repr = Repr::Wide;
  }
  if (t == ScalarType::F64 && row.glsl_f16_f32_only)
    refuse(id, std::string(info.name) +
                   " on f64 (GLSL.std.450 defines it for 16- and 32-bit floats only)");

  const uint32_t work_type = repr == Repr::F32 ? t_f32() : repr_type(t, repr);
  const uint32_t result_type = compare ? t_bool() : work_type;
  uint32_t args[3] = {0, 0, 0};
  for (int i = 0; i < e.nargs; ++i)
    args[i] = get(e.args[i], repr);
  // The test-only faults of fault.hpp.
  if (e.op == ir::Op::Sub && is_float && testing::injected_fault() == testing::Fault::SwapSub)
    std::swap(args[0], args[1]);
  if (e.op == ir::Op::Shr && testing::injected_fault() == testing::Fault::LogicalShiftRight)
    impl = row.u;
  uint32_t result = 0;
  if ((e.op == ir::Op::Div || e.op == ir::Op::Rem) && ir::is_int(t)) {
    check_arith(id, e, t, args[1]);
    return {integer_division(e.op, t, args[0], args[1]), repr};
  }
  if (e.op == ir::Op::Shl || e.op == ir::Op::Shr)
    check_arith(id, e, t, args[1]);
  if (impl.kind == ImplKind::Core) {
    O opcode = static_cast<O>(impl.code);
    if (row.contract && is_float) {
      if (e.nargs == 1)
        result = float_arith(opcode, result_type, {args[0]}, id);
      else
        result = float_arith(opcode, result_type, {args[0], args[1]}, id);
    } else if (e.nargs == 1) {
      result = b_.op(opcode, result_type, {args[0]});
    } else {
      result = b_.op(opcode, result_type, {args[0], args[1]});
    }
  } else {
    if (e.nargs == 1)
      result = b_.ext_glsl(result_type, impl.code, {args[0]});
    else if (e.nargs == 2)
      result = b_.ext_glsl(result_type, impl.code, {args[0], args[1]});
    else
      result = b_.ext_glsl(result_type, impl.code, {args[0], args[1], args[2]});
  }
  if (t == ScalarType::BF16 && info.rounds && !compare)
    result = round_to_bf16(result);
  return {result, compare ? Repr::Native : repr};
}

// Integer division and remainder as the interpreter defines them (truncating; MIN / -1 wraps to
// MIN, MIN % -1 is 0). The divisor is made safe first: x86 traps on a zero divisor and on
// MIN / -1, and lavapipe runs shaders in-process. Division by zero is an error on the
// interpreter, so its result here is only "no crash".
uint32_t Emitter::integer_division(ir::Op op, ScalarType t, uint32_t a, uint32_t b) {
  const uint32_t type = t_int(t);
  const bool s = ir::info(t).is_signed;
  uint32_t one = b_.constant(type, 1);
  uint32_t zero = b_.constant(type, 0);
  uint32_t unsafe = b_.op(O::OpIEqual, t_bool(), {b, zero});
  uint32_t minus_one = 0;
  if (s) {
    minus_one = b_.op(O::OpIEqual, t_bool(), {b, b_.constant(type, ~uint64_t{0})});
    unsafe = b_.op(O::OpLogicalOr, t_bool(), {unsafe, minus_one});
  }
  uint32_t divisor = b_.op(O::OpSelect, type, {unsafe, one, b});
  if (op == ir::Op::Div) {
    uint32_t q = b_.op(s ? O::OpSDiv : O::OpUDiv, type, {a, divisor});
    return s ? b_.op(O::OpSelect, type, {minus_one, b_.op(O::OpSNegate, type, {a}), q}) : q;
  }
  uint32_t r = b_.op(s ? O::OpSRem : O::OpUMod, type, {a, divisor});
  return s ? b_.op(O::OpSelect, type, {minus_one, zero, r}) : r;
}

uint32_t Emitter::float_arith(O op, uint32_t type, std::initializer_list<uint32_t> args,
                              ir::ExprId origin) {
  uint32_t r = b_.op(op, type, args);
  if (origin == ir::kNone || !relaxed_.count(origin)) {
    b_.decorate(r, spv::Decoration::NoContraction);
    ++no_contraction_;
  }
  return r;
}

// ---- leaves -------------------------------------------------------------------------------------

uint32_t Emitter::index(ir::ExprId id) {
  ScalarType t = k_.expr(id).type;
  return get(id, ir::info(t).bits == 64 ? Repr::Native : Repr::Wide);
}

uint32_t Emitter::pointer(ir::Space space, uint32_t mem, uint32_t index_id) {
  ScalarType t = k_.element_type(space, mem);
  if (space == ir::Space::Buffer) {
    uint32_t type = b_.type_pointer(spv::StorageClass::StorageBuffer, storage_type(t));
    return b_.op(O::OpAccessChain, type, {buffer_var_[mem], u32(0), index_id});
  }
  uint32_t type = b_.type_pointer(spv::StorageClass::Workgroup, repr_type(t, canonical(t)));
  return b_.op(O::OpAccessChain, type, {shared_var_[mem], index_id});
}

uint32_t Emitter::to_storage(Val v, ScalarType t) {
  if (t == ScalarType::BF16 || ir::is_fp8(t))
    return b_.op(O::OpUConvert, storage_type(t), {as(v, t, Repr::Bits)});
  return as(v, t, Repr::Native);
}

Val Emitter::from_storage(uint32_t id, ScalarType t) {
  if (t == ScalarType::BF16 || ir::is_fp8(t))
    return {b_.op(O::OpUConvert, t_u32(), {id}), Repr::Bits};
  return {id, Repr::Native};
}

Val Emitter::eval_leaf(ir::ExprId id, const ir::Expr& e) {
  using ir::Op;
  switch (e.op) {
  case Op::Const:
    return {constant(e.type, e.imm, canonical(e.type)), canonical(e.type)};
  case Op::LocalGet:
    return {b_.op(O::OpLoad, repr_type(e.type, canonical(e.type)), {local_var_[e.ref]}),
            canonical(e.type)};
  case Op::ParamGet: {
    uint32_t v = push_value(PushSlot::Scalar, e.ref);
    ScalarType t = e.type;
    if (t == ScalarType::Bool)
      return {b_.op(O::OpINotEqual, t_bool(), {v, u32(0)}), Repr::Native};
    if (t == ScalarType::F16 || t == ScalarType::BF16)
      return {v, Repr::F32};
    if (ir::is_fp8(t))
      return {v, Repr::Bits};
    return {v, is_small_int(t) ? Repr::Wide : Repr::Native};
  }
  case Op::GlobalId:
    return {global_id_[e.imm], Repr::Native};
  case Op::GroupId:
    return {group_id_[e.imm], Repr::Native};
  case Op::LocalId:
    return {builtin_component(spv::BuiltIn::LocalInvocationId, static_cast<uint32_t>(e.imm)),
            Repr::Native};
  case Op::GroupSize:
    return {u32(k_.workgroup[e.imm]), Repr::Native};
  case Op::NumGroups: {
    static constexpr PushSlot kSlots[] = {PushSlot::GroupsX, PushSlot::GroupsY, PushSlot::GroupsZ};
    return {push_value(kSlots[e.imm]), Repr::Native};
  }
  case Op::BufferLen:
    return {push_value(PushSlot::BufferLength, e.ref), Repr::Native};
  case Op::Load: {
    ScalarType t = e.type;
    if (by_element(e.space, e.ref)) {
      std::array<ir::ExprId, 3> ix{ir::kNone, ir::kNone, ir::kNone};
      std::array<uint32_t, 3> ids{};
      for (int i = 0; i < e.nargs; ++i) {
        ix[i] = e.args[i];
        ids[i] = index(e.args[i]);
      }
      const uint32_t type = repr_type(t, canonical(t));
      const uint32_t value =
          array_access(e.space, e.ref, ix, ids, Access::Load, id, 0, b_.constant_null(type),
                       [&](uint32_t ptr) { return b_.op(O::OpLoad, type, {ptr}); });
      return {value, canonical(t)};
    }
    const uint32_t idx = index(e.args[0]);
    if (!options_.checks) {
      uint32_t ptr = pointer(e.space, e.ref, idx);
      if (e.space == ir::Space::Buffer)
        return from_storage(b_.op(O::OpLoad, storage_type(t), {ptr}), t);
      return {b_.op(O::OpLoad, repr_type(t, canonical(t)), {ptr}), canonical(t)};
    }
    // A checked load merges its value with zero through an OpPhi, which needs a 32- or 64-bit
    // type: 8/16-bit storage values are widened to their canonical form inside the check.
    Repr repr = canonical(t);
    if (e.space == ir::Space::Buffer) {
      repr = t == ScalarType::BF16 || ir::is_fp8(t) || ir::info(t).bits >= 32 ? Repr::Native
                                                                              : canonical(t);
      if (t == ScalarType::BF16 || ir::is_fp8(t))
        repr = Repr::Bits;
    }
    const uint32_t zero = b_.constant_null(repr_type(t, repr));
    uint32_t value =
        guarded(e.space, e.ref, e.args[0], idx, Access::Load, id, 0, zero, [&](uint32_t at) {
          uint32_t ptr = pointer(e.space, e.ref, at);
          if (e.space == ir::Space::Buffer)
            return as(from_storage(b_.op(O::OpLoad, storage_type(t), {ptr}), t), t, repr);
          return b_.op(O::OpLoad, repr_type(t, canonical(t)), {ptr});
        });
    return {value, repr};
  }
  case Op::Convert:
  case Op::Bitcast:
  case Op::Pack:
  case Op::Unpack:
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Div:
  case Op::Rem:
  case Op::Neg:
  case Op::Abs:
  case Op::Min:
  case Op::Max:
  case Op::Clamp:
  case Op::Fma:
  case Op::Sqrt:
  case Op::Rsqrt:
  case Op::Exp:
  case Op::Exp2:
  case Op::Log:
  case Op::Log2:
  case Op::Sin:
  case Op::Cos:
  case Op::Tan:
  case Op::Tanh:
  case Op::Pow:
  case Op::Erf:
  case Op::Atan2:
  case Op::Atan:
  case Op::Floor:
  case Op::Ceil:
  case Op::Fract:
  case Op::Copysign:
  case Op::Eq:
  case Op::Ne:
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::And:
  case Op::Or:
  case Op::Xor:
  case Op::Not:
  case Op::Shl:
  case Op::Shr:
  case Op::Select:
    break;
  }
  internal("unknown leaf " + std::string(ir::name(e.op)) + " at node " + std::to_string(id));
}

// ---- bit-level ops ------------------------------------------------------------------------------

Val Emitter::eval_bitcast(const ir::Expr& e) {
  ScalarType from = k_.expr(e.args[0]).type, to = e.type;
  const uint32_t bits = ir::info(to).bits;
  if (bits >= 32) { // same-width native types: one OpBitcast (or nothing between int signednesses)
    uint32_t src = get(e.args[0], Repr::Native);
    uint32_t type = repr_type(to, Repr::Native);
    if (b_.type_of(src) == type)
      return {src, Repr::Native};
    return {b_.op(O::OpBitcast, type, {src}), Repr::Native};
  }
  // 8/16 bits: go through the zero-extended pattern in a u32.
  uint32_t pattern = ir::is_int(from)
                         ? b_.op(O::OpBitwiseAnd, t_u32(),
                                 {b_.op(O::OpBitcast, t_u32(), {get(e.args[0], Repr::Wide)}),
                                  u32((1u << bits) - 1)})
                         : get(e.args[0], Repr::Bits);
  if (!ir::is_int(to))
    return {pattern, Repr::Bits};
  if (ir::info(to).is_signed) {
    uint32_t s = b_.op(O::OpBitFieldSExtract, t_i32(),
                       {b_.op(O::OpBitcast, t_i32(), {pattern}), u32(0), u32(bits)});
    return {s, Repr::Wide};
  }
  return {pattern, Repr::Wide};
}

Val Emitter::eval_pack(const ir::Expr& e) {
  const uint32_t width = ir::info(e.aux).bits;
  uint32_t word = 0;
  for (int i = 0; i < e.nargs; ++i) {
    uint32_t part = get(e.args[i], Repr::Bits);
    if (i > 0)
      part = b_.op(O::OpShiftLeftLogical, t_u32(), {part, u32(width * i)});
    word = i == 0 ? part : b_.op(O::OpBitwiseOr, t_u32(), {word, part});
  }
  return {word, Repr::Native};
}

Val Emitter::eval_unpack(const ir::Expr& e) {
  const uint32_t width = ir::info(e.aux).bits;
  uint32_t word = get(e.args[0], Repr::Native);
  uint32_t shift = static_cast<uint32_t>(e.imm) * width;
  uint32_t shifted = shift == 0 ? word : b_.op(O::OpShiftRightLogical, t_u32(), {word, u32(shift)});
  uint32_t bits = shift + width == 32
                      ? shifted
                      : b_.op(O::OpBitwiseAnd, t_u32(), {shifted, u32((1u << width) - 1)});
  return {bits, Repr::Bits};
}

// ---- float helpers ------------------------------------------------------------------------------

uint32_t Emitter::sign_bit(uint32_t value, uint32_t width) {
  uint32_t high = 0;
  if (width == 64) {
    uint32_t pair = b_.op(O::OpBitcast, b_.type_vector(t_u32(), 2), {value});
    high = b_.op_lit(O::OpCompositeExtract, t_u32(), {pair}, {1});
  } else {
    high = b_.op(O::OpBitcast, t_u32(), {value});
  }
  return b_.op(O::OpSLessThan, t_bool(), {b_.op(O::OpBitcast, t_i32(), {high}), i32(0)});
}

// The operand as the float type the work happens in: f64 natively, everything else as f32.
uint32_t Emitter::work_float(ir::ExprId id, ScalarType type) {
  if (type == ScalarType::F64 || type == ScalarType::F32)
    return get(id, Repr::Native);
  return get(id, Repr::F32);
}

// minNum/maxNum with -0 < +0 (numerics/arith.hpp), by selects: exact on every driver, whatever
// its FMin/NMin does with zeros.
Val Emitter::eval_float_min_max(const ir::Expr& e, bool is_min) {
  ScalarType t = e.type;
  Repr repr = (t == ScalarType::F32 || t == ScalarType::F64) ? Repr::Native : Repr::F32;
  uint32_t type = repr == Repr::F32 ? t_f32() : repr_type(t, repr);
  uint32_t width = t == ScalarType::F64 ? 64 : 32;
  uint32_t a = get(e.args[0], repr), b = get(e.args[1], repr);
  return {float_min_max(a, b, is_min, type, width), repr};
}

uint32_t Emitter::float_min_max(uint32_t a, uint32_t b, bool is_min, uint32_t type,
                                uint32_t width) {
  uint32_t a_less = b_.op(O::OpFOrdLessThan, t_bool(), {a, b});
  uint32_t b_less = b_.op(O::OpFOrdLessThan, t_bool(), {b, a});
  uint32_t a_neg = sign_bit(a, width);
  // Equal (or both zero): min takes the negative one, max the positive one.
  uint32_t equal =
      is_min ? b_.op(O::OpSelect, type, {a_neg, a, b}) : b_.op(O::OpSelect, type, {a_neg, b, a});
  uint32_t r = b_.op(O::OpSelect, type, {a_less, is_min ? a : b, equal});
  r = b_.op(O::OpSelect, type, {b_less, is_min ? b : a, r});
  uint32_t b_nan = b_.op(O::OpIsNan, t_bool(), {b});
  r = b_.op(O::OpSelect, type, {b_nan, a, r});
  // Two NaNs give the canonical NaN (numerics/arith.hpp), not b's bits: f16 and bf16 values are
  // held as f32 here, and their narrowing makes the f32 one their own canonical NaN.
  uint32_t canonical = width == 64 ? constant(ScalarType::F64, 0x7ff8000000000000u, Repr::Native)
                                   : constant(ScalarType::F32, 0x7fc00000u, Repr::Native);
  r = b_.op(O::OpSelect, type,
            {b_.op(O::OpIsNan, t_bool(), {a}), b_.op(O::OpSelect, type, {b_nan, canonical, b}), r});
  return r;
}

// clamp(x, lo, hi) = min(max(x, lo), hi) (specs/ir.md). Not GLSL's FClamp/NClamp/SClamp/UClamp:
// they are undefined when lo > hi, and FClamp's NaN rules differ from minNum/maxNum.
Val Emitter::eval_clamp(const ir::Expr& e) {
  ScalarType t = e.type;
  if (ir::is_float(t)) {
    Repr repr = (t == ScalarType::F32 || t == ScalarType::F64) ? Repr::Native : Repr::F32;
    uint32_t type = repr == Repr::F32 ? t_f32() : repr_type(t, repr);
    uint32_t width = t == ScalarType::F64 ? 64 : 32;
    uint32_t x = get(e.args[0], repr), lo = get(e.args[1], repr), hi = get(e.args[2], repr);
    return {float_min_max(float_min_max(x, lo, false, type, width), hi, true, type, width), repr};
  }
  const bool is_signed = ir::info(t).is_signed;
  uint32_t type = repr_type(t, Repr::Native);
  uint32_t x = get(e.args[0], Repr::Native), lo = get(e.args[1], Repr::Native),
           hi = get(e.args[2], Repr::Native);
  uint32_t m = b_.ext_glsl(type, is_signed ? GLSLstd450SMax : GLSLstd450UMax, {x, lo});
  return {b_.ext_glsl(type, is_signed ? GLSLstd450SMin : GLSLstd450UMin, {m, hi}), Repr::Native};
}

Val Emitter::eval_copysign(const ir::Expr& e) {
  ScalarType t = e.type;
  if (t == ScalarType::F64) {
    uint32_t v2 = b_.type_vector(t_u32(), 2);
    uint32_t m = b_.op(O::OpBitcast, v2, {get(e.args[0], Repr::Native)});
    uint32_t s = b_.op(O::OpBitcast, v2, {get(e.args[1], Repr::Native)});
    uint32_t mh = b_.op_lit(O::OpCompositeExtract, t_u32(), {m}, {1});
    uint32_t sh = b_.op_lit(O::OpCompositeExtract, t_u32(), {s}, {1});
    uint32_t high = b_.op(O::OpBitwiseOr, t_u32(),
                          {b_.op(O::OpBitwiseAnd, t_u32(), {mh, u32(0x7fffffffu)}),
                           b_.op(O::OpBitwiseAnd, t_u32(), {sh, u32(0x80000000u)})});
    uint32_t pair = b_.op_lit(O::OpCompositeInsert, v2, {high, m}, {1});
    return {b_.op(O::OpBitcast, t_f64(), {pair}), Repr::Native};
  }
  Repr repr = t == ScalarType::F32 ? Repr::Native : Repr::F32;
  uint32_t m = b_.op(O::OpBitcast, t_u32(), {get(e.args[0], repr)});
  uint32_t s = b_.op(O::OpBitcast, t_u32(), {get(e.args[1], repr)});
  uint32_t r = b_.op(O::OpBitwiseOr, t_u32(),
                     {b_.op(O::OpBitwiseAnd, t_u32(), {m, u32(0x7fffffffu)}),
                      b_.op(O::OpBitwiseAnd, t_u32(), {s, u32(0x80000000u)})});
  return {b_.op(O::OpBitcast, t_f32(), {r}), repr};
}

Val Emitter::eval_select(const ir::Expr& e) {
  ScalarType t = e.type;
  uint32_t cond = get(e.args[0], Repr::Native);
  Repr repr = canonical(t);
  if (repr != Repr::Native && (t == ScalarType::F16 || is_small_int(t))) {
    // Stay native when both arms already are (e.g. f16 arithmetic feeding a select).
    const ir::Expr& x = k_.expr(e.args[1]);
    const ir::Expr& y = k_.expr(e.args[2]);
    bool x_native = x.op != ir::Op::Const && eval(e.args[1]).repr == Repr::Native;
    bool y_native = y.op != ir::Op::Const && eval(e.args[2]).repr == Repr::Native;
    if (x_native && y_native)
      repr = Repr::Native;
  }
  uint32_t type = repr == Repr::F32 ? t_f32() : repr_type(t, repr);
  return {b_.op(O::OpSelect, type, {cond, get(e.args[1], repr), get(e.args[2], repr)}), repr};
}

} // namespace halfway::codegen::spirv
