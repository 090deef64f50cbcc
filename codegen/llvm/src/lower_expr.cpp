// Expressions: the op table's rule picks the family, each family maps ops to LLVM instructions.
// Precision lives here too: the flag scopes of lifted narrowing sites and relaxed accumulations.
#include "halfway/codegen/llvm/fault.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/math.hpp"
#include "lowering.hpp"
#include "symbol_names.hpp"

namespace halfway::codegen::llvm::detail {

Val Lowering::expr(ir::ExprId id) {
  // Shared nodes are the same computation twice (kernel.hpp); computing them once per statement
  // is only an economy, and is skipped inside flag scopes, whose flags depend on the context.
  if (!flag_scopes_.empty())
    return {expr_uncached(id).v, plan_.node_nan[id]};
  if (auto it = cache_.find(id); it != cache_.end())
    return it->second;
  Val v{expr_uncached(id).v, plan_.node_nan[id]};
  cache_.emplace(id, v);
  return v;
}

Val Lowering::expr_uncached(ir::ExprId id) {
  const ir::Expr& e = k_.expr(id);
  switch (ir::info(e.op).rule) {
  case ir::TypeRule::Leaf:
    switch (e.op) {
    case ir::Op::Const:
      return constant(e);
    case ir::Op::LocalGet:
      if (plan_.storage.storage[e.ref] == LocalStorage::Remat)
        return expr(plan_.storage.remat[e.ref]);
      if (edge_lets_)
        if (auto it = edge_lets_->find(e.ref); it != edge_lets_->end())
          return expr(it->second); // the edge test, before the let has run (edge_guard.hpp)
      return {b_.CreateLoad(value_type(e.type), local_ptr(e.ref), k_.locals[e.ref].name),
              plan_.local_nan[e.ref]};
    case ir::Op::ParamGet:
      return {scalar_[e.ref]};
    case ir::Op::BufferLen:
      return {b_.CreateTrunc(buffer_len_[e.ref], b_.getInt32Ty())};
    case ir::Op::Load:
      return load(e, id);
    case ir::Op::GlobalId:
    case ir::Op::LocalId:
    case ir::Op::GroupId:
    case ir::Op::GroupSize:
    case ir::Op::NumGroups:
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
      return builtin(e);
    }
    ir::invalid_op(e.op);
  case ir::TypeRule::Convert: {
    if (e.type == ir::ScalarType::F16 && ir::is_narrowing(k_.expr(e.args[0]).type, e.type))
      note_narrows_f16();
    if (auto exact = plan_.precision.exact.find(id); exact != plan_.precision.exact.end())
      return exact_single_rounding(e, exact->second);
    auto lifted = plan_.precision.lifted.find(id);
    if (lifted == plan_.precision.lifted.end())
      return convert(id, e);
    ::llvm::FastMathFlags contract;
    contract.setAllowContract();
    flag_scopes_.push_back({&lifted->second->producers, contract});
    Val v = convert(id, e);
    flag_scopes_.pop_back();
    return v;
  }
  case ir::TypeRule::Bitcast:
    return bitcast(e);
  case ir::TypeRule::Pack:
    return pack(e);
  case ir::TypeRule::Unpack:
    return unpack(e);
  case ir::TypeRule::Select:
    return select(e);
  case ir::TypeRule::Compare:
    return compare(e);
  default:
    return ir::is_float(e.type) ? float_op(id, e) : int_op(id, e);
  }
}

::llvm::FastMathFlags Lowering::flags_for(ir::ExprId id) const {
  ::llvm::FastMathFlags f;
  for (const FlagScope& s : flag_scopes_)
    for (ir::ExprId op : *s.ops)
      if (op == id)
        f |= s.flags;
  // Relaxed accumulation reassociates the sum, not a term's product: (-FLT_MAX * x) * -28
  // reassociated is x * +inf, NaN for x = 0 where the kernel's value is 0 (campaign 20261207,
  // kernels 46748 and 48969; specs/f16-narrowing-barrier.md §5). A product may still contract
  // into the add it feeds.
  if (k_.expr(id).op == ir::Op::Mul)
    f.setAllowReassoc(false);
  return f;
}

::llvm::Value* Lowering::with_flags(::llvm::Value* v, ir::ExprId id) {
  if (flag_scopes_.empty())
    return v;
  if (auto* inst = ::llvm::dyn_cast<::llvm::Instruction>(v);
      inst && ::llvm::isa<::llvm::FPMathOperator>(inst))
    inst->setFastMathFlags(flags_for(id));
  return v;
}

Val Lowering::constant(const ir::Expr& e) {
  ::llvm::Type* t = value_type(e.type);
  switch (e.type) {
  case ir::ScalarType::F16:
    return {::llvm::ConstantFP::get(
        ctx_, ::llvm::APFloat(::llvm::APFloat::IEEEhalf(), ::llvm::APInt(16, e.imm)))};
  case ir::ScalarType::F32:
    return {::llvm::ConstantFP::get(
        ctx_, ::llvm::APFloat(::llvm::APFloat::IEEEsingle(), ::llvm::APInt(32, e.imm)))};
  case ir::ScalarType::F64:
    return {::llvm::ConstantFP::get(
        ctx_, ::llvm::APFloat(::llvm::APFloat::IEEEdouble(), ::llvm::APInt(64, e.imm)))};
  default:
    return {::llvm::ConstantInt::get(t, e.imm)};
  }
}

Val Lowering::builtin(const ir::Expr& e) {
  size_t d = e.imm;
  if (plan_.flat && d == 0 && lane_part_) {
    if (e.op == ir::Op::GlobalId)
      return {flat_gid0_};
    if (e.op == ir::Op::GroupId)
      return {flat_group_x_};
  }
  switch (e.op) {
  case ir::Op::GlobalId:
    return {b_.CreateAdd(group_base_[d], lid_[d])};
  case ir::Op::LocalId:
    return {lid_[d]};
  case ir::Op::GroupId:
    return {group_id_[d]};
  case ir::Op::GroupSize:
    return {i32(k_.workgroup[d])};
  case ir::Op::NumGroups:
    return {num_groups_[d]};
  case ir::Op::Const:
  case ir::Op::LocalGet:
  case ir::Op::ParamGet:
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
    return {i32(0)};
  }
  ir::invalid_op(e.op);
}

Val Lowering::select(const ir::Expr& e) {
  ::llvm::Value* c = expr(e.args[0]).v;
  Val a = expr(e.args[1]), b = expr(e.args[2]);
  bool agree;
  NanState s = merge(a.nan, b.nan, agree);
  if (!agree)
    a.v = canonical(a, e.type), b.v = canonical(b, e.type);
  ::llvm::Type* ty = a.v->getType();
  if (!ty->isFloatingPointTy())
    return {b_.CreateSelect(c, a.v, b.v), s};
  // A float select is a select of the bits: LLVM 19's InstCombine miscompiles nested float
  // selects on compares of fabs (codegen/llvm/README.md, "LLVM 19: min/max of fabs"), and the
  // integer form folds correctly; the result is the same bits, and it vectorises alike.
  ::llvm::Type* it = b_.getIntNTy(ty->getPrimitiveSizeInBits());
  ::llvm::Value* r = b_.CreateSelect(c, b_.CreateBitCast(a.v, it), b_.CreateBitCast(b.v, it));
  return {b_.CreateBitCast(r, ty), s};
}

Val Lowering::compare(const ir::Expr& e) {
  ir::ScalarType t = k_.expr(e.args[0]).type;
  ::llvm::Value* a = expr(e.args[0]).v;
  ::llvm::Value* b = expr(e.args[1]).v;
  using P = ::llvm::CmpInst::Predicate;
  size_t op = static_cast<size_t>(e.op) - static_cast<size_t>(ir::Op::Eq); // Eq Ne Lt Le Gt Ge
  if (ir::is_float(t)) {
    static constexpr P fp[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OLT,
                               P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE};
    if (t == ir::ScalarType::F16)
      return {compare_f16(fp[op], a, b)};
    if (t == ir::ScalarType::BF16)
      a = bf16_to_f32(a), b = bf16_to_f32(b);
    return {b_.CreateFCmp(fp[op], a, b)};
  }
  static constexpr P sint[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_SLT,
                               P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
  static constexpr P uint[] = {P::ICMP_EQ,  P::ICMP_NE,  P::ICMP_ULT,
                               P::ICMP_ULE, P::ICMP_UGT, P::ICMP_UGE};
  return {b_.CreateICmp(ir::info(t).is_signed ? sint[op] : uint[op], a, b)};
}

Val Lowering::float_op(ir::ExprId id, const ir::Expr& e) {
  ir::ScalarType t = e.type;
  bool narrow = t == ir::ScalarType::F16 || t == ir::ScalarType::BF16;
  auto arg = [&](int i) { return expr(e.args[i]).v; };
  // Binary arithmetic is computed in f32 for f16 and bf16: one op of exact operands computed in
  // q = 24 >= 2p + 2 bits and rounded once more is the op rounded once (Figueroa).
  auto binary = [&](::llvm::Instruction::BinaryOps op) -> Val {
    ::llvm::Value* a = to_compute(arg(0), t);
    ::llvm::Value* b = to_compute(arg(1), t);
    ::llvm::Value* r = with_flags(b_.CreateBinOp(op, a, b), id);
    return {narrow ? from_compute(r, t) : r, NanState::Dirty};
  };
  auto unary_intrinsic = [&](::llvm::Intrinsic::ID fn) -> Val {
    ::llvm::Value* a = to_compute(arg(0), t);
    ::llvm::Value* r = b_.CreateUnaryIntrinsic(fn, a);
    return {narrow ? from_compute(r, t) : r, NanState::Dirty};
  };
  switch (e.op) {
  case ir::Op::Add:
    return binary(::llvm::Instruction::FAdd);
  case ir::Op::Sub:
    if (testing::injected_fault() == testing::Fault::SwapSub) {
      ::llvm::Value* a = to_compute(arg(1), t);
      ::llvm::Value* b = to_compute(arg(0), t);
      ::llvm::Value* r = with_flags(b_.CreateFSub(a, b), id);
      return {narrow ? from_compute(r, t) : r, NanState::Dirty};
    }
    return binary(::llvm::Instruction::FSub);
  case ir::Op::Mul:
    return binary(::llvm::Instruction::FMul);
  case ir::Op::Div:
    return binary(::llvm::Instruction::FDiv);
  // The sign ops are bit ops (specs/ir.md): bf16 is its bits already, and f16 is done on its bits
  // too, because x86 without AVX512-FP16 computes a half op in float, whose conversions quiet a
  // signalling NaN (campaign 20261206, kernel 14752: copysign(0x7c01, 0.0) gave 0x7e01).
  case ir::Op::Neg: {
    ::llvm::Value* a = canonical(expr(e.args[0]), t);
    if (t == ir::ScalarType::BF16 || t == ir::ScalarType::F16)
      return {from_bits16(b_.CreateXor(bits16(a), b_.getInt16(0x8000)), t)};
    return {with_flags(b_.CreateFNeg(a), id)};
  }
  case ir::Op::Abs: {
    ::llvm::Value* a = canonical(expr(e.args[0]), t);
    if (t == ir::ScalarType::BF16 || t == ir::ScalarType::F16)
      return {from_bits16(b_.CreateAnd(bits16(a), b_.getInt16(0x7fff)), t)};
    return {b_.CreateUnaryIntrinsic(::llvm::Intrinsic::fabs, a)};
  }
  case ir::Op::Copysign: {
    ::llvm::Value* a = canonical(expr(e.args[0]), t);
    ::llvm::Value* b = canonical(expr(e.args[1]), t);
    if (t == ir::ScalarType::BF16 || t == ir::ScalarType::F16)
      return {from_bits16(b_.CreateOr(b_.CreateAnd(bits16(a), b_.getInt16(0x7fff)),
                                      b_.CreateAnd(bits16(b), b_.getInt16(0x8000))),
                          t)};
    return {b_.CreateBinaryIntrinsic(::llvm::Intrinsic::copysign, a, b)};
  }
  case ir::Op::Min:
  case ir::Op::Max: {
    ::llvm::Value* a = arg(0); // operands in order: checked loads fail in evaluation order
    ::llvm::Value* b = arg(1);
    return {min_max(e.op == ir::Op::Max, a, b, t)};
  }
  case ir::Op::Clamp: { // min(max(x, lo), hi), by definition (specs/ir.md)
    ::llvm::Value* x = arg(0);
    ::llvm::Value* lo = arg(1);
    ::llvm::Value* hi = arg(2);
    return {min_max(false, min_max(true, x, lo, t), hi, t)};
  }
  case ir::Op::Fma: {
    ::llvm::Value* a = arg(0);
    ::llvm::Value* b = arg(1);
    ::llvm::Value* c = arg(2);
    if (narrow)
      return {fma_exact(a, b, c, t), NanState::Dirty};
    ::llvm::Value* r = b_.CreateIntrinsic(::llvm::Intrinsic::fma, {value_type(t)}, {a, b, c});
    return {with_flags(r, id), NanState::Dirty};
  }
  case ir::Op::Sqrt:
    return unary_intrinsic(::llvm::Intrinsic::sqrt);
  case ir::Op::Floor:
    return unary_intrinsic(::llvm::Intrinsic::floor);
  case ir::Op::Ceil:
    return unary_intrinsic(::llvm::Intrinsic::ceil);
  case ir::Op::Fract:
    return {fract(arg(0), t), NanState::Dirty};
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
    return math_call(e);
  }
  ir::invalid_op(e.op);
}

// The elementary functions with no exact LLVM instruction: halfway's correctly rounded ones, the
// interpreter's own, so results are bit-identical: exp and exp2 inline where lower_math.cpp
// can, the others a call per element (slow, no vectorisation).
Val Lowering::math_call(const ir::Expr& e) {
  if (std::optional<Val> inline_value = fast_math(e))
    return *inline_value;
  const std::optional<num::MathFn> fn = ir::math_fn(e.op);
  if (!fn)
    throw Error(ErrorKind::Unsupported,
                "the LLVM backend has no lowering for " + std::string(ir::name(e.op)),
                {.kernel = k_.name});
  ::llvm::Type* i64t = b_.getInt64Ty();
  auto* type =
      ::llvm::FunctionType::get(i64t, {b_.getInt32Ty(), b_.getInt32Ty(), i64t, i64t}, false);
  ::llvm::Value* x = to_bits64(expr(e.args[0]).v, e.type);
  ::llvm::Value* y = e.nargs > 1 ? to_bits64(expr(e.args[1]).v, e.type) : i64(0); // after x
  ::llvm::Value* r = b_.CreateCall(
      runtime_function(kMathSymbol, type),
      {i32(static_cast<uint32_t>(*fn)), i32(static_cast<uint32_t>(ir::format_of(e.type))), x, y});
  return {from_bits64(r, e.type)};
}

Val Lowering::bitcast(const ir::Expr& e) {
  ir::ScalarType from = k_.expr(e.args[0]).type;
  ::llvm::Value* v = canonical(expr(e.args[0]), from);
  ::llvm::Type* to = value_type(e.type);
  return {v->getType() == to ? v : b_.CreateBitCast(v, to)};
}

// Element 0 in the lowest bits.
Val Lowering::pack(const ir::Expr& e) {
  uint32_t bits = ir::info(e.aux).bits;
  ::llvm::Value* word = i32(0);
  for (int i = 0; i < e.nargs; ++i) {
    ::llvm::Value* v = canonical(expr(e.args[i]), e.aux);
    v = b_.CreateBitCast(v, b_.getIntNTy(bits));
    v = b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), bits * i);
    word = b_.CreateOr(word, v);
  }
  return {word};
}

Val Lowering::unpack(const ir::Expr& e) {
  uint32_t bits = ir::info(e.aux).bits;
  ::llvm::Value* word = expr(e.args[0]).v;
  ::llvm::Value* v = b_.CreateTrunc(b_.CreateLShr(word, bits * e.imm), b_.getIntNTy(bits));
  ::llvm::Type* t = value_type(e.type);
  return {v->getType() == t ? v : b_.CreateBitCast(v, t)};
}

::llvm::FunctionCallee Lowering::runtime_function(const char* name, ::llvm::FunctionType* type) {
  ::llvm::FunctionCallee callee = m_.getOrInsertFunction(name, type);
  if (auto* f = ::llvm::dyn_cast<::llvm::Function>(callee.getCallee())) {
    f->addFnAttr(::llvm::Attribute::NoUnwind);
    f->addFnAttr(::llvm::Attribute::WillReturn);
    f->setDoesNotAccessMemory();
  }
  return callee;
}

} // namespace halfway::codegen::llvm::detail
