// Conversions, each rounding exactly once from the exact source value, as num::convert_bits.
//  - f32 -> f16 is fptrunc (vcvtps2ph, nearest-even); f64 -> f16 and f64 -> bf16 go through a
//    round-to-odd f32, never through fptrunc double -> half (a slow libcall, and exact -> f64 ->
//    f16 would round twice); f32 -> bf16 is integer nearest-even.
//  - Directed roundings take the nearest-even result and step it one ulp where it lies on the
//    wrong side of the source.
//  - fp8 narrowings, and integer conversions LLVM cannot do in one rounding, call numerics.
#include "halfway/codegen/llvm/fault.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "lowering.hpp"
#include "symbol_names.hpp"

#include <bit>
#include <cmath>

namespace halfway::codegen::llvm::detail {

::llvm::Value* Lowering::to_bits64(::llvm::Value* v, ir::ScalarType t) {
  if (v->getType()->isFloatingPointTy())
    v = b_.CreateBitCast(v, bits_type(t));
  return b_.CreateZExt(v, b_.getInt64Ty());
}

::llvm::Value* Lowering::from_bits64(::llvm::Value* bits, ir::ScalarType t) {
  ::llvm::Type* ty = value_type(t);
  ::llvm::Value* v =
      b_.CreateTrunc(bits, t == ir::ScalarType::Bool ? b_.getInt1Ty() : bits_type(t));
  return v->getType() == ty ? v : b_.CreateBitCast(v, ty);
}

Val Lowering::convert(ir::ExprId, const ir::Expr& e) {
  ir::ScalarType from = k_.expr(e.args[0]).type, to = e.type;
  Val a = expr(e.args[0]);
  if (ir::is_int(from) && ir::is_int(to)) {
    ::llvm::Type* ty = value_type(to);
    if (ir::info(to).bits <= ir::info(from).bits)
      return {b_.CreateTrunc(a.v, ty)};
    return {ir::info(from).is_signed ? b_.CreateSExt(a.v, ty) : b_.CreateZExt(a.v, ty)};
  }
  if (ir::is_float(from) && ir::is_int(to))
    return {float_to_int(a, from, to)};
  if (ir::is_int(from))
    return {int_to_float(a.v, from, to, e.rounding, e.saturate)};
  NanState state = NanState::Clean;
  ir::RoundingMode rounding = e.rounding;
  if (testing::injected_fault() == testing::Fault::NarrowTowardZero &&
      rounding == ir::RoundingMode::NearestEven && ir::is_narrowing(from, to))
    rounding = ir::RoundingMode::TowardZero;
  ::llvm::Value* v = float_to_float(a, from, to, rounding, e.saturate, state);
  return {v, state};
}

::llvm::Value* Lowering::float_to_float(Val a, ir::ScalarType from, ir::ScalarType to,
                                        ir::RoundingMode r, bool saturate, NanState& out) {
  out = NanState::Clean;
  if (ir::is_fp8(from)) {
    // Widened to f32 or f64, a NaN need not be canonical yet (nan_state.cpp says so too): the
    // select that makes it so is left to where its bits are observed.
    const bool lazy = (to == ir::ScalarType::F32 || to == ir::ScalarType::F64) &&
                      fp8_widening_keeps_nan_sign(from);
    if (lazy)
      out = NanState::SignedPayload;
    ::llvm::Value* f = fp8_to_f32(a.v, from, lazy);
    if (to == ir::ScalarType::F32)
      return f;
    if (to == ir::ScalarType::F64)
      return b_.CreateFPExt(f, b_.getDoubleTy());
    if (ir::is_fp8(to))
      return call_convert(to_bits64(f, ir::ScalarType::F32), ir::ScalarType::F32, to, r, saturate);
    return narrow_float(f, ir::ScalarType::F32, to, r); // exact: fp8 fits f16 and bf16
  }
  if (ir::widens_exactly(from, to)) {
    out = a.nan == NanState::Dirty ? NanState::Dirty : NanState::SignedPayload;
    if (from == ir::ScalarType::BF16) {
      ::llvm::Value* f = bf16_to_f32(a.v);
      return to == ir::ScalarType::F32 ? f : b_.CreateFPExt(f, b_.getDoubleTy());
    }
    return b_.CreateFPExt(a.v, value_type(to)); // f16 -> f32/f64, f32 -> f64
  }
  // A narrowing: any NaN becomes the canonical NaN with the source's sign, fixed here in the
  // source format, where each of the narrowings below maps it to the target's canonical NaN.
  ::llvm::Value* src = canonical(a, from);
  if (a.nan == NanState::Clean)
    src = canonical({src, NanState::SignedPayload}, from);
  if (ir::is_fp8(to)) {
    ::llvm::Value* wide = to_compute(src, from);
    ir::ScalarType wt = from == ir::ScalarType::F64 ? from : ir::ScalarType::F32;
    return call_convert(to_bits64(wide, wt), wt, to, r, saturate);
  }
  return narrow_float(src, from, to, r);
}

::llvm::Value* Lowering::narrow_float(::llvm::Value* v, ir::ScalarType from, ir::ScalarType to,
                                      ir::RoundingMode r) {
  using T = ir::ScalarType;
  if (from == T::F16 || from == T::BF16)
    return narrow_float(to_compute(v, from), T::F32, to, r);
  if (from == T::F64 && to != T::F32)
    return narrow_float(round_to_odd_f32(v), T::F32, to, r);
  ::llvm::Value* rne = to == T::BF16 ? f32_to_bf16_rne(v) : b_.CreateFPTrunc(v, value_type(to));
  if (r == ir::RoundingMode::NearestEven)
    return rne;
  return directed_adjust(rne, v, to, from, r);
}

// `result` is src rounded to nearest-even in `to`; step it one ulp (on its bit pattern) to where
// the directed rounding puts it. NaNs compare false and stay.
::llvm::Value* Lowering::directed_adjust(::llvm::Value* result, ::llvm::Value* src,
                                         ir::ScalarType to, ir::ScalarType src_type,
                                         ir::RoundingMode r) {
  ::llvm::Value* back = to == ir::ScalarType::BF16 ? bf16_to_f32(result)
                                                   : b_.CreateFPExt(result, value_type(src_type));
  ::llvm::Type* it = bits_type(to);
  ::llvm::Value* bits = b_.CreateBitCast(result, it);
  ::llvm::Value* negative = b_.CreateICmpSLT(bits, ::llvm::ConstantInt::get(it, 0));
  ::llvm::Value* up = b_.CreateAdd(bits, ::llvm::ConstantInt::get(it, 1));
  ::llvm::Value* down = b_.CreateSub(bits, ::llvm::ConstantInt::get(it, 1));
  ::llvm::Value* need = nullptr;
  ::llvm::Value* adjusted = nullptr;
  switch (r) {
  case ir::RoundingMode::TowardZero:
    need = b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(::llvm::Intrinsic::fabs, back),
                            b_.CreateUnaryIntrinsic(::llvm::Intrinsic::fabs, src));
    adjusted = down; // one step toward zero in magnitude
    break;
  case ir::RoundingMode::Up:
    need = b_.CreateFCmpOLT(back, src);
    adjusted = b_.CreateSelect(negative, down, up);
    break;
  case ir::RoundingMode::Down:
    need = b_.CreateFCmpOGT(back, src);
    adjusted = b_.CreateSelect(negative, up, down);
    break;
  case ir::RoundingMode::NearestEven:
    return result;
  }
  ::llvm::Value* out = b_.CreateSelect(need, adjusted, bits);
  return out->getType() == result->getType() ? out : b_.CreateBitCast(out, result->getType());
}

