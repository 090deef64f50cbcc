// Statements inside a Lanes part: ordinary scalar code for one lane, divergence included.
#include "halfway/ir/analysis/loops.hpp"
#include "halfway/ir/bits.hpp"
#include "lowering.hpp"

#include <cstdint>
#include <optional>

namespace halfway::codegen::llvm::detail {

::llvm::Value* Lowering::local_ptr(uint32_t local) {
  const LocalStorage storage = plan_.storage.storage[local];
  const bool per_lane =
      storage == LocalStorage::PerLane ||
      (storage == LocalStorage::LaneScalar && lane_part_ && lane_part_->lane_scalars_per_lane);
  if (!per_lane)
    return local_slot_[local];
  ::llvm::Type* array = ::llvm::ArrayType::get(value_type(k_.locals[local].type), plan_.lanes);
  return b_.CreateInBoundsGEP(array, local_slot_[local],
                              {i64(0), b_.CreateZExt(lane_, b_.getInt64Ty())});
}

// A local whose assignments disagree on their NaN state is Clean (nan_state.hpp): values of
// another state are made canonical on the way in.
void Lowering::store_local(uint32_t local, Val v) {
  ::llvm::Value* value = v.v;
  if (v.nan != NanState::NoNan && v.nan != plan_.local_nan[local])
    value = canonical(v, k_.locals[local].type);
  b_.CreateStore(value, local_ptr(local));
}

::llvm::Value* Lowering::bool_condition(ir::ExprId e) {
  return expr(e).v;
}

bool Lowering::lane_block(const ir::Body& block) {
  for (const ir::Stmt& s : block)
    if (!lane_stmt(s))
      return false;
  return true;
}

bool Lowering::lane_stmt(const ir::Stmt& s) {
  begin_statement();
  switch (s.kind) {
  case ir::StmtKind::Let:
  case ir::StmtKind::Assign: {
    if (plan_.storage.storage[s.local] == LocalStorage::Remat)
      return true; // recomputed where read
    auto acc = plan_.precision.accumulations.find({s.local, s.a});
    if (acc != plan_.precision.accumulations.end() && s.kind == ir::StmtKind::Assign) {
      ::llvm::FastMathFlags relaxed;
      relaxed.setAllowReassoc();
      relaxed.setAllowContract();
      flag_scopes_.push_back({&acc->second, relaxed});
      Val v = expr(s.a);
      flag_scopes_.pop_back();
      store_local(s.local, v);
    } else {
      probe_loads_ = !plan_.observable[s.local];
      const Val v = expr(s.a);
      probe_loads_ = false;
      store_local(s.local, v);
    }
    return true;
  }
  case ir::StmtKind::Store:
    store(s);
    return true;
  case ir::StmtKind::Atomic:
    atomic(s);
    return true;
  case ir::StmtKind::If:
    lane_if(s);
    return true;
  case ir::StmtKind::While:
    lane_while(s);
    return true;
  case ir::StmtKind::For:
    lane_for(s);
    return true;
  case ir::StmtKind::Break:
  case ir::StmtKind::Continue:
    if (lane_loops_.empty()) {
      lane_escape(s.kind);
    } else {
      const LoopTargets& t = lane_loops_.back();
      b_.CreateBr(s.kind == ir::StmtKind::Break ? t.brk : t.cont);
    }
    return false;
  case ir::StmtKind::Return:
    lane_escape(s.kind);
    return false;
  case ir::StmtKind::Barrier:
    return true; // never inside a Lanes part (partition.hpp)
  }
  return true;
}

// Leaving the part: the lane is done with it; the flag tells the code after the lane loop where
// to go. A return in the last part of the kernel needs no flag: nothing runs after it.
void Lowering::lane_escape(ir::StmtKind kind) {
  uint32_t code = kind == ir::StmtKind::Break      ? kEscapeBreak
                  : kind == ir::StmtKind::Continue ? kEscapeContinue
                                                   : kEscapeReturn;
  if (code != kEscapeReturn || lane_part_->return_sets_flag) {
    b_.CreateStore(i32(code), escape_slot_);
    lane_part_->escapes = true;
  }
  b_.CreateBr(lane_part_->done);
}

void Lowering::lane_if(const ir::Stmt& s) {
  ::llvm::BasicBlock* then_bb = block("if.then");
  ::llvm::BasicBlock* merge = block("if.end");
  if (assumed_true_.count(&s)) {
    b_.CreateBr(then_bb); // an edge guard every lane of the row takes (edge_guard.hpp)
    b_.SetInsertPoint(then_bb);
    if (lane_block(s.body))
      b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    return;
  }
  ::llvm::Value* c = bool_condition(s.a);
  ::llvm::BasicBlock* else_bb = block("if.else");
  b_.CreateCondBr(c, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  if (lane_block(s.body))
    b_.CreateBr(merge);
  b_.SetInsertPoint(else_bb);
  if (lane_block(s.else_body))
    b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
}

void Lowering::lane_while(const ir::Stmt& s) {
  ::llvm::BasicBlock* header = block("while");
  ::llvm::BasicBlock* body = block("while.body");
  ::llvm::BasicBlock* exit = block("while.end");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  begin_statement();
  b_.CreateCondBr(bool_condition(s.a), body, exit);
  b_.SetInsertPoint(body);
  // `continue` goes to the latch, so that every path back to the header polls.
  ::llvm::BasicBlock* latch = block("while.latch");
  lane_loops_.push_back({exit, latch});
  if (lane_block(s.body))
    b_.CreateBr(latch);
  lane_loops_.pop_back();
  b_.SetInsertPoint(latch);
  poll_cancel();
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
}

void Lowering::lane_for(const ir::Stmt& s) {
  store_local(s.local, expr(s.a));
  lane_for_rest(s);
}

void Lowering::lane_for_rest(const ir::Stmt& s) {
  ir::ScalarType t = k_.locals[s.local].type;
  ::llvm::Type* ty = value_type(t);
  ::llvm::BasicBlock* header = block("for");
  ::llvm::BasicBlock* body = block("for.body");
  ::llvm::BasicBlock* step = block("for.step");
  ::llvm::BasicBlock* exit = block("for.end");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  begin_statement();
  ::llvm::Value* v = b_.CreateLoad(ty, local_ptr(s.local));
  ::llvm::Value* end = expr(s.b).v;
  bool is_signed = ir::info(t).is_signed;
  b_.CreateCondBr(is_signed ? b_.CreateICmpSLT(v, end) : b_.CreateICmpULT(v, end), body, exit);
  b_.SetInsertPoint(body);
  lane_loops_.push_back({exit, step});
  if (lane_block(s.body))
    b_.CreateBr(step);
  lane_loops_.pop_back();
  b_.SetInsertPoint(step);
  if (!ir::bounded_without_poll(k_, s))
    poll_cancel();
  begin_statement();
  ::llvm::Value* cur = b_.CreateLoad(ty, local_ptr(s.local));
  b_.CreateStore(b_.CreateAdd(cur, expr(s.c).v), local_ptr(s.local));
  ::llvm::BranchInst* back = b_.CreateBr(header);
  // A loop with a relaxed accumulation is the vectoriser's (its shape, VF x interleave, decides
  // the rounding; this metadata leaves it unchanged). What remains of it afterwards is the
  // scalar remainder of fewer iterations than one vector step, which runtime unrolling
  // multiplied eightfold with its own remainder loop: more compile time for nothing.
  for (const ir::Stmt& st : s.body)
    if (st.kind == ir::StmtKind::Assign && plan_.precision.accumulations.count({st.local, st.a})) {
      ::llvm::Metadata* ops[] = {
          nullptr, ::llvm::MDNode::get(
                       ctx_, {::llvm::MDString::get(ctx_, "llvm.loop.unroll.runtime.disable")})};
      ::llvm::MDNode* md = ::llvm::MDNode::getDistinct(ctx_, ops);
      md->replaceOperandWith(0, md);
      back->setMetadata(::llvm::LLVMContext::MD_loop, md);
      break;
    }
  b_.SetInsertPoint(exit);
}

} // namespace halfway::codegen::llvm::detail
