// Float helpers: types, NaN canonicalisation, f16/bf16 through f32, round-to-odd, min/max,
// fract and the exact fma of the 16-bit formats. All of it is integer and IEEE arithmetic that
// vectorises: no calls, no fences.
#include "halfway/ir/format.hpp"
#include "lowering.hpp"

namespace halfway::codegen::llvm::detail {

::llvm::Type* Lowering::value_type(ir::ScalarType t) {
  switch (t) {
  case ir::ScalarType::Bool:
    return b_.getInt1Ty();
  case ir::ScalarType::F16:
    return b_.getHalfTy();
  case ir::ScalarType::F32:
    return b_.getFloatTy();
  case ir::ScalarType::F64:
    return b_.getDoubleTy();
  default:
    return b_.getIntNTy(ir::info(t).bits); // ints; bf16 and fp8 as their bits
  }
}

::llvm::Type* Lowering::bits_type(ir::ScalarType t) {
  return b_.getIntNTy(ir::info(t).bits);
}

// 16-bit floats are tested on their bits: without AVX512-FP16 the x86 backend scalarises an
// `fcmp uno <16 x half>` into one vcvtph2ps and vucomiss per element (act<f16> ran 15x slower
// than the F16C baseline for two of them per element), while the integer test stays one vector
// compare. bf16 values are i16 already.
::llvm::Value* Lowering::is_nan(::llvm::Value* v, ir::ScalarType t) {
  if (t == ir::ScalarType::BF16 || t == ir::ScalarType::F16)
    return is_nan_bits(bits16(v), t);
  return b_.CreateFCmpUNO(v, v);
}

::llvm::Value* Lowering::quiet_nan(ir::ScalarType t) {
  switch (t) {
  case ir::ScalarType::F16:
    return ::llvm::ConstantFP::get(
        ctx_, ::llvm::APFloat(::llvm::APFloat::IEEEhalf(), ::llvm::APInt(16, 0x7e00)));
  case ir::ScalarType::F32:
    return ::llvm::ConstantFP::get(
        ctx_, ::llvm::APFloat(::llvm::APFloat::IEEEsingle(), ::llvm::APInt(32, 0x7fc00000)));
  case ir::ScalarType::F64:
    return ::llvm::ConstantFP::get(ctx_, ::llvm::APFloat(::llvm::APFloat::IEEEdouble(),
                                                         ::llvm::APInt(64, 0x7ff8000000000000ull)));
  default:
    return b_.getInt16(0x7fc0); // bf16
  }
}

::llvm::Value* Lowering::canonical(Val v, ir::ScalarType t) {
  if (!ir::is_float(t) || ir::is_fp8(t) || v.nan <= NanState::Clean)
    return v.v;
  ::llvm::Value* nan = is_nan(v.v, t);
  if (v.nan == NanState::Dirty)
    return b_.CreateSelect(nan, quiet_nan(t), v.v);
  ::llvm::Value* fixed =
      t == ir::ScalarType::BF16
          ? b_.CreateOr(b_.CreateAnd(v.v, b_.getInt16(0x8000)), b_.getInt16(0x7fc0))
          : b_.CreateBinaryIntrinsic(::llvm::Intrinsic::copysign, quiet_nan(t), v.v);
  return b_.CreateSelect(nan, fixed, v.v);
}

::llvm::Value* Lowering::bf16_to_f32(::llvm::Value* bits) {
  return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(bits, b_.getInt32Ty()), 16), b_.getFloatTy());
}

// Nearest-even on the bit pattern: add half an ulp minus one, plus the kept lsb, and truncate.
// Right for subnormals and overflow (bf16 shares f32's exponent); NaNs must be canonical already
// (a payload of all ones would carry into the sign).
::llvm::Value* Lowering::f32_to_bf16_rne(::llvm::Value* f) {
  ::llvm::Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
  ::llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), i32(1));
  ::llvm::Value* rounded = b_.CreateAdd(bits, b_.CreateAdd(lsb, i32(0x7fff)));
  return b_.CreateTrunc(b_.CreateLShr(rounded, 16), b_.getInt16Ty());
}

