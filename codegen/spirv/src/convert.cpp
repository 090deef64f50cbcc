// Conversions, the opaque identity, and integer soft-float routines for formats SPIR-V lacks.
//
// Every routine here is exact or correctly rounded by construction and uses integer instructions
// only (plus OpFConvert/OpConvertUToF on values where they are exact or round-to-nearest-even by
// the RoundingModeRTE execution mode), so no driver can contract it and its results match
// halfway::num bit for bit: NaNs keep their sign and become the target's canonical quiet NaN,
// overflow follows IEEE per rounding mode, E4M3 overflow gives NaN (or +-448 when saturating).

#include "emitter.hpp"
#include "halfway/codegen/spirv/fault.hpp"
#include "halfway/numerics/formats.hpp"

#include <bit>
#include <cmath>
#include <spirv/unified1/GLSL.std.450.h>

namespace halfway::codegen::spirv {

using ir::RoundingMode;
using ir::ScalarType;
using O = spv::Op;

namespace {

num::Format format_of(ScalarType t) {
  switch (t) {
  case ScalarType::F16:
    return num::Format::F16;
  case ScalarType::BF16:
    return num::Format::BF16;
  case ScalarType::F64:
    return num::Format::F64;
  case ScalarType::E4M3:
    return num::Format::E4M3;
  case ScalarType::E5M2:
    return num::Format::E5M2;
  default:
    return num::Format::F32;
  }
}

std::string rounding_text(RoundingMode r) {
  return std::string(ir::name(r));
}

} // namespace

Val Emitter::eval_convert(ir::ExprId id, const ir::Expr& e) {
  const ScalarType from = k_.expr(e.args[0]).type, to = e.type;
  if (ir::is_int(from) && ir::is_int(to))
    return convert_int_to_int(e.args[0], from, to);
  if (ir::is_float(from) && ir::is_int(to))
    return convert_float_to_int(e.args[0], from, to);
  if (ir::is_int(from))
    return convert_int_to_float(id, e, from);
  return convert_float_to_float(id, e, from);
}

// ---- integers -----------------------------------------------------------------------------------

// Integers wrap: a narrower target keeps the low bits, a wider one sign- or zero-extends per the
// source's signedness. Values up to 32 bits are handled in their 32-bit (Wide) form.
Val Emitter::convert_int_to_int(ir::ExprId arg, ScalarType from, ScalarType to) {
  const uint32_t wf = ir::info(from).bits, wt = ir::info(to).bits;
  const bool sf = ir::info(from).is_signed, st = ir::info(to).is_signed;
  if (wf == 64 && wt == 64) {
    uint32_t v = get(arg, Repr::Native);
    return {sf == st ? v : b_.op(O::OpBitcast, t_int(to), {v}), Repr::Native};
  }
  if (wt == 64) { // from <= 32 bits; OpUConvert must produce an unsigned type
    uint32_t wide = sf ? b_.op(O::OpSConvert, t_int(to), {get(arg, Repr::Wide)})
                       : b_.op(O::OpUConvert, t_u64(), {get(arg, Repr::Wide)});
    if (b_.type_of(wide) != t_int(to))
      wide = b_.op(O::OpBitcast, t_int(to), {wide});
    return {wide, Repr::Native};
  }
  uint32_t v =
      wf == 64 ? b_.op(O::OpUConvert, t_u32(), {get(arg, Repr::Native)}) : get(arg, Repr::Wide);
  const uint32_t type32 = b_.type_int(32, st);
  if (b_.type_of(v) != type32)
    v = b_.op(O::OpBitcast, type32, {v});
  if (wt == 32)
    return {v, Repr::Native};
  if (st)
    return {b_.op(O::OpBitFieldSExtract, type32, {v, u32(0), u32(wt)}), Repr::Wide};
  return {b_.op(O::OpBitwiseAnd, type32, {v, u32((1u << wt) - 1)}), Repr::Wide};
}

// Truncation toward zero with saturation: NaN gives 0, values beyond the range its ends.
Val Emitter::convert_float_to_int(ir::ExprId arg, ScalarType from, ScalarType to) {
  const uint32_t x = work_float(arg, from);
  const bool f64 = from == ScalarType::F64;
  auto fconst = [&](double v) {
    return f64 ? b_.constant_f64(v) : b_.constant_f32(static_cast<float>(v));
  };
  const uint32_t w = ir::info(to).bits;
  const bool s = ir::info(to).is_signed;
  const uint32_t rt = b_.type_int(w == 64 ? 64 : 32, s);
  auto iconst = [&](uint64_t v) { return b_.constant(rt, w == 64 ? v : (v & 0xffffffffu)); };
  uint32_t r = b_.op(s ? O::OpConvertFToS : O::OpConvertFToU, rt, {x});
  const double top = std::ldexp(1.0, static_cast<int>(s ? w - 1 : w));
  const uint64_t max_value =
      s ? (uint64_t{1} << (w - 1)) - 1 : (w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1);
  const uint64_t min_value = s ? ~uint64_t{0} << (w - 1) : 0; // -2^(w-1), two's complement
  uint32_t above = b_.op(O::OpFOrdGreaterThanEqual, t_bool(), {x, fconst(top)});
  uint32_t below = b_.op(O::OpFOrdLessThan, t_bool(), {x, fconst(s ? -top : 0.0)});
  r = b_.op(O::OpSelect, rt, {above, iconst(max_value), r});
  r = b_.op(O::OpSelect, rt, {below, iconst(min_value), r});
  r = b_.op(O::OpSelect, rt, {b_.op(O::OpIsNan, t_bool(), {x}), iconst(0), r});
  return {r, w < 32 ? Repr::Wide : Repr::Native};
}

Val Emitter::convert_int_to_float(ir::ExprId id, const ir::Expr& e, ScalarType from) {
  const ScalarType to = e.type;
  const bool s = ir::info(from).is_signed;
  const uint32_t wf = ir::info(from).bits;
  const uint32_t src = get(e.args[0], wf == 64 ? Repr::Native : Repr::Wide);
  const O to_float = s ? O::OpConvertSToF : O::OpConvertUToF;
  if (to == ScalarType::F32 || to == ScalarType::F64) {
    if (e.rounding != RoundingMode::NearestEven && !ir::widens_exactly(from, to))
      refuse(id, "convert<" + std::string(ir::name(to)) + "> from " + std::string(ir::name(from)) +
                     " rounding " + rounding_text(e.rounding) +
                     " (SPIR-V integer conversions round to nearest even only)");
    return {b_.op(to_float, repr_type(to, Repr::Native), {src}), Repr::Native};
  }
  if (to == ScalarType::F16) {
    // Exact in f32 below 2^24; above it every f32 rounding stays beyond f16's range, where all
    // roundings to f16 agree with those of the exact integer.
    uint32_t f = b_.op(to_float, t_f32(), {src});
    if (e.rounding == RoundingMode::NearestEven && target_.f16.rounding_mode_rte)
      return {b_.op(O::OpFConvert, b_.type_float(16), {f}), Repr::Native};
    return {soft_narrow(to, f, e.rounding, false), Repr::Bits};
  }
  // bf16, fp8: round to odd in f32 first (exact below 2^24), then once to the target.
  uint32_t f = wf <= 16 ? b_.op(to_float, t_f32(), {src}) : int_to_f32_odd(src, from);
  return {soft_narrow(to, f, e.rounding, e.saturate), Repr::Bits};
}

// ---- floats -------------------------------------------------------------------------------------

Val Emitter::convert_float_to_float(ir::ExprId id, const ir::Expr& e, ScalarType from) {
  const ScalarType to = e.type;
  const ir::ExprId arg = e.args[0];
  if (ir::widens_exactly(from, to)) {
    if (to == ScalarType::F32)
      return {work_float(arg, from), Repr::Native};
    if (to == ScalarType::F64) {
      uint32_t src = from == ScalarType::F16 && eval(arg).repr == Repr::Native
                         ? get(arg, Repr::Native)
                         : work_float(arg, from);
      return {b_.op(O::OpFConvert, t_f64(), {src}), Repr::Native};
    }
    return {get(arg, Repr::F32), Repr::F32}; // fp8 -> f16 / bf16: the same f32 value
  }

  const bool barrier = barriered_.count(id) > 0;
  // The test-only fault (fault.hpp) rounds nearest-even narrowings toward zero.
  const RoundingMode mode = testing::injected_fault() == testing::Fault::NarrowTowardZero &&
                                    e.rounding == RoundingMode::NearestEven
                                ? RoundingMode::TowardZero
                                : e.rounding;
  const bool rne = mode == RoundingMode::NearestEven;
  if (from == ScalarType::F64) {
    uint32_t x = get(arg, Repr::Native);
    if (barrier)
      x = opaque_identity(x, 64);
    if (to == ScalarType::F32) {
      if (rne)
        return {b_.op(O::OpFConvert, t_f32(), {x}), Repr::Native};
      return {f64_to_f32_directed(x, mode), Repr::Native};
    }
    // f64 -> f16/bf16/fp8: round to odd in f32 first, which makes the second rounding the
    // correct one (24 >= p + 2). A direct f64 -> f16 OpFConvert is not trusted: lavapipe (LLVM)
    // lowers it through f32 with two nearest-even roundings and was measured wrong near ties.
    uint32_t odd = f64_to_f32_odd(x);
    if (to == ScalarType::F16 && rne && target_.f16.rounding_mode_rte)
      return {b_.op(O::OpFConvert, b_.type_float(16), {odd}), Repr::Native};
    return {soft_narrow(to, odd, mode, e.saturate), Repr::Bits};
  }
  uint32_t x = work_float(arg, from);
  if (to == ScalarType::F16 && rne && target_.f16.rounding_mode_rte) {
    if (barrier)
      x = opaque_identity(x, 32);
    return {b_.op(O::OpFConvert, b_.type_float(16), {x}), Repr::Native};
  }
  // Integer code: no driver can fuse a producer into it, so it needs no opaque identity.
  return {soft_narrow(to, x, mode, e.saturate), Repr::Bits};
}

// bits(x) XOR zero, with the zero from a push constant: the compiler cannot prove it an identity,
// so it cannot fuse the producer of x into the conversion that follows.
uint32_t Emitter::opaque_identity(uint32_t value, uint32_t width) {
  ++opaque_count_;
  const uint32_t zero = push_value(PushSlot::Zero);
  if (width == 64) {
    uint32_t v2 = b_.type_vector(t_u32(), 2);
    uint32_t zeros = b_.op(O::OpCompositeConstruct, v2, {zero, zero});
    uint32_t mixed = b_.op(O::OpBitwiseXor, v2, {b_.op(O::OpBitcast, v2, {value}), zeros});
    return b_.op(O::OpBitcast, t_f64(), {mixed});
  }
  uint32_t mixed = b_.op(O::OpBitwiseXor, t_u32(), {b_.op(O::OpBitcast, t_u32(), {value}), zero});
  return b_.op(O::OpBitcast, t_f32(), {mixed});
}

// f32 -> format bits, correctly rounded in `mode`. Works on the f32's fields:
//   sig = significand with its hidden bit, te = the target's biased exponent for it;
//   shift = the bits to drop (more below the target's normal range), q = kept bits;
//   magnitude = (max(te,1) - 1) << man_bits + q (+1 when rounding up; a carry moves the exponent).
uint32_t Emitter::soft_narrow(ScalarType to, uint32_t x, RoundingMode mode, bool saturate) {
  const num::FormatInfo& f = num::info(format_of(to));
  const uint32_t tm = static_cast<uint32_t>(f.man_bits);
  const uint32_t U = t_u32(), I = t_i32(), B = t_bool();
  auto op = [&](O o, uint32_t type, std::initializer_list<uint32_t> ids) {
    return b_.op(o, type, ids);
  };
  const uint32_t u = op(O::OpBitcast, U, {x});
  const uint32_t sign = op(O::OpShiftRightLogical, U, {u, u32(31)});
  const uint32_t a = op(O::OpBitwiseAnd, U, {u, u32(0x7fffffffu)});
  const uint32_t e = op(O::OpShiftRightLogical, U, {a, u32(23)});
  const uint32_t m = op(O::OpBitwiseAnd, U, {a, u32(0x7fffffu)});
  const uint32_t sig =
      op(O::OpSelect, U,
         {op(O::OpIEqual, B, {e, u32(0)}), m, op(O::OpBitwiseOr, U, {m, u32(0x800000u)})});
  const uint32_t ee = b_.ext_glsl(U, GLSLstd450UMax, {e, u32(1)});
  const uint32_t te = op(O::OpIAdd, I, {op(O::OpBitcast, I, {ee}), i32(f.bias - 127)});
  const uint32_t extra = b_.ext_glsl(I, GLSLstd450SMax, {op(O::OpISub, I, {i32(1), te}), i32(0)});
  const uint32_t shift = b_.ext_glsl(
      U, GLSLstd450UMin, {op(O::OpIAdd, U, {op(O::OpBitcast, U, {extra}), u32(23 - tm)}), u32(31)});
  const uint32_t q = op(O::OpShiftRightLogical, U, {sig, shift});
  const uint32_t rem =
      op(O::OpBitwiseAnd, U,
         {sig, op(O::OpISub, U, {op(O::OpShiftLeftLogical, U, {u32(1), shift}), u32(1)})});
  const uint32_t inexact = op(O::OpINotEqual, B, {rem, u32(0)});
  const uint32_t positive = op(O::OpIEqual, B, {sign, u32(0)});
  uint32_t round_up = 0; // bool id, 0: never
  switch (mode) {
  case RoundingMode::NearestEven: {
    uint32_t half = op(O::OpShiftLeftLogical, U, {u32(1), op(O::OpISub, U, {shift, u32(1)})});
    uint32_t odd = op(O::OpINotEqual, B, {op(O::OpBitwiseAnd, U, {q, u32(1)}), u32(0)});
    round_up = op(O::OpLogicalOr, B,
                  {op(O::OpUGreaterThan, B, {rem, half}),
                   op(O::OpLogicalAnd, B, {op(O::OpIEqual, B, {rem, half}), odd})});
    break;
  }
  case RoundingMode::TowardZero:
    break;
  case RoundingMode::Up:
    round_up = op(O::OpLogicalAnd, B, {inexact, positive});
    break;
  case RoundingMode::Down:
    round_up = op(O::OpLogicalAnd, B, {inexact, op(O::OpLogicalNot, B, {positive})});
    break;
  }
  const uint32_t kept =
      round_up ? op(O::OpIAdd, U, {q, op(O::OpSelect, U, {round_up, u32(1), u32(0)})}) : q;
  const uint32_t base = op(
      O::OpBitcast, U, {op(O::OpISub, I, {b_.ext_glsl(I, GLSLstd450SMax, {te, i32(1)}), i32(1)})});
  uint32_t mag = op(O::OpIAdd, U, {op(O::OpShiftLeftLogical, U, {base, u32(tm)}), kept});

  // Overflow: IEEE gives infinity (nearest; up for positive, down for negative values) or the
  // largest finite value; E4M3 has no infinity and gives NaN, or 448 when saturating.
  const uint32_t max_finite = static_cast<uint32_t>(f.max_finite);
  const uint32_t huge = f.has_inf ? static_cast<uint32_t>(f.inf_bits)
                                  : (saturate ? max_finite : static_cast<uint32_t>(f.quiet_nan));
  uint32_t over = 0;
  switch (mode) {
  case RoundingMode::NearestEven:
    over = u32(huge);
    break;
  case RoundingMode::TowardZero:
    over = u32(max_finite);
    break;
  case RoundingMode::Up:
    over = op(O::OpSelect, U, {positive, u32(huge), u32(max_finite)});
    break;
  case RoundingMode::Down:
    over = op(O::OpSelect, U, {positive, u32(max_finite), u32(huge)});
    break;
  }
  mag = op(O::OpSelect, U, {op(O::OpUGreaterThan, B, {mag, u32(max_finite)}), over, mag});
  const uint32_t inf_result = f.has_inf
                                  ? static_cast<uint32_t>(f.inf_bits)
                                  : (saturate ? max_finite : static_cast<uint32_t>(f.quiet_nan));
  mag = op(O::OpSelect, U, {op(O::OpIEqual, B, {a, u32(0x7f800000u)}), u32(inf_result), mag});
  mag = op(O::OpSelect, U,
           {op(O::OpUGreaterThan, B, {a, u32(0x7f800000u)}),
            u32(static_cast<uint32_t>(f.quiet_nan)), mag});
  return op(
      O::OpBitwiseOr, U,
      {op(O::OpShiftLeftLogical, U, {sign, u32(static_cast<uint32_t>(f.total_bits - 1))}), mag});
}

// Format bits -> the exact f32, with integer code (subnormals normalised by their leading bit).
uint32_t Emitter::soft_widen(ScalarType from, uint32_t bits) {
  const uint32_t U = t_u32(), B = t_bool();
  auto op = [&](O o, uint32_t type, std::initializer_list<uint32_t> ids) {
    return b_.op(o, type, ids);
  };
  if (from == ScalarType::BF16)
    return op(O::OpBitcast, t_f32(), {op(O::OpShiftLeftLogical, U, {bits, u32(16)})});
  const num::FormatInfo& f = num::info(format_of(from));
  const uint32_t tm = static_cast<uint32_t>(f.man_bits);
  const uint32_t exp_field = (1u << f.exp_bits) - 1;
  const uint32_t sign =
      op(O::OpShiftLeftLogical, U,
         {op(O::OpShiftRightLogical, U, {bits, u32(static_cast<uint32_t>(f.total_bits - 1))}),
          u32(31)});
  const uint32_t e =
      op(O::OpBitwiseAnd, U, {op(O::OpShiftRightLogical, U, {bits, u32(tm)}), u32(exp_field)});
  const uint32_t m = op(O::OpBitwiseAnd, U, {bits, u32(static_cast<uint32_t>(f.man_mask))});
  const uint32_t normal =
      op(O::OpBitwiseOr, U,
         {op(O::OpShiftLeftLogical, U,
             {op(O::OpIAdd, U, {e, u32(static_cast<uint32_t>(127 - f.bias))}), u32(23)}),
          op(O::OpShiftLeftLogical, U, {m, u32(23 - tm)})});
  // Subnormal: value = m * 2^(1 - bias - man_bits); with n the leading bit of m, the f32 exponent
  // is n + 1 - bias - man_bits and the fraction is m shifted to put bit n at bit 23 (dropped).
  const uint32_t n = b_.ext_glsl(U, GLSLstd450FindUMsb, {m});
  const uint32_t sub_exp =
      op(O::OpIAdd, U, {n, u32(static_cast<uint32_t>(127 + 1 - f.bias - f.man_bits))});
  const uint32_t sub_frac =
      op(O::OpBitwiseAnd, U,
         {op(O::OpShiftLeftLogical, U, {m, op(O::OpISub, U, {u32(23), n})}), u32(0x7fffffu)});
  uint32_t sub =
      op(O::OpBitwiseOr, U, {op(O::OpShiftLeftLogical, U, {sub_exp, u32(23)}), sub_frac});
  sub = op(O::OpSelect, U, {op(O::OpIEqual, B, {m, u32(0)}), u32(0), sub});
  uint32_t special_bits = 0, special = 0;
  if (f.has_inf) {
    special = op(O::OpIEqual, B, {e, u32(exp_field)});
    special_bits =
        op(O::OpBitwiseOr, U, {u32(0x7f800000u), op(O::OpShiftLeftLogical, U, {m, u32(23 - tm)})});
  } else { // E4M3FN: only S.1111.111 is NaN
    special = op(O::OpIEqual, B, {op(O::OpBitwiseAnd, U, {bits, u32(0x7fu)}), u32(0x7fu)});
    special_bits = u32(0x7fc00000u);
  }
  uint32_t mag = op(O::OpSelect, U, {special, special_bits, normal});
  mag = op(O::OpSelect, U, {op(O::OpIEqual, B, {e, u32(0)}), sub, mag});
  return op(O::OpBitcast, t_f32(), {op(O::OpBitwiseOr, U, {mag, sign})});
}

uint32_t Emitter::round_to_bf16(uint32_t value) {
  uint32_t bits = soft_narrow(ScalarType::BF16, value, RoundingMode::NearestEven, false);
  return b_.op(O::OpBitcast, t_f32(), {b_.op(O::OpShiftLeftLogical, t_u32(), {bits, u32(16)})});
}

// f64 -> f32 rounded to odd: truncate, then set the last bit when inexact. Works from any
// faithful f32 rounding t of x (it only looks at which side of x the f32 lies), so it also holds
// where the device flushes f32 subnormals.
uint32_t Emitter::f64_to_f32_odd(uint32_t x) {
  const uint32_t U = t_u32(), B = t_bool();
  uint32_t t = b_.op(O::OpFConvert, t_f32(), {x});
  uint32_t back = b_.op(O::OpFConvert, t_f64(), {t});
  uint32_t inexact = b_.op(O::OpFOrdNotEqual, B, {back, x});
  uint32_t above = b_.op(
      O::OpFOrdGreaterThan, B,
      {b_.ext_glsl(t_f64(), GLSLstd450FAbs, {back}), b_.ext_glsl(t_f64(), GLSLstd450FAbs, {x})});
  uint32_t tb = b_.op(O::OpBitcast, U, {t});
  uint32_t truncated = b_.op(O::OpSelect, U, {above, b_.op(O::OpISub, U, {tb, u32(1)}), tb});
  uint32_t odd =
      b_.op(O::OpSelect, U, {inexact, b_.op(O::OpBitwiseOr, U, {truncated, u32(1)}), tb});
  return b_.op(O::OpBitcast, t_f32(), {odd});
}

// f64 -> f32 in a directed mode: the nearest-even result, stepped one ulp where it lies on the
// wrong side of x. Stepping the bit pattern moves the magnitude (sign-magnitude encoding).
uint32_t Emitter::f64_to_f32_directed(uint32_t x, RoundingMode mode) {
  const uint32_t U = t_u32(), B = t_bool();
  uint32_t t = b_.op(O::OpFConvert, t_f32(), {x});
  uint32_t back = b_.op(O::OpFConvert, t_f64(), {t});
  uint32_t tb = b_.op(O::OpBitcast, U, {t});
  uint32_t smaller = b_.op(O::OpISub, U, {tb, u32(1)}); // one step toward zero
  uint32_t larger = b_.op(O::OpIAdd, U, {tb, u32(1)});  // one step away from zero
  uint32_t negative = b_.op(O::OpUGreaterThanEqual, B, {tb, u32(0x80000000u)});
  uint32_t r = tb;
  switch (mode) {
  case RoundingMode::TowardZero: {
    uint32_t above = b_.op(
        O::OpFOrdGreaterThan, B,
        {b_.ext_glsl(t_f64(), GLSLstd450FAbs, {back}), b_.ext_glsl(t_f64(), GLSLstd450FAbs, {x})});
    r = b_.op(O::OpSelect, U, {above, smaller, tb});
    break;
  }
  case RoundingMode::Up: { // back < x: step up (toward +inf)
    uint32_t low = b_.op(O::OpFOrdLessThan, B, {back, x});
    r = b_.op(O::OpSelect, U, {low, b_.op(O::OpSelect, U, {negative, smaller, larger}), tb});
    break;
  }
  case RoundingMode::Down: { // back > x: step down (toward -inf); -0 steps to -min subnormal
    uint32_t high = b_.op(O::OpFOrdGreaterThan, B, {back, x});
    r = b_.op(O::OpSelect, U, {high, b_.op(O::OpSelect, U, {negative, larger, smaller}), tb});
    break;
  }
  case RoundingMode::NearestEven:
    break;
  }
  return b_.op(O::OpBitcast, t_f32(), {r});
}

// Integer (Wide 32-bit or native 64-bit) -> f32 rounded to odd: keep the leading 24 bits of the
// magnitude, OR the dropped bits' "any set" into the last one, and scale by the exponent.
uint32_t Emitter::int_to_f32_odd(uint32_t value, ScalarType from) {
  const bool s = ir::info(from).is_signed;
  const bool wide64 = ir::info(from).bits == 64;
  const uint32_t U = t_u32(), B = t_bool();
  const uint32_t M = wide64 ? t_u64() : U; // magnitude type
  auto mconst = [&](uint64_t v) { return b_.constant(M, v); };
  uint32_t negative = 0, mag = value;
  if (s) {
    uint32_t st = b_.type_int(wide64 ? 64 : 32, true);
    uint32_t sv = b_.type_of(value) == st ? value : b_.op(O::OpBitcast, st, {value});
    negative = b_.op(O::OpSLessThan, B, {sv, b_.constant(st, 0)});
    mag = b_.op(O::OpSelect, st, {negative, b_.op(O::OpSNegate, st, {sv}), sv});
  }
  if (b_.type_of(mag) != M)
    mag = b_.op(O::OpBitcast, M, {mag});
  uint32_t lead = 0; // index of the leading one (u32)
  if (wide64) {
    uint32_t hi = b_.op(O::OpUConvert, U, {b_.op(O::OpShiftRightLogical, M, {mag, u32(32)})});
    uint32_t lo = b_.op(O::OpUConvert, U, {mag});
    lead = b_.op(O::OpSelect, U,
                 {b_.op(O::OpINotEqual, B, {hi, u32(0)}),
                  b_.op(O::OpIAdd, U, {b_.ext_glsl(U, GLSLstd450FindUMsb, {hi}), u32(32)}),
                  b_.ext_glsl(U, GLSLstd450FindUMsb, {lo})});
  } else {
    lead = b_.ext_glsl(U, GLSLstd450FindUMsb, {mag});
  }
  uint32_t big = b_.op(O::OpUGreaterThanEqual, B, {mag, mconst(1u << 24)});
  uint32_t shift = b_.op(O::OpSelect, U, {big, b_.op(O::OpISub, U, {lead, u32(23)}), u32(0)});
  uint32_t kept = b_.op(O::OpShiftRightLogical, M, {mag, shift});
  uint32_t dropped = b_.op(
      O::OpBitwiseAnd, M,
      {mag, b_.op(O::OpISub, M, {b_.op(O::OpShiftLeftLogical, M, {mconst(1), shift}), mconst(1)})});
  if (wide64)
    kept = b_.op(O::OpUConvert, U, {kept});
  uint32_t sticky =
      b_.op(O::OpSelect, U, {b_.op(O::OpINotEqual, B, {dropped, mconst(0)}), u32(1), u32(0)});
  uint32_t odd = b_.op(O::OpBitwiseOr, U, {kept, sticky});
  uint32_t fbits = b_.op(O::OpBitcast, U, {b_.op(O::OpConvertUToF, t_f32(), {odd})});
  fbits = b_.op(O::OpIAdd, U, {fbits, b_.op(O::OpShiftLeftLogical, U, {shift, u32(23)})});
  if (s)
    fbits = b_.op(O::OpBitwiseOr, U,
                  {fbits, b_.op(O::OpSelect, U, {negative, u32(0x80000000u), u32(0)})});
  return b_.op(O::OpBitcast, t_f32(), {fbits});
}

} // namespace halfway::codegen::spirv
