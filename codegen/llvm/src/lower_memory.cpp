// Loads, stores, atomics, and their bounds checks (options.hpp, MemoryChecks).
//
// Shared memory is this thread's scratch: a workgroup runs on one thread, its lanes one after
// another, so shared atomics are plain read-modify-writes. Buffer atomics are LLVM atomicrmw /
// cmpxchg (monotonic): other workgroups run on other threads.
#include "halfway/ir/printer.hpp"
#include "lowering.hpp"

#include <llvm/IR/MDBuilder.h>

namespace halfway::codegen::llvm::detail {

uint32_t Lowering::add_site(ErrorKind kind, ir::ExprId node, uint32_t line, std::string buffer,
                            std::string what, bool index_signed) {
  CheckSite s;
  s.kind = kind;
  s.node = node;
  if (node != ir::kNone) {
    s.node_text = ir::print_expr(k_, node);
    if (!line)
      line = k_.expr(node).line;
  }
  s.line = line;
  s.buffer = std::move(buffer);
  s.what = std::move(what);
  s.index_signed = index_signed;
  sites_.push_back(std::move(s));
  return static_cast<uint32_t>(sites_.size() - 1);
}

// void record(ErrorRecord*, i32 site, i32 lane, i64 group, i64 index, i64 length). The
// interpreter runs a workgroup's lanes in lockstep and reports the first failing node (lowest
// lane at that node); here lanes run one after another, so a failing lane leaves its part, the
// others go on, and the record keeps the failure with the smallest (site, lane): sites are
// numbered in evaluation order, so within straight-line code that is the interpreter's choice.
// Failures in different workgroups only happen in parallel runs, which the device repeats
// deterministically to report the lowest workgroup's.
::llvm::Function* Lowering::error_recorder() {
  if (recorder_)
    return recorder_;
  ::llvm::Type* i32t = b_.getInt32Ty();
  ::llvm::Type* i64t = b_.getInt64Ty();
  auto* type = ::llvm::FunctionType::get(b_.getVoidTy(),
                                         {b_.getPtrTy(), i32t, i32t, i64t, i64t, i64t}, false);
  recorder_ =
      ::llvm::Function::Create(type, ::llvm::Function::InternalLinkage, "halfway.record_error", m_);
  recorder_->addFnAttr(::llvm::Attribute::NoInline);
  recorder_->addFnAttr(::llvm::Attribute::Cold);
  recorder_->addFnAttr(::llvm::Attribute::NoUnwind);
  auto* entry = ::llvm::BasicBlock::Create(ctx_, "entry", recorder_);
  auto* compare = ::llvm::BasicBlock::Create(ctx_, "compare", recorder_);
  auto* write = ::llvm::BasicBlock::Create(ctx_, "write", recorder_);
  auto* done = ::llvm::BasicBlock::Create(ctx_, "done", recorder_);
  ::llvm::IRBuilder<> r(entry);
  ::llvm::Value* rec = recorder_->getArg(0);
  ::llvm::Value* site = recorder_->getArg(1);
  ::llvm::Value* lane = recorder_->getArg(2);
  auto field = [&](uint64_t offset) {
    return r.CreateConstInBoundsGEP1_64(r.getInt8Ty(), rec, offset);
  };
  ::llvm::Value* claimed = r.CreateLoad(i32t, field(offsetof(ErrorRecord, claimed)));
  r.CreateCondBr(r.CreateICmpEQ(claimed, r.getInt32(0)), write, compare);
  r.SetInsertPoint(compare);
  ::llvm::Value* old_site = r.CreateLoad(i32t, field(offsetof(ErrorRecord, site)));
  ::llvm::Value* old_lane = r.CreateLoad(i32t, field(offsetof(ErrorRecord, lane)));
  ::llvm::Value* same_group =
      r.CreateICmpEQ(r.CreateLoad(i64t, field(offsetof(ErrorRecord, group))), recorder_->getArg(3));
  ::llvm::Value* earlier =
      r.CreateOr(r.CreateICmpULT(site, old_site),
                 r.CreateAnd(r.CreateICmpEQ(site, old_site), r.CreateICmpULT(lane, old_lane)));
  r.CreateCondBr(r.CreateAnd(same_group, earlier), write, done);
  r.SetInsertPoint(write);
  r.CreateStore(r.getInt32(1), field(offsetof(ErrorRecord, claimed)));
  r.CreateStore(site, field(offsetof(ErrorRecord, site)));
  r.CreateStore(lane, field(offsetof(ErrorRecord, lane)));
  r.CreateStore(recorder_->getArg(3), field(offsetof(ErrorRecord, group)));
  r.CreateStore(recorder_->getArg(4), field(offsetof(ErrorRecord, index)));
  r.CreateStore(recorder_->getArg(5), field(offsetof(ErrorRecord, length)));
  r.CreateBr(done);
  r.SetInsertPoint(done);
  r.CreateRetVoid();
  return recorder_;
}

void Lowering::check(::llvm::Value* fail, uint32_t site, ::llvm::Value* index,
                     ::llvm::Value* length) {
  ::llvm::BasicBlock* bad = block("check.fail");
  ::llvm::BasicBlock* ok = block("check.ok");
  ::llvm::MDBuilder md(ctx_);
  b_.CreateCondBr(fail, bad, ok, md.createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(bad);
  b_.CreateCall(error_recorder(), {error_record_, i32(site), lane_, group_linear_, index, length});
  if (lane_part_) {
    b_.CreateStore(i32(1), failed_slot_);
    lane_part_->may_fail = true;
    b_.CreateBr(lane_part_->done);
  } else {
    b_.CreateBr(error_exit_);
  }
  b_.SetInsertPoint(ok);
}

::llvm::Value* Lowering::index64(ir::ExprId index) {
  ::llvm::Value* v = expr(index).v;
  bool is_signed = ir::info(k_.expr(index).type).is_signed;
  return is_signed ? b_.CreateSExt(v, b_.getInt64Ty()) : b_.CreateZExt(v, b_.getInt64Ty());
}

::llvm::Value* Lowering::access_index(ir::ExprId index, bool split_offset) {
  ir::ScalarType t = k_.expr(index).type;
  const auto& info = ir::info(t);
  if (options_.memory != MemoryChecks::Guarded || info.bits > 32)
    return index64(index);
  // A buffer index `x + c` (c a small constant) is zext(x) + c instead of zext(x + c): then the
  // accesses x, x + 1, x + 2, ... are visibly adjacent, and the vectoriser loads them as one
  // interleaved group (the GEMVs' w[base + e]), where zext of each sum hides it. The two differ
  // only where x + c wraps past 2^32; the offset is then below 2^32 + c elements, inside the
  // guard (2^32 elements and a page past the data): the access faults and the device reruns the
  // launch with Explicit code, whose wrapping index is the interpreter's (runtime/cpu).
  const ir::Expr& e = k_.expr(index);
  if (split_offset && info.bits == 32 && e.op == ir::Op::Add) {
    constexpr uint64_t kMaxOffset = 64; // elements: 512 bytes at most, far below a page
    for (int side = 0; side < 2; ++side) {
      const ir::Expr& c = k_.expr(e.args[1 - side]);
      uint64_t offset = c.imm & 0xffffffffu;
      if (c.op != ir::Op::Const || offset == 0 || offset > kMaxOffset)
        continue;
      ::llvm::Value* x = b_.CreateZExt(expr(e.args[side]).v, b_.getInt64Ty());
      return b_.CreateAdd(x, i64(offset), "", /*HasNUW=*/true, /*HasNSW=*/true);
    }
  }
  ::llvm::Value* v = expr(index).v;
  if (info.bits < 32)
    v = info.is_signed ? b_.CreateSExt(v, b_.getInt32Ty()) : b_.CreateZExt(v, b_.getInt32Ty());
  return b_.CreateZExt(v, b_.getInt64Ty());
}

::llvm::Value* Lowering::element_ptr(ir::Space space, uint32_t ref, ::llvm::Value* idx,
                                     bool idx_signed, bool explicit_index, ir::ExprId node,
                                     uint32_t line, const char* access) {
  ir::ScalarType t = k_.element_type(space, ref);
  ::llvm::Value* base =
      space == ir::Space::Buffer
          ? buffer_ptr_[ref]
          : b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), shared_base_, plan_.shared_offset[ref]);
  if (options_.memory == MemoryChecks::Explicit) {
    ::llvm::Value* length =
        space == ir::Space::Buffer ? buffer_len_[ref] : i64(k_.shared[ref].size);
    const std::string& name = k_.memory_name(space, ref);
    std::string what =
        std::string(access) + (space == ir::Space::Buffer ? " buffer " : " shared ") + name;
    uint32_t site = add_site(ErrorKind::OutOfBounds, node, line, name, std::move(what), idx_signed);
    // Unsigned comparison: a negative index reads as a huge one.
    check(b_.CreateICmpUGE(idx, length), site, idx, length);
  } else if (options_.memory == MemoryChecks::Guarded &&
             (space == ir::Space::Shared || explicit_index)) {
    // Shared scratch has no guard, and a 64-bit index may reach past any guard: compare, and on
    // failure return 1 unrecorded (the device reruns with Explicit checks for the detail).
    ::llvm::Value* length =
        space == ir::Space::Buffer ? buffer_len_[ref] : i64(k_.shared[ref].size);
    ::llvm::BasicBlock* ok = block("bounds.ok");
    ::llvm::MDBuilder md(ctx_);
    b_.CreateCondBr(b_.CreateICmpUGE(idx, length), error_exit_, ok,
                    md.createBranchWeights(1, 1 << 20));
    b_.SetInsertPoint(ok);
  }
  return b_.CreateInBoundsGEP(value_type(t), base, idx);
}