::llvm::Value* Lowering::to_compute(::llvm::Value* v, ir::ScalarType t) {
  if (t == ir::ScalarType::F16) {
    if (auto it = widened_.find(v); it != widened_.end() && it->second)
      return it->second;
    return b_.CreateFPExt(v, b_.getFloatTy());
  }
  if (t == ir::ScalarType::BF16)
    return bf16_to_f32(v);
  return v;
}

::llvm::Value* Lowering::from_compute(::llvm::Value* f32, ir::ScalarType t) {
  if (t == ir::ScalarType::F16) {
    // f16 arithmetic ends in the same f32 -> f16 rounding as a narrowing conversion, which LLVM's
    // cost model vectorises only 4 wide: the lane loop gets the same width hint.
    note_narrows_f16();
    return b_.CreateFPTrunc(f32, b_.getHalfTy());
  }
  if (t == ir::ScalarType::BF16)
    return f32_to_bf16_rne(
        b_.CreateSelect(is_nan(f32, ir::ScalarType::F32), quiet_nan(ir::ScalarType::F32), f32));
  return f32;
}

// Round-to-odd from f64 to f32: truncate toward zero, and set the last bit when inexact. With
// 24 >= p + 2 bits, rounding that once more to a p-bit format gives the correctly rounded result
// of the original value (Boldo and Melquiond), which a second nearest-even rounding would not.
::llvm::Value* Lowering::round_to_odd_f32(::llvm::Value* d) {
  ::llvm::Value* f = b_.CreateFPTrunc(d, b_.getFloatTy());
  ::llvm::Value* back = b_.CreateFPExt(f, b_.getDoubleTy());
  ::llvm::Value* inexact = b_.CreateFCmpONE(back, d);
  ::llvm::Value* away = b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(::llvm::Intrinsic::fabs, back),
                                         b_.CreateUnaryIntrinsic(::llvm::Intrinsic::fabs, d));
  ::llvm::Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
  ::llvm::Value* toward_zero = b_.CreateSelect(away, b_.CreateSub(bits, i32(1)), bits);
  ::llvm::Value* odd = b_.CreateSelect(inexact, b_.CreateOr(toward_zero, i32(1)), bits);
  return b_.CreateBitCast(odd, b_.getFloatTy());
}

// s + e exactly (TwoSum), rounded to odd in f64: when e != 0 the exact sum lies strictly between
// s and its neighbour toward e.
::llvm::Value* Lowering::round_to_odd_sum(::llvm::Value* s, ::llvm::Value* e) {
  ::llvm::Value* inexact = b_.CreateFCmpONE(e, ::llvm::ConstantFP::get(b_.getDoubleTy(), 0.0));
  ::llvm::Value* sb = b_.CreateBitCast(s, b_.getInt64Ty());
  ::llvm::Value* eb = b_.CreateBitCast(e, b_.getInt64Ty());
  ::llvm::Value* opposite = b_.CreateICmpSLT(b_.CreateXor(sb, eb), i64(0));
  ::llvm::Value* toward_zero = b_.CreateSelect(opposite, b_.CreateSub(sb, i64(1)), sb);
  ::llvm::Value* odd = b_.CreateSelect(inexact, b_.CreateOr(toward_zero, i64(1)), sb);
  return b_.CreateBitCast(odd, b_.getDoubleTy());
}

// Knuth's TwoSum: s = fl(a + b) and the exact error e = a + b - s. No fast-math flags, so LLVM
// may not simplify it away.
std::pair<::llvm::Value*, ::llvm::Value*> Lowering::two_sum(::llvm::Value* a, ::llvm::Value* b) {
  ::llvm::Value* s = b_.CreateFAdd(a, b);
  ::llvm::Value* bb = b_.CreateFSub(s, a);
  ::llvm::Value* ea = b_.CreateFSub(a, b_.CreateFSub(s, bb));
  ::llvm::Value* eb = b_.CreateFSub(b, bb);
  return {s, b_.CreateFAdd(ea, eb)};
}