// fp8 -> f32 by table: exact, NaNs canonical with their sign, and a gather vectorises.
namespace {

// fp8 widening by arithmetic, which vectorises (a table lookup is a gather in a vector loop):
// E5M2 is the top byte of an f16; E4M3's exponent and mantissa, shifted into an f16's, give the
// value scaled by 2^-8 (bias 7 against 15; E4M3 subnormals land on f16 values, normal or
// subnormal, exactly), and the f16 -> f32 widening and the product by 2^8 are exact. Codes above
// `nan_above` (magnitude bits) are NaNs, which take the table's NaN for their sign.
struct Fp8Arith {
  unsigned shift = 8;       // magnitude bits to f16 bits
  float scale = 1.0f;       // f16 value to the fp8 value
  uint32_t nan_above = 0;   // (code & 0x7f) > nan_above: NaN
  uint32_t nan[2] = {0, 0}; // the table's NaN bits, sign clear and set
  bool valid = false;
  // The f16 quiet NaN of each sign (0x7e00, 0xfe00), widened and scaled, gives the table's NaN:
  // NaN codes are then replaced by it among the 16-bit patterns, before the widening. That is one
  // 16-bit compare and blend per code where a choice among the widened f32 values takes a compare,
  // a sign extension of the mask and a blend twice (the NaN of the sign, then NaN or value): the
  // E4M3 GEMV's decode, whose formula makes no NaN by itself, was half again the E5M2 one's.
  bool nan_from_half = false;
  // The formula alone gives every NaN code a NaN of the code's sign, and the table's NaNs are
  // the canonical +-qNaN: the result is then SignedPayload without the select (e5m2, whose codes
  // are the top byte of an f16).
  bool nan_keeps_sign = false;
};

uint32_t table_f32(ir::ScalarType t, uint8_t code) {
  return t == ir::ScalarType::E4M3 ? num::e4m3_to_f32(code) : num::e5m2_to_f32(code);
}

// The formula, checked against the table for all 256 codes when first used: it is used only if
// it gives the table's bits for every one.
Fp8Arith fp8_arith(ir::ScalarType t) {
  Fp8Arith a;
  if (t == ir::ScalarType::E4M3) {
    a.shift = 7;
    a.scale = 256.0f;
    a.nan_above = 0x7e;
  } else {
    a.nan_above = 0x7c;
  }
  a.nan[0] = table_f32(t, 0x7f);
  a.nan[1] = table_f32(t, 0xff);
  for (uint32_t code = 0; code < 256; ++code) {
    const uint32_t mag = code & 0x7f, sign = code >> 7;
    uint32_t got = a.nan[sign];
    if (mag <= a.nan_above) {
      const auto h = static_cast<uint16_t>((sign << 15) | (mag << a.shift));
      got = std::bit_cast<uint32_t>(std::bit_cast<float>(num::f16_to_f32(h)) * a.scale);
    }
    if (got != table_f32(t, static_cast<uint8_t>(code)))
      return a;
  }
  a.valid = true;
  a.nan_from_half = true;
  for (uint32_t sign = 0; sign < 2; ++sign) {
    const auto h = static_cast<uint16_t>((sign << 15) | 0x7e00);
    const float widened = std::bit_cast<float>(num::f16_to_f32(h)) * a.scale;
    a.nan_from_half = a.nan_from_half && std::bit_cast<uint32_t>(widened) == a.nan[sign];
  }
  a.nan_keeps_sign = a.nan[0] == 0x7fc00000u && a.nan[1] == 0xffc00000u;
  for (uint32_t code = 0; code < 256; ++code) {
    const uint32_t mag = code & 0x7f, sign = code >> 7;
    if (mag <= a.nan_above)
      continue;
    const auto h = static_cast<uint16_t>((sign << 15) | (mag << a.shift));
    const float raw = std::bit_cast<float>(num::f16_to_f32(h)) * a.scale;
    a.nan_keeps_sign = a.nan_keeps_sign && std::isnan(raw) && std::signbit(raw) == (sign != 0);
  }
  return a;
}

const Fp8Arith& arith_of(ir::ScalarType t) {
  static const Fp8Arith e4m3 = fp8_arith(ir::ScalarType::E4M3);
  static const Fp8Arith e5m2 = fp8_arith(ir::ScalarType::E5M2);
  return t == ir::ScalarType::E4M3 ? e4m3 : e5m2;
}

} // namespace