bool Lowering::by_element(const ir::Kernel& k, ir::Space space, uint32_t ref) {
  return space == ir::Space::Private || (space == ir::Space::Shared && k.shared[ref].rank() > 1);
}

::llvm::Value* Lowering::array_element_ptr(ir::Space space, uint32_t ref,
                                           const std::array<::llvm::Value*, 3>& idx,
                                           const std::array<bool, 3>& idx_signed, ir::ExprId node,
                                           uint32_t line, const char* access) {
  const ir::SharedArray& a = k_.array(space, ref);
  const std::string& name = a.name;
  const uint32_t rank = a.rank();
  ::llvm::Value* linear = i64(0);
  for (uint32_t d = 0; d < rank; ++d) {
    ::llvm::Value* length = i64(a.dim(d));
    // Unsigned comparison: a negative index (sign-extended to 64 bits) reads as a huge one.
    ::llvm::Value* outside = b_.CreateICmpUGE(idx[d], length);
    if (options_.memory == MemoryChecks::Explicit) {
      std::string what =
          std::string(access) + (space == ir::Space::Private ? " private " : " shared ") + name;
      uint32_t site =
          add_site(ErrorKind::OutOfBounds, node, line, name, std::move(what), idx_signed[d]);
      if (rank > 1)
        sites_[site].dimension = static_cast<int>(d);
      check(outside, site, idx[d], length);
    } else if (options_.memory == MemoryChecks::Guarded) {
      // Like rank-1 shared arrays: the scratch has no guard; on failure return 1 unrecorded and
      // the device reruns with Explicit checks for the detail.
      ::llvm::BasicBlock* ok = block("bounds.ok");
      ::llvm::MDBuilder md(ctx_);
      b_.CreateCondBr(outside, error_exit_, ok, md.createBranchWeights(1, 1 << 20));
      b_.SetInsertPoint(ok);
    }
    // Each index is below its dimension here, so the row-major element is below 2^32.
    linear = d == 0 ? idx[d] : b_.CreateAdd(b_.CreateMul(linear, length), idx[d]);
  }
  ir::ScalarType t = a.type;
  if (space == ir::Space::Shared) {
    ::llvm::Value* base =
        b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), shared_base_, plan_.shared_offset[ref]);
    return b_.CreateInBoundsGEP(value_type(t), base, linear);
  }
  ::llvm::Value* base =
      b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), shared_base_, plan_.private_offset[ref]);
  ::llvm::Value* lane = b_.CreateZExt(lane_, b_.getInt64Ty());
  ::llvm::Value* at = plan_.private_lane_major[ref]
                          ? b_.CreateAdd(b_.CreateMul(lane, i64(a.size)), linear)
                          : b_.CreateAdd(b_.CreateMul(linear, i64(plan_.lanes)), lane);
  return b_.CreateInBoundsGEP(value_type(t), base, at);
}