// minNum/maxNum with -0 < +0, as num::min/max: a NaN operand is ignored, two NaNs give the
// canonical NaN, otherwise the chosen operand's bits. Decided on integer keys, with no fcmp:
// LLVM 19's InstCombine miscompiles the fcmp form when an operand is fabs (codegen/llvm/README.md,
// "LLVM 19: min/max of fabs"). The key b ^ ((b >>s (n-1)) & 0x7f..f) orders non-NaN floats as
// signed integers in their total order, -0 below +0, and equal keys mean equal bits, so one
// signed compare picks the operand; integer compares and selects vectorise like fcmp ones.
// f16 and bf16 are decided on their own 16 bits and select the operands themselves: widening
// keeps order and NaN-ness, and the result is an operand, so nothing needs a conversion (a
// clamp in f16 cost a vcvtps2ph and a vcvtph2ps per element through f32).
::llvm::Value* Lowering::min_max(bool is_max, ::llvm::Value* a, ::llvm::Value* b,
                                 ir::ScalarType t) {
  const bool narrow = t == ir::ScalarType::F16 || t == ir::ScalarType::BF16;
  ir::ScalarType kt = narrow || t == ir::ScalarType::F64 ? t : ir::ScalarType::F32;
  ::llvm::Type* it = bits_type(kt);
  ::llvm::Value* x = narrow ? a : to_compute(a, t);
  ::llvm::Value* y = narrow ? b : to_compute(b, t);
  ::llvm::Value* bx = b_.CreateBitCast(x, it);
  ::llvm::Value* by = b_.CreateBitCast(y, it);
  // Against a constant with the sign bit clear (a clamp's 0 and 1) an operand needs no key: its
  // key and its bits read as a signed integer are both negative when its sign is set, and equal
  // when it is clear, so they compare alike with the constant (whose key is itself).
  auto sign_clear = [](::llvm::Value* bits) {
    auto* c = ::llvm::dyn_cast<::llvm::ConstantInt>(bits);
    return c != nullptr && !c->isNegative();
  };
  ::llvm::Value* kx = sign_clear(by) ? bx : order_key(bx);
  ::llvm::Value* ky = sign_clear(bx) ? by : order_key(by);
  ::llvm::Value* pick_x = is_max ? b_.CreateICmpSGT(kx, ky) : b_.CreateICmpSLT(kx, ky);
  ::llvm::Value* x_nan = is_nan_bits(bx, kt);
  ::llvm::Value* y_nan = is_nan_bits(by, kt);
  if (narrow) {
    // Selected as integers: a scalar select, fabs or fneg on `half` is widened through f32 by
    // the x86 backend without AVX512-FP16, which quiets a signalling NaN (docs/measured.md).
    ::llvm::Value* r = b_.CreateSelect(pick_x, bx, by);
    r = b_.CreateSelect(y_nan, bx, r);
    r = b_.CreateSelect(x_nan, by, r);
    ::llvm::Value* both_nan = b_.CreateAnd(x_nan, y_nan);
    r = b_.CreateSelect(both_nan, bits16(quiet_nan(t)), r);
    ::llvm::Value* h = from_bits16(r, t);
    if (t == ir::ScalarType::F16 && ::llvm::isa<::llvm::Instruction>(h)) {
      // The same choice among the operands widened to f32, for a consumer that computes in f32
      // (a clamp feeding an add): bit for bit the widened result, since a NaN operand is never
      // chosen, and it saves a vcvtph2ps, which bounds act<f16>'s loop on Zen 4. Unused, it is
      // dead code.
      ::llvm::Value* wx = to_compute(a, t);
      ::llvm::Value* wy = to_compute(b, t);
      ::llvm::Value* w = b_.CreateSelect(pick_x, wx, wy);
      w = b_.CreateSelect(y_nan, wx, w);
      w = b_.CreateSelect(x_nan, wy, w);
      widened_[h] = b_.CreateSelect(both_nan, quiet_nan(ir::ScalarType::F32), w);
    }
    return h;
  }
  ::llvm::Value* r = b_.CreateSelect(pick_x, x, y);
  r = b_.CreateSelect(y_nan, x, r);
  r = b_.CreateSelect(x_nan, y, r);
  r = b_.CreateSelect(b_.CreateAnd(x_nan, y_nan), quiet_nan(kt), r);
  return from_compute(r, t);
}

