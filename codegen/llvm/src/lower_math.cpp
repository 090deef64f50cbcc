// exp and exp2 of f32, f16 and bf16 inline: num::fast's table-and-polynomial evaluation in
// double and its rounding test (numerics/include/halfway/numerics/fast_math.hpp has the error
// bound and why the test is sound), emitted as plain IR that the loop vectoriser widens. Lanes
// the test cannot decide call num::math through a function with vector variants, so that the
// vectorised loop makes one masked call per vector, which returns at once when no lane needs it.
// The results are num::math's bits.
#include "halfway/ir/format.hpp"
#include "halfway/numerics/fast_math.hpp"
#include "lowering.hpp"
#include "symbol_names.hpp"

#include <llvm/IR/MDBuilder.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <string>

namespace halfway::codegen::llvm::detail {

namespace {

std::string type_suffix(ir::ScalarType t) {
  return t == ir::ScalarType::F16 ? "f16" : t == ir::ScalarType::BF16 ? "bf16" : "f32";
}

// The widths the vectoriser may pick for these loops (up to 512-bit vectors of f32, and the
// forced 16 of f16 lane loops); at another width it calls the scalar fallback per active lane.
constexpr unsigned kVariantWidths[] = {2, 4, 8, 16};

} // namespace

// The 64-entry table 2^(j/64) as a private constant of the module, built from num::fast's.
::llvm::GlobalVariable* Lowering::exp2_table() {
  const std::string name = "halfway.exp2_table";
  if (::llvm::GlobalVariable* g = m_.getNamedGlobal(name))
    return g;
  const auto table = num::fast::exp2_table();
  ::llvm::Constant* init =
      ::llvm::ConstantDataArray::get(ctx_, ::llvm::ArrayRef<double>(table.data(), table.size()));
  auto* g = new ::llvm::GlobalVariable(m_, init->getType(), true,
                                       ::llvm::GlobalValue::PrivateLinkage, init, name);
  g->setUnnamedAddr(::llvm::GlobalValue::UnnamedAddr::Global);
  g->setAlignment(::llvm::Align(64));
  return g;
}

// num::math for one value, as `T fallback(T x)`, with masked vector variants
// `<N x T> fallback_vN(<N x T> x, <N x i1> mask)` that call it for the active lanes. Returns the
// scalar function and the value of the call-site attribute "vector-function-abi-variant".
std::pair<::llvm::Function*, std::string> Lowering::math_fallback(num::MathFn fn,
                                                                  ir::ScalarType t) {
  const std::string name =
      std::string("halfway_fallback_") + num::math_info(fn).name + "_" + type_suffix(t);
  ::llvm::Type* ty = value_type(t);
  std::string variants;
  for (unsigned n : kVariantWidths) {
    variants += (variants.empty() ? "" : ",") + std::string("_ZGV_LLVM_M") + std::to_string(n) +
                "v_" + name + "(" + name + "_v" + std::to_string(n) + ")";
  }
  if (::llvm::Function* f = m_.getFunction(name))
    return {f, variants};

  ::llvm::IRBuilderBase::InsertPointGuard guard(b_);
  auto define = [&](const std::string& fname, ::llvm::FunctionType* type) {
    auto* f = ::llvm::Function::Create(type, ::llvm::Function::InternalLinkage, fname, m_);
    for (const char* attr : {"target-cpu", "target-features", "prefer-vector-width"}) {
      if (fn_->hasFnAttribute(attr))
        f->addFnAttr(fn_->getFnAttribute(attr));
    }
    f->addFnAttr(::llvm::Attribute::NoUnwind);
    f->addFnAttr(::llvm::Attribute::WillReturn);
    f->setDoesNotAccessMemory();
    return f;
  };

  // The scalar function stays a call until the vectoriser has seen it (its attribute names the
  // variants); inlined earlier, the loop would hold an unvectorisable runtime call instead.
  ::llvm::Function* scalar = define(name, ::llvm::FunctionType::get(ty, {ty}, false));
  scalar->addFnAttr(::llvm::Attribute::NoInline);
  b_.SetInsertPoint(::llvm::BasicBlock::Create(ctx_, "entry", scalar));
  ::llvm::Type* i64t = b_.getInt64Ty();
  auto* math_type =
      ::llvm::FunctionType::get(i64t, {b_.getInt32Ty(), b_.getInt32Ty(), i64t, i64t}, false);
  ::llvm::Value* r =
      b_.CreateCall(runtime_function(kMathSymbol, math_type),
                    {i32(static_cast<uint32_t>(fn)), i32(static_cast<uint32_t>(ir::format_of(t))),
                     to_bits64(scalar->getArg(0), t), i64(0)});
  b_.CreateRet(from_bits64(r, t));

  std::vector<::llvm::GlobalValue*> used;
  for (unsigned n : kVariantWidths) {
    auto* vty = ::llvm::FixedVectorType::get(ty, n);
    auto* mty = ::llvm::FixedVectorType::get(b_.getInt1Ty(), n);
    ::llvm::Function* v =
        define(name + "_v" + std::to_string(n), ::llvm::FunctionType::get(vty, {vty, mty}, false));
    v->addFnAttr(::llvm::Attribute::AlwaysInline); // after vectorisation (optimize.cpp)
    ::llvm::Value* x = v->getArg(0);
    ::llvm::Value* mask = v->getArg(1);
    auto* entry = ::llvm::BasicBlock::Create(ctx_, "entry", v);
    auto* lanes = ::llvm::BasicBlock::Create(ctx_, "lanes", v);
    auto* none = ::llvm::BasicBlock::Create(ctx_, "none", v);
    b_.SetInsertPoint(entry);
    ::llvm::Value* any = b_.CreateICmpNE(b_.CreateBitCast(mask, b_.getIntNTy(n)), b_.getIntN(n, 0));
    b_.CreateCondBr(any, lanes, none, ::llvm::MDBuilder(ctx_).createBranchWeights(1, 1 << 20));
    b_.SetInsertPoint(none);
    b_.CreateRet(::llvm::PoisonValue::get(vty)); // inactive lanes are not read
    b_.SetInsertPoint(lanes);
    ::llvm::Value* acc = ::llvm::PoisonValue::get(vty);
    for (unsigned i = 0; i < n; ++i) {
      auto* call = ::llvm::BasicBlock::Create(ctx_, "call", v);
      auto* next = ::llvm::BasicBlock::Create(ctx_, "next", v);
      ::llvm::BasicBlock* from = b_.GetInsertBlock();
      b_.CreateCondBr(b_.CreateExtractElement(mask, i), call, next);
      b_.SetInsertPoint(call);
      ::llvm::Value* lane = b_.CreateCall(scalar, {b_.CreateExtractElement(x, i)});
      ::llvm::Value* set = b_.CreateInsertElement(acc, lane, i);
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
      ::llvm::PHINode* phi = b_.CreatePHI(vty, 2);
      phi->addIncoming(acc, from);
      phi->addIncoming(set, call);
      acc = phi;
    }
    b_.CreateRet(acc);
    used.push_back(v);
  }
  // Unused until the vectoriser calls them: keep them from being deleted before.
  ::llvm::appendToCompilerUsed(m_, used);
  return {scalar, variants};
}

std::optional<Val> Lowering::fast_math(const ir::Expr& e) {
  const std::optional<num::MathFn> fn = ir::math_fn(e.op);
  const ir::ScalarType t = e.type;
  if (!fn || !num::fast::has_fast_path(*fn, ir::format_of(t)))
    return std::nullopt;
  ::llvm::Type* f64 = b_.getDoubleTy();
  ::llvm::Type* i64t = b_.getInt64Ty();
  auto dbl = [&](double d) { return ::llvm::ConstantFP::get(f64, d); };
  ::llvm::Value* in = expr(e.args[0]).v;
  ::llvm::Value* x = b_.CreateFPExt(to_compute(in, t), f64); // exact

  // k = nearest integer to z, read from the bits of z + 1.5 * 2^52 (integer arithmetic only: no
  // conversion that is poison on the NaN and infinite lanes, whose results are replaced below).
  const bool exp = *fn == num::MathFn::Exp;
  ::llvm::Value* z = b_.CreateFMul(x, dbl(exp ? num::fast::kExpScale : num::fast::kTableSize));
  ::llvm::Value* shifted = b_.CreateFAdd(z, dbl(num::fast::kRoundShift));
  ::llvm::Value* kd = b_.CreateFSub(shifted, dbl(num::fast::kRoundShift));
  ::llvm::Value* r =
      exp ? b_.CreateFSub(b_.CreateFSub(x, b_.CreateFMul(kd, dbl(num::fast::kLn2Hi))),
                          b_.CreateFMul(kd, dbl(num::fast::kLn2Lo)))
          : b_.CreateFMul(b_.CreateFSub(z, kd), dbl(num::fast::kLn2));
  ::llvm::Value* k = b_.CreateSub(b_.CreateBitCast(shifted, i64t),
                                  b_.CreateBitCast(dbl(num::fast::kRoundShift), i64t));
  // Horner steps as fmuladd: one fused rounding per step where the host has FMA, which halves the
  // chain's latency (an attention step waits on it) and only lowers the error the bound allows
  // for (fast_math.hpp); two roundings elsewhere, as num::fast computes.
  ::llvm::Value* p = dbl(num::fast::kC5);
  for (double c : {num::fast::kC4, num::fast::kC3, num::fast::kC2, 1.0, 1.0})
    p = b_.CreateIntrinsic(::llvm::Intrinsic::fmuladd, {f64}, {r, p, dbl(c)});
  ::llvm::Value* idx = b_.CreateAnd(k, i64(num::fast::kTableSize - 1));
  ::llvm::GlobalVariable* table = exp2_table();
  ::llvm::Value* entry = b_.CreateLoad(
      f64, b_.CreateInBoundsGEP(table->getValueType(), table, {i64(0), idx}), "exp2.table");
  ::llvm::Value* scale = b_.CreateBitCast(
      b_.CreateShl(b_.CreateAdd(b_.CreateAShr(k, num::fast::kTableBits), i64(1023)), 52), f64);
  // T[j] * 2^(k >> 6) first, off the polynomial's chain: the power of two is exact on either
  // side (y is a normal double in range), so y is the same one rounding of T[j] * P(r).
  ::llvm::Value* y = b_.CreateFMul(b_.CreateFMul(entry, scale), p);

  // The rounding test: y -+ y * 2^-49 rounded to the format.
  ::llvm::Value* d = b_.CreateFMul(y, dbl(num::fast::kTestWidth));
  auto narrow = [&](::llvm::Value* v) -> ::llvm::Value* {
    switch (t) {
    case ir::ScalarType::F32:
      return b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getFloatTy()), b_.getInt32Ty());
    case ir::ScalarType::F16:
      return b_.CreateBitCast(b_.CreateFPTrunc(round_to_odd_f32(v), b_.getHalfTy()),
                              b_.getInt16Ty());
    default:
      return f32_to_bf16_rne(round_to_odd_f32(v));
    }
  };
  ::llvm::Value* lo = narrow(b_.CreateFSub(y, d));
  ::llvm::Value* decided = b_.CreateICmpEQ(lo, narrow(b_.CreateFAdd(y, d)));

  const num::fast::Range range = num::fast::range(*fn);
  ::llvm::Value* zero = b_.CreateFCmpOLT(x, dbl(range.zero_below));
  ::llvm::Value* inf = b_.CreateFCmpOGT(x, dbl(range.inf_above));
  ::llvm::Value* nan = b_.CreateFCmpUNO(x, x);
  ::llvm::Type* bits = bits_type(t);
  ::llvm::Value* res = b_.CreateSelect(zero, ::llvm::ConstantInt::get(bits, 0), lo);
  res = b_.CreateSelect(inf, ::llvm::ConstantInt::get(bits, num::info(ir::format_of(t)).inf_bits),
                        res);
  ::llvm::Value* qnan = quiet_nan(t);
  res = b_.CreateSelect(nan, qnan->getType() == bits ? qnan : b_.CreateBitCast(qnan, bits), res);
  decided = b_.CreateOr(b_.CreateOr(decided, nan), b_.CreateOr(zero, inf));
  ::llvm::Value* fast =
      res->getType() == value_type(t) ? res : b_.CreateBitCast(res, value_type(t));

  // The rare undecided lane: num::math, through the function whose vector variants the
  // vectoriser uses.
  auto [fallback, variants] = math_fallback(*fn, t);
  ::llvm::BasicBlock* from = b_.GetInsertBlock();
  ::llvm::BasicBlock* slow = block("math.slow");
  ::llvm::BasicBlock* join = block("math.join");
  b_.CreateCondBr(decided, join, slow, ::llvm::MDBuilder(ctx_).createBranchWeights(1 << 20, 1));
  b_.SetInsertPoint(slow);
  ::llvm::CallInst* call = b_.CreateCall(fallback, {in});
  call->addFnAttr(::llvm::Attribute::get(ctx_, "vector-function-abi-variant", variants));
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  ::llvm::PHINode* phi = b_.CreatePHI(fast->getType(), 2);
  phi->addIncoming(fast, from);
  phi->addIncoming(call, slow);
  return Val{phi, NanState::Clean};
}

} // namespace halfway::codegen::llvm::detail