static bool signed_index(const ir::Kernel& k, ir::ExprId index) {
  return ir::info(k.expr(index).type).is_signed;
}

// An index of 64 bits: the guard (2^32 elements) does not cover it.
static bool wide_index(const ir::Kernel& k, ir::ExprId index) {
  return ir::info(k.expr(index).type).bits > 32;
}

Val Lowering::load(const ir::Expr& e, ir::ExprId id) {
  if (by_element(k_, e.space, e.ref)) {
    std::array<::llvm::Value*, 3> idx{};
    std::array<bool, 3> sign{};
    for (int i = 0; i < e.nargs; ++i) {
      idx[i] = index64(e.args[i]);
      sign[i] = signed_index(k_, e.args[i]);
    }
    ::llvm::Value* ptr = array_element_ptr(e.space, e.ref, idx, sign, id, 0, "load from");
    return {b_.CreateLoad(value_type(e.type), ptr, probe_loads_)};
  }
  ::llvm::Value* idx = access_index(e.args[0], e.space == ir::Space::Buffer);
  ::llvm::Value* ptr = element_ptr(e.space, e.ref, idx, signed_index(k_, e.args[0]),
                                   wide_index(k_, e.args[0]), id, 0, "load from");
  // A load whose value nobody sees is volatile, so that LLVM keeps it: past the end, the guard
  // turns it into the out-of-bounds error the interpreter reports (observable.hpp).
  return {b_.CreateLoad(value_type(e.type), ptr, probe_loads_)};
}