// A float's bits are a NaN: the magnitude is above infinity's (f16, bf16, f32, f64).
::llvm::Value* Lowering::is_nan_bits(::llvm::Value* bits, ir::ScalarType t) {
  const unsigned n = bits->getType()->getIntegerBitWidth();
  ::llvm::Value* magnitude =
      ::llvm::ConstantInt::get(bits->getType(), ::llvm::APInt::getSignedMaxValue(n));
  return b_.CreateICmpUGT(
      b_.CreateAnd(bits, magnitude),
      ::llvm::ConstantInt::get(bits->getType(), num::info(ir::format_of(t)).inf_bits));
}

// A float's bit pattern as a signed integer whose order is the values' order (NaNs aside, -0
// just below +0): a negative value's magnitude bits are flipped.
::llvm::Value* Lowering::order_key(::llvm::Value* bits) {
  const unsigned n = bits->getType()->getIntegerBitWidth();
  ::llvm::Value* magnitude =
      ::llvm::ConstantInt::get(bits->getType(), ::llvm::APInt::getSignedMaxValue(n));
  return b_.CreateXor(bits, b_.CreateAnd(b_.CreateAShr(bits, n - 1), magnitude));
}

// An ordered or unordered-not-equal compare of two f16 values on their bits. Without
// AVX512-FP16 the x86 backend scalarises `fcmp <16 x half>` (a vcvtph2ps and a vucomiss per
// element), and InstCombine turns a compare of the values widened to f32 back into one on half,
// so the compare is made on integer keys that vectorise: -0 is made +0, then a negative value's
// magnitude bits are flipped so that signed i16 order is the values' order; a NaN operand makes
// every predicate false but UNE.
::llvm::Value* Lowering::compare_f16(::llvm::CmpInst::Predicate p, ::llvm::Value* a,
                                     ::llvm::Value* b) {
  using P = ::llvm::CmpInst::Predicate;
  ::llvm::Value* magnitude = b_.getInt16(0x7fff);
  auto key = [&](::llvm::Value* v) {
    ::llvm::Value* bits = bits16(v);
    ::llvm::Value* zero = b_.CreateICmpEQ(b_.CreateAnd(bits, magnitude), b_.getInt16(0));
    return order_key(b_.CreateSelect(zero, b_.getInt16(0), bits));
  };
  ::llvm::Value* ordered =
      b_.CreateNot(b_.CreateOr(is_nan(a, ir::ScalarType::F16), is_nan(b, ir::ScalarType::F16)));
  ::llvm::Value* ka = key(a);
  ::llvm::Value* kb = key(b);
  switch (p) {
  case P::FCMP_OEQ:
    return b_.CreateAnd(ordered, b_.CreateICmpEQ(ka, kb));
  case P::FCMP_UNE:
    return b_.CreateNot(b_.CreateAnd(ordered, b_.CreateICmpEQ(ka, kb)));
  case P::FCMP_OLT:
    return b_.CreateAnd(ordered, b_.CreateICmpSLT(ka, kb));
  case P::FCMP_OLE:
    return b_.CreateAnd(ordered, b_.CreateICmpSLE(ka, kb));
  case P::FCMP_OGT:
    return b_.CreateAnd(ordered, b_.CreateICmpSGT(ka, kb));
  case P::FCMP_OGE:
    return b_.CreateAnd(ordered, b_.CreateICmpSGE(ka, kb));
  default:
    throw Error(ErrorKind::Internal, "compare_f16: an unexpected predicate");
  }
}

