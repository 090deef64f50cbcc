// Integer and bool ops. Arithmetic wraps (two's complement). Division by zero and shifts by at
// least the width are errors in checked mode; unchecked, they have defined results so that no
// kernel can crash the process (x86 traps on idiv by zero and on INT_MIN / -1):
//   x / 0 = 0,  x % 0 = x,  INT_MIN / -1 = INT_MIN,  INT_MIN % -1 = 0,
//   x << n = 0 and logical x >> n = 0 for n >= width, arithmetic x >> n = x >> (width - 1).
#include "lowering.hpp"

namespace halfway::codegen::llvm::detail {

Val Lowering::int_op(ir::ExprId id, const ir::Expr& e) {
  bool is_signed = ir::info(e.type).is_signed;
  ::llvm::Value* a = expr(e.args[0]).v;
  ::llvm::Value* b = e.nargs > 1 ? expr(e.args[1]).v : nullptr;
  switch (e.op) {
  case ir::Op::Add:
    return {b_.CreateAdd(a, b)};
  case ir::Op::Sub:
    return {b_.CreateSub(a, b)};
  case ir::Op::Mul:
    return {b_.CreateMul(a, b)};
  case ir::Op::Div:
  case ir::Op::Rem:
    return {div_rem(id, e, a, b)};
  case ir::Op::Neg:
    return {b_.CreateNeg(a)};
  case ir::Op::Abs:
    return {is_signed ? b_.CreateBinaryIntrinsic(::llvm::Intrinsic::abs, a, b_.getFalse()) : a};
  case ir::Op::Min:
    return {b_.CreateBinaryIntrinsic(is_signed ? ::llvm::Intrinsic::smin : ::llvm::Intrinsic::umin,
                                     a, b)};
  case ir::Op::Max:
    return {b_.CreateBinaryIntrinsic(is_signed ? ::llvm::Intrinsic::smax : ::llvm::Intrinsic::umax,
                                     a, b)};
  case ir::Op::Clamp: // min(max(x, lo), hi), by definition (specs/ir.md)
    return {b_.CreateBinaryIntrinsic(
        is_signed ? ::llvm::Intrinsic::smin : ::llvm::Intrinsic::umin,
        b_.CreateBinaryIntrinsic(is_signed ? ::llvm::Intrinsic::smax : ::llvm::Intrinsic::umax, a,
                                 b),
        expr(e.args[2]).v)};
  case ir::Op::And:
    return {b_.CreateAnd(a, b)};
  case ir::Op::Or:
    return {b_.CreateOr(a, b)};
  case ir::Op::Xor:
    return {b_.CreateXor(a, b)};
  case ir::Op::Not:
    return {b_.CreateNot(a)};
  case ir::Op::Shl:
  case ir::Op::Shr:
    return {shift(id, e, a, b)};
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
    throw Error(ErrorKind::Unsupported,
                "the LLVM backend has no integer lowering for " + std::string(ir::name(e.op)),
                {.kernel = k_.name});
  }
  ir::invalid_op(e.op);
}

::llvm::Value* Lowering::div_rem(ir::ExprId id, const ir::Expr& e, ::llvm::Value* a,
                                 ::llvm::Value* b) {
  bool is_signed = ir::info(e.type).is_signed;
  bool div = e.op == ir::Op::Div;
  ::llvm::Type* t = a->getType();
  ::llvm::Value* zero = b_.CreateICmpEQ(b, ::llvm::ConstantInt::get(t, 0));
  if (options_.check_arith) {
    std::string what = std::string(div ? "div" : "rem") + " of " + std::string(ir::name(e.type));
    uint32_t site = add_site(ErrorKind::DivideByZero, id, 0, "", std::move(what), false);
    check(zero, site, i64(0), i64(0));
  }
  ::llvm::Value* bad = zero;
  if (is_signed) {
    unsigned w = t->getIntegerBitWidth();
    ::llvm::Value* overflow = b_.CreateAnd(
        b_.CreateICmpEQ(a, ::llvm::ConstantInt::get(t, ::llvm::APInt::getSignedMinValue(w))),
        b_.CreateICmpEQ(b, ::llvm::ConstantInt::getSigned(t, -1)));
    bad = b_.CreateOr(zero, overflow);
  }
  // With divisor 1 in place of a bad one, INT_MIN / -1 comes out as INT_MIN and INT_MIN % -1 as 0.
  ::llvm::Value* safe = b_.CreateSelect(bad, ::llvm::ConstantInt::get(t, 1), b);
  ::llvm::Value* r = div ? (is_signed ? b_.CreateSDiv(a, safe) : b_.CreateUDiv(a, safe))
                         : (is_signed ? b_.CreateSRem(a, safe) : b_.CreateURem(a, safe));
  return b_.CreateSelect(zero, div ? ::llvm::ConstantInt::get(t, 0) : a, r);
}

::llvm::Value* Lowering::shift(ir::ExprId id, const ir::Expr& e, ::llvm::Value* a,
                               ::llvm::Value* b) {
  ::llvm::Type* t = a->getType();
  unsigned w = t->getIntegerBitWidth();
  ::llvm::Value* over = b_.CreateICmpUGE(b, ::llvm::ConstantInt::get(t, w));
  if (options_.check_arith) {
    bool is_signed = ir::info(k_.expr(e.args[1]).type).is_signed;
    std::string what =
        std::string(e.op == ir::Op::Shl ? "shl" : "shr") + " of " + std::string(ir::name(e.type));
    uint32_t site = add_site(ErrorKind::ShiftOverflow, id, 0, "", std::move(what), is_signed);
    ::llvm::Value* amount =
        is_signed ? b_.CreateSExt(b, b_.getInt64Ty()) : b_.CreateZExt(b, b_.getInt64Ty());
    check(over, site, amount, i64(w));
  }
  ::llvm::Value* amount = b_.CreateSelect(over, ::llvm::ConstantInt::get(t, 0), b);
  if (e.op == ir::Op::Shl)
    return b_.CreateSelect(over, ::llvm::ConstantInt::get(t, 0), b_.CreateShl(a, amount));
  if (!ir::info(e.type).is_signed)
    return b_.CreateSelect(over, ::llvm::ConstantInt::get(t, 0), b_.CreateLShr(a, amount));
  return b_.CreateSelect(over, b_.CreateAShr(a, w - 1), b_.CreateAShr(a, amount));
}

} // namespace halfway::codegen::llvm::detail