// The index is evaluated before the value and checked after it, as the interpreter does.
void Lowering::store(const ir::Stmt& s) {
  ir::ScalarType t = k_.element_type(s.space, s.mem);
  if (by_element(k_, s.space, s.mem)) {
    std::array<::llvm::Value*, 3> idx{};
    std::array<bool, 3> sign{};
    const std::array<ir::ExprId, 3> ix = ir::store_indices(s);
    for (int i = 0; i < 3; ++i)
      if (ix[i] != ir::kNone) {
        idx[i] = index64(ix[i]);
        sign[i] = signed_index(k_, ix[i]);
      }
    ::llvm::Value* v = canonical(expr(s.b), t);
    ::llvm::Value* ptr =
        array_element_ptr(s.space, s.mem, idx, sign, ir::kNone, s.line, "store to");
    b_.CreateStore(v, ptr);
    return;
  }
  ::llvm::Value* idx = access_index(s.a, s.space == ir::Space::Buffer);
  ::llvm::Value* v = canonical(expr(s.b), t);
  ::llvm::Value* ptr = element_ptr(s.space, s.mem, idx, signed_index(k_, s.a), wide_index(k_, s.a),
                                   ir::kNone, s.line, "store to");
  b_.CreateStore(v, ptr);
}

void Lowering::atomic(const ir::Stmt& s) {
  ir::ScalarType t = k_.element_type(s.space, s.mem);
  bool is_signed = ir::info(t).is_signed;
  ::llvm::Value* idx = access_index(s.a, false);
  ::llvm::Value* v = expr(s.b).v;
  ::llvm::Value* cmp = s.c != ir::kNone ? expr(s.c).v : nullptr;
  ::llvm::Value* ptr = element_ptr(s.space, s.mem, idx, signed_index(k_, s.a), wide_index(k_, s.a),
                                   ir::kNone, s.line, "atomic on");
  ::llvm::Value* old = nullptr;
  if (s.space == ir::Space::Buffer) {
    auto order = ::llvm::AtomicOrdering::Monotonic;
    if (s.atomic == ir::AtomicOp::CompareExchange) {
      auto* x = b_.CreateAtomicCmpXchg(ptr, cmp, v, ::llvm::MaybeAlign(), order, order);
      old = b_.CreateExtractValue(x, 0);
    } else {
      using B = ::llvm::AtomicRMWInst::BinOp;
      B op = B::Add;
      switch (s.atomic) {
      case ir::AtomicOp::Add:
        op = B::Add;
        break;
      case ir::AtomicOp::Sub:
        op = B::Sub;
        break;
      case ir::AtomicOp::Min:
        op = is_signed ? B::Min : B::UMin;
        break;
      case ir::AtomicOp::Max:
        op = is_signed ? B::Max : B::UMax;
        break;
      case ir::AtomicOp::And:
        op = B::And;
        break;
      case ir::AtomicOp::Or:
        op = B::Or;
        break;
      case ir::AtomicOp::Xor:
        op = B::Xor;
        break;
      case ir::AtomicOp::Exchange:
        op = B::Xchg;
        break;
      case ir::AtomicOp::CompareExchange:
        break;
      }
      old = b_.CreateAtomicRMW(op, ptr, v, ::llvm::MaybeAlign(), order);
    }
  } else {
    old = b_.CreateLoad(value_type(t), ptr);
    ::llvm::Value* next = nullptr;
    switch (s.atomic) {
    case ir::AtomicOp::Add:
      next = b_.CreateAdd(old, v);
      break;
    case ir::AtomicOp::Sub:
      next = b_.CreateSub(old, v);
      break;
    case ir::AtomicOp::Min:
      next = b_.CreateBinaryIntrinsic(is_signed ? ::llvm::Intrinsic::smin : ::llvm::Intrinsic::umin,
                                      old, v);
      break;
    case ir::AtomicOp::Max:
      next = b_.CreateBinaryIntrinsic(is_signed ? ::llvm::Intrinsic::smax : ::llvm::Intrinsic::umax,
                                      old, v);
      break;
    case ir::AtomicOp::And:
      next = b_.CreateAnd(old, v);
      break;
    case ir::AtomicOp::Or:
      next = b_.CreateOr(old, v);
      break;
    case ir::AtomicOp::Xor:
      next = b_.CreateXor(old, v);
      break;
    case ir::AtomicOp::Exchange:
      next = v;
      break;
    case ir::AtomicOp::CompareExchange:
      next = b_.CreateSelect(b_.CreateICmpEQ(old, cmp), v, old);
      break;
    }
    b_.CreateStore(next, ptr);
  }
  if (s.local != ir::kNone)
    store_local(s.local, {old});
}

} // namespace halfway::codegen::llvm::detail