// GLSL fract: x - floor(x) rounded once, clamped below 1. For f16 and bf16 the f32 difference
// is one op of operands exact in the format (floor of such a value is one too): Figueroa.
::llvm::Value* Lowering::fract(::llvm::Value* x, ir::ScalarType t) {
  ::llvm::Value* c = to_compute(x, t);
  ::llvm::Value* d = b_.CreateFSub(c, b_.CreateUnaryIntrinsic(::llvm::Intrinsic::floor, c));
  switch (t) {
  case ir::ScalarType::F16: {
    ::llvm::Value* h = from_compute(d, t);
    ::llvm::Value* one = ::llvm::ConstantFP::get(b_.getHalfTy(), 1.0);
    ::llvm::Value* below = ::llvm::ConstantFP::get(
        ctx_, ::llvm::APFloat(::llvm::APFloat::IEEEhalf(), ::llvm::APInt(16, 0x3bff)));
    // On the bits, as compare_f16 does: no fcmp on half.
    return b_.CreateSelect(b_.CreateICmpEQ(bits16(h), bits16(one)), below, h);
  }
  case ir::ScalarType::BF16: {
    ::llvm::Value* h = from_compute(d, t);
    return b_.CreateSelect(b_.CreateICmpEQ(h, b_.getInt16(0x3f80)), b_.getInt16(0x3f7f), h);
  }
  default: {
    ::llvm::Type* ty = value_type(t);
    ::llvm::Value* one = ::llvm::ConstantFP::get(ty, 1.0);
    ::llvm::APFloat below = ::llvm::APFloat::getOne(ty->getFltSemantics());
    below.next(true);
    return b_.CreateSelect(b_.CreateFCmpOEQ(d, one), ::llvm::ConstantFP::get(ctx_, below), d);
  }
  }
}

// fma of f16/bf16 operands with one rounding: the product is exact in f64, TwoSum adds c exactly,
// round-to-odd keeps the information a single rounding needs (f32 fma then narrowing would not).
::llvm::Value* Lowering::fma_exact(::llvm::Value* a, ::llvm::Value* b, ::llvm::Value* c,
                                   ir::ScalarType t) {
  auto wide = [&](::llvm::Value* v) { return b_.CreateFPExt(to_compute(v, t), b_.getDoubleTy()); };
  ::llvm::Value* p = b_.CreateFMul(wide(a), wide(b));
  auto [s, e] = two_sum(p, wide(c));
  ::llvm::Value* d = round_to_odd_sum(s, e);
  d = b_.CreateSelect(is_nan(d, ir::ScalarType::F64), quiet_nan(ir::ScalarType::F64), d);
  ::llvm::Value* f = round_to_odd_f32(d);
  return t == ir::ScalarType::F16 ? b_.CreateFPTrunc(f, b_.getHalfTy()) : f32_to_bf16_rne(f);
}

// The exact single-rounding path of a lifted narrowing site (SingleRoundingMode::Exact): the
// f32 operands' product is exact in f64, so (+-)x*y (+- z) is rounded exactly once.
Val Lowering::exact_single_rounding(const ir::Expr& convert, const MulAdd& m) {
  auto wide = [&](ir::ExprId id) { return b_.CreateFPExt(expr(id).v, b_.getDoubleTy()); };
  // Operands in evaluation order, so that checked loads fail in the interpreter's order.
  ::llvm::Value* z = m.z != ir::kNone && m.z_first ? wide(m.z) : nullptr;
  ::llvm::Value* x = wide(m.x);
  ::llvm::Value* y = wide(m.y);
  if (m.z != ir::kNone && !m.z_first)
    z = wide(m.z);
  ::llvm::Value* p = b_.CreateFMul(x, y);
  if (m.negate_product)
    p = b_.CreateFNeg(p);
  ::llvm::Value* d = p;
  if (z) {
    if (m.negate_z)
      z = b_.CreateFNeg(z);
    auto [s, e] = two_sum(p, z);
    d = round_to_odd_sum(s, e);
  }
  d = b_.CreateSelect(is_nan(d, ir::ScalarType::F64), quiet_nan(ir::ScalarType::F64), d);
  ::llvm::Value* f = round_to_odd_f32(d);
  if (convert.type == ir::ScalarType::F16)
    return {b_.CreateFPTrunc(f, b_.getHalfTy())};
  return {f32_to_bf16_rne(f)};
}

} // namespace halfway::codegen::llvm::detail