bool fp8_widening_keeps_nan_sign(ir::ScalarType t) {
  const Fp8Arith& a = arith_of(t);
  return a.valid && a.nan_keeps_sign;
}

::llvm::Value* Lowering::fp8_to_f32(::llvm::Value* bits, ir::ScalarType t, bool signed_payload) {
  const Fp8Arith& a = arith_of(t);
  if (a.valid) {
    // LLVM's cost model widens the f16 -> f32 conversion 4 wide: the lane loop gets the f16 hint.
    note_narrows_f16(false);
    ::llvm::Value* code = b_.CreateZExt(bits, b_.getInt16Ty());
    ::llvm::Value* mag = b_.CreateAnd(code, b_.getInt16(0x7f));
    ::llvm::Value* sign = b_.CreateAnd(code, b_.getInt16(0x80));
    ::llvm::Value* h = b_.CreateOr(b_.CreateShl(sign, 8), b_.CreateShl(mag, a.shift));
    const bool canonical_nan = !(signed_payload && a.nan_keeps_sign);
    auto is_nan = [&] { return b_.CreateICmpUGT(mag, b_.getInt16(a.nan_above)); };
    if (canonical_nan && a.nan_from_half)
      h = b_.CreateSelect(is_nan(), b_.CreateOr(b_.CreateShl(sign, 8), b_.getInt16(0x7e00)), h);
    ::llvm::Value* f = b_.CreateFPExt(b_.CreateBitCast(h, b_.getHalfTy()), b_.getFloatTy());
    if (a.scale != 1.0f)
      f = b_.CreateFMul(f, ::llvm::ConstantFP::get(b_.getFloatTy(), a.scale));
    if (!canonical_nan)
      return f; // a NaN here has its code's sign: the interpreter's NaN up to the payload
    if (a.nan_from_half)
      return f; // the quiet f16 NaN went through the widening and the product unchanged
    auto f32 = [&](uint32_t v) {
      return ::llvm::ConstantFP::get(
          ctx_, ::llvm::APFloat(::llvm::APFloat::IEEEsingle(), ::llvm::APInt(32, v)));
    };
    ::llvm::Value* nan =
        a.nan[0] == a.nan[1]
            ? f32(a.nan[0])
            : b_.CreateSelect(b_.CreateICmpNE(sign, b_.getInt16(0)), f32(a.nan[1]), f32(a.nan[0]));
    return b_.CreateSelect(is_nan(), nan, f);
  }
  std::string name = std::string("halfway.") + std::string(ir::name(t)) + "_to_f32";
  ::llvm::GlobalVariable* table = m_.getGlobalVariable(name, true);
  if (!table) {
    std::vector<uint32_t> values(256);
    for (uint32_t i = 0; i < 256; ++i)
      values[i] = t == ir::ScalarType::E4M3 ? num::e4m3_to_f32(static_cast<uint8_t>(i))
                                            : num::e5m2_to_f32(static_cast<uint8_t>(i));
    auto* init = ::llvm::ConstantDataArray::get(ctx_, values);
    table = new ::llvm::GlobalVariable(m_, init->getType(), true,
                                       ::llvm::GlobalValue::InternalLinkage, init, name);
    table->setAlignment(::llvm::Align(64));
  }
  ::llvm::Value* index = b_.CreateZExt(bits, b_.getInt64Ty());
  ::llvm::Value* ptr = b_.CreateInBoundsGEP(table->getValueType(), table, {i64(0), index});
  return b_.CreateBitCast(b_.CreateLoad(b_.getInt32Ty(), ptr), b_.getFloatTy());
}

