// The parts of a workgroup (partition.hpp): statements with barriers run once per workgroup
// around the parts inside them; statements lifted out of the lanes; escapes from parts.
#include "lowering.hpp"

namespace halfway::codegen::llvm::detail {
void Lowering::emit_parts(const std::vector<Part>& parts, bool top_level) {
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    switch (p.kind) {
    case Part::Kind::Lanes:
      emit_lanes(p, top_level && i + 1 == parts.size());
      break;
    case Part::Kind::If:
      emit_uniform_if(p);
      break;
    case Part::Kind::While:
      emit_uniform_while(p);
      break;
    case Part::Kind::For:
      emit_uniform_for(p);
      break;
    case Part::Kind::Uniform:
      emit_uniform_stmt(p);
      break;
    }
  }
}

void Lowering::set_uniform_lane() {
  lane_ = i32(0);
  lid_ = {i32(0), i32(0), i32(0)};
}

// A statement lifted out of the lanes (storage.hpp): once per workgroup, as lane 0.
void Lowering::emit_uniform_stmt(const Part& part) {
  set_uniform_lane();
  lane_stmt(*part.stmt);
}

// After a lane loop whose code may have left the part: return ends the workgroup, break and
// continue go to the innermost loop that contains barriers. They are uniform (verifier), so
// whichever lane set the flag speaks for all of them.
void Lowering::emit_escape_dispatch() {
  ::llvm::Value* code = b_.CreateLoad(b_.getInt32Ty(), escape_slot_);
  ::llvm::BasicBlock* next = block("part.next");
  auto* sw = b_.CreateSwitch(code, next, 3);
  sw->addCase(b_.getInt32(kEscapeReturn), group_done_);
  if (!uniform_loops_.empty()) {
    ::llvm::BasicBlock* brk = block("escape.break");
    ::llvm::BasicBlock* cont = block("escape.continue");
    sw->addCase(b_.getInt32(kEscapeBreak), brk);
    sw->addCase(b_.getInt32(kEscapeContinue), cont);
    b_.SetInsertPoint(brk);
    b_.CreateStore(i32(kEscapeNone), escape_slot_);
    b_.CreateBr(uniform_loops_.back().brk);
    b_.SetInsertPoint(cont);
    b_.CreateStore(i32(kEscapeNone), escape_slot_);
    b_.CreateBr(uniform_loops_.back().cont);
  }
  b_.SetInsertPoint(next);
}

void Lowering::emit_uniform_if(const Part& part) {
  set_uniform_lane();
  begin_statement();
  ::llvm::Value* c = bool_condition(part.stmt->a);
  ::llvm::BasicBlock* then_bb = block("uif.then");
  ::llvm::BasicBlock* else_bb = block("uif.else");
  ::llvm::BasicBlock* merge = block("uif.end");
  b_.CreateCondBr(c, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  emit_parts(part.body, false);
  b_.CreateBr(merge);
  b_.SetInsertPoint(else_bb);
  emit_parts(part.else_body, false);
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
}

void Lowering::emit_uniform_while(const Part& part) {
  ::llvm::BasicBlock* header = block("uwhile");
  ::llvm::BasicBlock* body = block("uwhile.body");
  ::llvm::BasicBlock* exit = block("uwhile.end");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  set_uniform_lane();
  begin_statement();
  b_.CreateCondBr(bool_condition(part.stmt->a), body, exit);
  b_.SetInsertPoint(body);
  ::llvm::BasicBlock* latch = block("uwhile.latch");
  uniform_loops_.push_back({exit, latch});
  emit_parts(part.body, false);
  uniform_loops_.pop_back();
  b_.CreateBr(latch);
  b_.SetInsertPoint(latch);
  poll_cancel();
  b_.CreateBr(header)->setMetadata(::llvm::LLVMContext::MD_loop,
                                   loop_hint("llvm.loop.unroll.disable"));
  b_.SetInsertPoint(exit);
}

void Lowering::emit_uniform_for(const Part& part) {
  const ir::Stmt& s = *part.stmt;
  ir::ScalarType t = k_.locals[s.local].type;
  ::llvm::Type* ty = value_type(t);
  bool is_signed = ir::info(t).is_signed;
  set_uniform_lane();
  begin_statement();
  b_.CreateStore(expr(s.a).v, local_slot_[s.local]);
  ::llvm::BasicBlock* header = block("ufor");
  ::llvm::BasicBlock* body = block("ufor.body");
  ::llvm::BasicBlock* step = block("ufor.step");
  ::llvm::BasicBlock* exit = block("ufor.end");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  set_uniform_lane();
  begin_statement();
  ::llvm::Value* v = b_.CreateLoad(ty, local_slot_[s.local]);
  ::llvm::Value* end = expr(s.b).v;
  b_.CreateCondBr(is_signed ? b_.CreateICmpSLT(v, end) : b_.CreateICmpULT(v, end), body, exit);
  b_.SetInsertPoint(body);
  uniform_loops_.push_back({exit, step});
  emit_parts(part.body, false);
  uniform_loops_.pop_back();
  b_.CreateBr(step);
  b_.SetInsertPoint(step);
  poll_cancel();
  set_uniform_lane();
  begin_statement();
  ::llvm::Value* cur = b_.CreateLoad(ty, local_slot_[s.local]);
  b_.CreateStore(b_.CreateAdd(cur, expr(s.c).v), local_slot_[s.local]);
  b_.CreateBr(header)->setMetadata(::llvm::LLVMContext::MD_loop,
                                   loop_hint("llvm.loop.unroll.disable"));
  b_.SetInsertPoint(exit);
}

} // namespace halfway::codegen::llvm::detail