::llvm::Value* Lowering::call_convert(::llvm::Value* bits64, ir::ScalarType from, ir::ScalarType to,
                                      ir::RoundingMode r, bool saturate) {
  ::llvm::Type* i32t = b_.getInt32Ty();
  ::llvm::Type* i64t = b_.getInt64Ty();
  auto* type = ::llvm::FunctionType::get(i64t, {i32t, i64t, i32t, i32t, i32t}, false);
  ::llvm::Value* out =
      b_.CreateCall(runtime_function(kConvertSymbol, type),
                    {i32(static_cast<uint32_t>(ir::format_of(from))), bits64,
                     i32(static_cast<uint32_t>(ir::format_of(to))),
                     i32(static_cast<uint32_t>(ir::rounding_of(r))), i32(saturate ? 1 : 0)});
  return from_bits64(out, to);
}

// Integers to floats: exact when the type fits; one LLVM conversion where that is one correct
// rounding (to f32/f64, nearest-even); through an exact f64 for 32-bit and narrower integers to
// the 16-bit formats; numerics otherwise.
::llvm::Value* Lowering::int_to_float(::llvm::Value* v, ir::ScalarType from, ir::ScalarType to,
                                      ir::RoundingMode r, bool saturate) {
  bool is_signed = ir::info(from).is_signed;
  uint32_t width = ir::info(from).bits;
  auto direct = [&](::llvm::Type* ty) {
    return is_signed ? b_.CreateSIToFP(v, ty) : b_.CreateUIToFP(v, ty);
  };
  if (!ir::is_fp8(to)) {
    if (ir::widens_exactly(from, to))
      return to == ir::ScalarType::BF16 ? f32_to_bf16_rne(direct(b_.getFloatTy()))
                                        : direct(value_type(to));
    bool nearest = r == ir::RoundingMode::NearestEven;
    if ((to == ir::ScalarType::F32 || to == ir::ScalarType::F64) && nearest)
      return direct(value_type(to));
    if (width <= 32)
      return narrow_float(direct(b_.getDoubleTy()), ir::ScalarType::F64, to, r);
  }
  ::llvm::Type* i32t = b_.getInt32Ty();
  ::llvm::Type* i64t = b_.getInt64Ty();
  auto* type = ::llvm::FunctionType::get(i64t, {i64t, i32t, i32t, i32t, i32t, i32t}, false);
  ::llvm::Value* out =
      b_.CreateCall(runtime_function(kIntToFloatSymbol, type),
                    {b_.CreateZExt(v, i64t), i32(width), i32(is_signed ? 1 : 0),
                     i32(static_cast<uint32_t>(ir::format_of(to))),
                     i32(static_cast<uint32_t>(ir::rounding_of(r))), i32(saturate ? 1 : 0)});
  return from_bits64(out, to);
}

// Truncation toward zero, saturating, NaN -> 0 (int_convert.hpp): llvm.fpto[su]i.sat on the
// exactly widened value.
::llvm::Value* Lowering::float_to_int(Val a, ir::ScalarType from, ir::ScalarType to) {
  ::llvm::Value* x = ir::is_fp8(from) ? fp8_to_f32(a.v, from) : to_compute(a.v, from);
  auto id = ir::info(to).is_signed ? ::llvm::Intrinsic::fptosi_sat : ::llvm::Intrinsic::fptoui_sat;
  return b_.CreateIntrinsic(id, {value_type(to), x->getType()}, {x});
}

} // namespace halfway::codegen::llvm::detail
