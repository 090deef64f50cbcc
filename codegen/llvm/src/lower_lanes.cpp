// The loops over lanes: nested x/y/z loops (or one flat loop per row of workgroups), the lane
// guard's narrowed range, and their loop metadata.
#include "halfway/ir/analysis/loops.hpp"
#include "lowering.hpp"

namespace halfway::codegen::llvm::detail {
// for z, for y, for x: the part's code for lane (z*Y + y)*X + x. Dimensions of extent 1 get no
// loop; the x loop is innermost and is the one the vectoriser widens.
void Lowering::emit_lanes(const Part& part, bool last) {
  LanePart lane_part{.return_sets_flag = !last};
  lane_part_ = &lane_part;
  struct Leave {
    LanePart*& current;
    ~Leave() { current = nullptr; }
  } leave{lane_part_};
  lane_loops_.clear();

  struct Loop {
    ::llvm::PHINode* index;
    ::llvm::BasicBlock* header;
  };
  std::array<Loop, 3> loops{};
  std::array<::llvm::Value*, 3> ids{i32(0), i32(0), i32(0)};
  auto open = [&](int d, ::llvm::Value* from, const char* name) {
    ::llvm::BasicBlock* pre = b_.GetInsertBlock();
    ::llvm::BasicBlock* header = block(name);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    ::llvm::PHINode* phi = b_.CreatePHI(from->getType(), 2, name + 5);
    phi->addIncoming(from, pre);
    loops[d] = {phi, header};
    return phi;
  };
  auto close = [&](int d, ::llvm::Value* to, ::llvm::MDNode* md) {
    ::llvm::Value* next = b_.CreateAdd(loops[d].index, ::llvm::ConstantInt::get(to->getType(), 1));
    loops[d].index->addIncoming(next, b_.GetInsertBlock());
    ::llvm::BasicBlock* exit = block("lanes.exit");
    auto* br = b_.CreateCondBr(b_.CreateICmpULT(next, to), loops[d].header, exit);
    if (md)
      br->setMetadata(::llvm::LLVMContext::MD_loop, md);
    b_.SetInsertPoint(exit);
  };
  // A lane guard narrows the lane range (lane_guard.hpp); the range may then be empty.
  std::optional<LaneGuard> guard;
  if (!plan_.flat || options_.grid_fits_u32)
    guard = match_lane_guard(k_, part, plan_.storage, plan_.flat);
  ::llvm::Value* x_end = i32(k_.workgroup[0]);
  ::llvm::Value* t_begin = flat_begin_;
  ::llvm::Value* t_end = flat_end_;
  ::llvm::BasicBlock* skip = nullptr;
  auto guard_range = [&](::llvm::Value* begin, ::llvm::Value* end) {
    skip = block("lanes.skip");
    ::llvm::BasicBlock* run = block("lanes.run");
    b_.CreateCondBr(b_.CreateICmpULT(begin, end), run, skip);
    b_.SetInsertPoint(run);
  };
  if (guard) {
    set_uniform_lane();
    begin_statement();
    ::llvm::Value* bound = guard->first ? i32(1) : expr(guard->bound).v;
    if (plan_.flat) {
      t_end =
          b_.CreateBinaryIntrinsic(::llvm::Intrinsic::umin, flat_end_,
                                   b_.CreateBinaryIntrinsic(::llvm::Intrinsic::umax, flat_begin_,
                                                            b_.CreateZExt(bound, b_.getInt64Ty())));
      guard_range(t_begin, t_end);
    } else {
      x_end = b_.CreateBinaryIntrinsic(::llvm::Intrinsic::umin, x_end, bound);
      guard_range(i32(0), x_end);
    }
  }
  if (!guard && !plan_.flat) {
    if (JamPlan jam = plan_jam(part); jam.factor > 1) {
      if (jam.lockstep)
        emit_lanes_lockstep(part, jam);
      else
        emit_lanes_jammed(part, jam);
      return;
    }
  }
  // The statements of one lane (the guard's body, or the part), ending at the lane's `done`
  // block, where the caller closes the lane loop.
  auto lane_code = [&] {
    lane_part_->done = block("lane.done");
    bool reaches = true;
    if (guard) {
      reaches = lane_block(guard->branch->body);
    } else {
      for (const ir::Stmt* s : part.stmts)
        if (!(reaches = lane_stmt(*s)))
          break;
    }
    if (reaches && !b_.GetInsertBlock()->getTerminator())
      b_.CreateBr(lane_part_->done);
    b_.SetInsertPoint(lane_part_->done);
  };
  if (plan_.flat) {
    // t = group_x * X + lane over the row; global_id(0) is t modulo 2^32, as the u32
    // arithmetic group_x * X + lane would give.
    ::llvm::Value* t = open(0, t_begin, "lane.t");
    ::llvm::Value* x = i64(k_.workgroup[0]);
    ::llvm::Value* gx = b_.CreateUDiv(t, x);
    lane_ = b_.CreateTrunc(b_.CreateURem(t, x), b_.getInt32Ty(), "lane");
    lid_ = {lane_, i32(0), i32(0)};
    flat_gid0_ = b_.CreateTrunc(t, b_.getInt32Ty(), "gid0");
    flat_group_x_ = b_.CreateTrunc(gx, b_.getInt32Ty());
    group_linear_ = b_.CreateAdd(flat_row_group_, b_.CreateSub(gx, flat_row_gx_));
    lane_code();
    close(0, t_end, lane_loop_metadata(part));
  } else {
    if (k_.workgroup[2] > 1)
      ids[2] = open(2, i32(0), "lane.z");
    if (k_.workgroup[1] > 1)
      ids[1] = open(1, i32(0), "lane.y");
    auto at_x = [&](::llvm::Value* x) {
      ids[0] = x;
      lid_ = ids;
      lane_ = linear_lane(ids);
    };
    auto x_loop = [&] {
      at_x(open(0, i32(0), "lane.x"));
      lane_code();
      close(0, x_end, lane_loop_metadata(part));
    };
    std::optional<EdgeGuards> edges;
    if (!guard)
      edges = match_edge_guards(k_, part, plan_.storage);
    if (edges) {
      // Two versions of the row (edge_guard.hpp): the guards taken as true when the test proves
      // every lane of the row takes them, else the general code.
      ::llvm::Value* all = b_.getTrue();
      edge_lets_ = &edges->lets;
      // Every guard's condition at lane x, and the lane operands' values there.
      auto test_at = [&](uint32_t x) {
        at_x(i32(x));
        begin_statement();
        for (const ir::Stmt* s : edges->ifs)
          all = b_.CreateAnd(all, bool_condition(s->a));
        std::vector<::llvm::Value*> operands;
        for (ir::ExprId op : edges->lane_operands)
          operands.push_back(expr(op).v);
        return operands;
      };
      const std::vector<::llvm::Value*> first = test_at(0);
      const std::vector<::llvm::Value*> last = test_at(k_.workgroup[0] - 1);
      for (size_t i = 0; i < first.size(); ++i) // no operand wraps along the row
        all = b_.CreateAnd(all, b_.CreateICmpUGE(last[i], first[i]));
      edge_lets_ = nullptr;
      begin_statement();
      ::llvm::BasicBlock* fast = block("edge.inside");
      ::llvm::BasicBlock* general = block("edge.general");
      ::llvm::BasicBlock* join = block("edge.join");
      b_.CreateCondBr(all, fast, general);
      b_.SetInsertPoint(fast);
      assumed_true_.insert(edges->ifs.begin(), edges->ifs.end());
      x_loop();
      assumed_true_.clear();
      b_.CreateBr(join);
      b_.SetInsertPoint(general);
      x_loop();
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
    } else {
      x_loop();
    }
    if (k_.workgroup[1] > 1)
      close(1, i32(k_.workgroup[1]), nullptr);
    if (k_.workgroup[2] > 1)
      close(2, i32(k_.workgroup[2]), nullptr);
  }
  if (skip) {
    b_.CreateBr(skip);
    b_.SetInsertPoint(skip);
  }
  lane_part_ = nullptr; // the code after the lane loop is uniform
  if (lane_part.may_fail) {
    ::llvm::BasicBlock* next = block("part.ok");
    b_.CreateCondBr(b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), failed_slot_), i32(0)),
                    error_exit_, next);
    b_.SetInsertPoint(next);
  }
  if (lane_part.escapes)
    emit_escape_dispatch();
}

// Lanes in step (unroll and jam of the lane loop). A part whose work is one for loop, whose body
// is straight-line code without stores, is a chain of dependent operations per lane (a strict
// sum: each add waits for the previous one) that LLVM cannot vectorise across the loop, and the
// out-of-order core overlaps only a few lanes' chains. Running `factor` consecutive lanes' bodies
// in one loop gives it that many independent chains. Each lane's operations and their order are
// unchanged; only the interleaving of different lanes' loads with each other moves, and stores
// run after the loop, lane by lane.
//
// The shapes: straight-line statements (no stores), then the loop or an `if` with a uniform
// condition and no else around it (straight-line statements without stores before and after the
// loop inside it: the GEMV's `if (row < rows) { for ... }`), then straight-line statements with
// stores. When the loop's bounds are the same in every lane, the lanes share one loop variable;
// otherwise (a split-k loop `for j = lid to n step 64`) each lane has its own, the lanes run in
// step while every lane's condition holds, and then each lane finishes its own iterations alone.
// Relaxed accumulations are left alone: the vectoriser already widens their loop, and its shape
// decides their rounding. With several rows of lanes (2-D and 3-D workgroups) the lanes in step
// are consecutive rows at one x, and the x loop, stepping by 1, stays the vectorised one; there a
// relaxed accumulation may run in step too.
Lowering::JamPlan Lowering::plan_jam(const Part& part) {
  JamPlan none;
  if (options_.records_errors())
    return none;
  unsigned x = k_.workgroup[0];
  // Rows: with more than one row of lanes, `factor` consecutive rows run in step, and the x loop
  // keeps step 1 for the vectoriser.
  const bool rows = k_.workgroup[1] > 1 || k_.workgroup[2] > 1;
  // The most lanes (1-D) or rows in step, a power of two dividing their count.
  auto largest = [](unsigned count, unsigned most) {
    unsigned f = most;
    while (f > 1 && count % f != 0)
      f /= 2;
    return f;
  };
  const unsigned factor = rows ? largest(k_.workgroup[1], 4) : largest(x, 8);
  if (factor == 1)
    return none;
  auto local_ok = [&](uint32_t l) {
    return plan_.storage.storage[l] == LocalStorage::Remat ||
           plan_.storage.storage[l] == LocalStorage::LaneScalar ||
           plan_.storage.storage[l] == LocalStorage::PerLane;
  };
  auto simple = [&](const ir::Stmt& s, bool stores) {
    switch (s.kind) {
    case ir::StmtKind::Let:
    case ir::StmtKind::Assign:
      if (!local_ok(s.local))
        return false;
      return s.kind == ir::StmtKind::Let || !plan_.precision.accumulations.count({s.local, s.a});
    case ir::StmtKind::Store:
      return stores;
    default:
      return false;
    }
  };
  // The one for loop of an if's body, everything else simple and without stores.
  auto find_loop = [&](const ir::Body& stmts) -> const ir::Stmt* {
    const ir::Stmt* loop = nullptr;
    for (const ir::Stmt& s : stmts) {
      if (s.kind == ir::StmtKind::For && !loop)
        loop = &s;
      else if (!simple(s, false))
        return nullptr;
    }
    return loop;
  };
  JamPlan jam;
  jam.factor = factor;
  jam.rows = rows;
  const ir::Stmt* holder = nullptr;
  for (const ir::Stmt* s : part.stmts) {
    if (!holder && (s->kind == ir::StmtKind::For || s->kind == ir::StmtKind::If)) {
      holder = s;
      continue;
    }
    if (!simple(*s, holder != nullptr))
      return none;
  }
  if (!holder)
    return none;
  if (holder->kind == ir::StmtKind::If) {
    if (!holder->else_body.empty() || !uniform_expr(holder->a, 0))
      return none;
    jam.wrapper = holder;
    jam.loop = find_loop(holder->body);
  } else {
    jam.loop = holder;
  }
  if (!jam.loop || plan_.storage.storage[jam.loop->local] != LocalStorage::LaneScalar)
    return none;
  // The loop variable is set by the loop alone.
  auto sets_var = [&](const ir::Stmt& s) { return &s != jam.loop && s.local == jam.loop->local; };
  for (const ir::Stmt* s : part.stmts)
    if (sets_var(*s))
      return none;
  if (jam.wrapper)
    for (const ir::Stmt& s : jam.wrapper->body)
      if (sets_var(s))
        return none;
  bool accumulates = false;
  bool body_stores = false; // stores, or ifs (an epilogue's `if (i < len(y))` around its store)
  // Simple statements, stores, and ifs of them (lockstep only, below), never setting the loop
  // variable.
  auto body_ok = [&](const auto& self, const ir::Stmt& s) -> bool {
    if (s.kind == ir::StmtKind::If) {
      body_stores = true;
      for (const auto* branch : {&s.body, &s.else_body})
        for (const ir::Stmt& t : *branch)
          if (!self(self, t))
            return false;
      return true;
    }
    if (s.kind == ir::StmtKind::Store) {
      body_stores = true;
      return true;
    }
    return s.local != jam.loop->local && simple(s, false);
  };
  for (const ir::Stmt& s : jam.loop->body) {
    if (s.kind == ir::StmtKind::Assign && s.local != jam.loop->local && local_ok(s.local) &&
        plan_.precision.accumulations.count({s.local, s.a})) {
      accumulates = true;
      continue;
    }
    if (!body_ok(body_ok, s))
      return none;
  }
  const bool uniform_rest = uniform_expr(jam.loop->b, 0) && uniform_expr(jam.loop->c, 0);
  jam.shared_var = uniform_expr(jam.loop->a, 0) && uniform_rest;
  jam.lockstep = !rows && uniform_rest && starts_at_lane(jam.loop->a, 0) && x % 16 == 0;
  // A relaxed accumulation in step: only where lanes are the vectorised dimension, in lockstep
  // and across rows (elsewhere the vectoriser widens the loop itself, and its shape decides the
  // rounding).
  if (accumulates && !jam.lockstep && !rows)
    return none;
  // Stores and ifs in the loop: only in lockstep. It runs iteration i of every lane before
  // iteration i + 1 of any while all lanes go on, as the interpreter does, and then lane after
  // lane; each lane's own loads and stores keep their order, so only a kernel racing between lanes
  // of one part (unspecified on a GPU) could tell it from lane after lane. The per-lane strided
  // loops with exp and a store (group_norm_silu's and softmax's last loops) then have the lanes as
  // the vectorised loop instead of running each lane's exp scalar.
  if (body_stores && !jam.lockstep)
    return none;
  jam.stores = body_stores && !accumulates;
  return jam;
}

// local_id(0) or local_id(0) + u with u uniform: the start of a split-k loop, where consecutive
// lanes start at consecutive values.
bool Lowering::starts_at_lane(ir::ExprId id, int depth) {
  if (depth > 32)
    return false;
  const ir::Expr& e = k_.expr(id);
  switch (e.op) {
  case ir::Op::LocalId:
    return e.imm == 0;
  case ir::Op::LocalGet:
    return plan_.storage.storage[e.ref] == LocalStorage::Remat &&
           starts_at_lane(plan_.storage.remat[e.ref], depth + 1);
  case ir::Op::Add:
    return (starts_at_lane(e.args[0], depth + 1) && uniform_expr(e.args[1], depth + 1)) ||
           (uniform_expr(e.args[0], depth + 1) && starts_at_lane(e.args[1], depth + 1));
  default:
    return false;
  }
}

// True when the expression has the same value in every lane of a workgroup (and cannot fail).
bool Lowering::uniform_expr(ir::ExprId id, int depth) {
  if (depth > 32)
    return false;
  const ir::Expr& e = k_.expr(id);
  switch (e.op) {
  case ir::Op::Const:
  case ir::Op::ParamGet:
  case ir::Op::GroupId:
  case ir::Op::GroupSize:
  case ir::Op::NumGroups:
  case ir::Op::BufferLen:
    return true;
  case ir::Op::LocalGet:
    if (plan_.storage.storage[e.ref] == LocalStorage::Workgroup)
      return true;
    return plan_.storage.storage[e.ref] == LocalStorage::Remat &&
           uniform_expr(plan_.storage.remat[e.ref], depth + 1);
  case ir::Op::Add:
  case ir::Op::Sub:
  case ir::Op::Mul:
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Min:
  case ir::Op::Max:
  case ir::Op::Eq:
  case ir::Op::Ne:
  case ir::Op::Lt:
  case ir::Op::Le:
  case ir::Op::Gt:
  case ir::Op::Ge:
    return !ir::is_float(k_.expr(e.args[0]).type) && uniform_expr(e.args[0], depth + 1) &&
           uniform_expr(e.args[1], depth + 1);
  case ir::Op::Clamp:
    return !ir::is_float(e.type) && uniform_expr(e.args[0], depth + 1) &&
           uniform_expr(e.args[1], depth + 1) && uniform_expr(e.args[2], depth + 1);
  case ir::Op::GlobalId:
  case ir::Op::LocalId:
  case ir::Op::Load:
  case ir::Op::Convert:
  case ir::Op::Bitcast:
  case ir::Op::Pack:
  case ir::Op::Unpack:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Neg:
  case ir::Op::Abs:
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
  case ir::Op::Not:
  case ir::Op::Shl:
  case ir::Op::Shr:
  case ir::Op::Select:
    return false;
  }
  ir::invalid_op(e.op);
}

// The statements of a jammed part around its loop: before and after the loop (or its if), and
// inside the if, before and after the loop.
Lowering::JamStatements Lowering::jam_statements(const Part& part, const JamPlan& jam) {
  JamStatements out;
  const ir::Stmt* holder = jam.wrapper ? jam.wrapper : jam.loop;
  bool seen = false;
  for (const ir::Stmt* s : part.stmts) {
    if (s == holder)
      seen = true;
    else
      (seen ? out.after : out.before).push_back(s);
  }
  if (jam.wrapper) {
    seen = false;
    for (const ir::Stmt& s : jam.wrapper->body) {
      if (&s == jam.loop)
        seen = true;
      else
        (seen ? out.inner_after : out.inner_before).push_back(&s);
    }
  }
  return out;
}

void Lowering::emit_lanes_jammed(const Part& part, const JamPlan& jam) {
  const unsigned factor = jam.factor;
  const ir::Stmt* loop = jam.loop;
  // Named references, not a structured binding: lambdas below capture them (clang 14 cannot
  // capture bindings).
  const JamStatements stmts = jam_statements(part, jam);
  const auto &before = stmts.before, &after = stmts.after;
  const auto &inner_before = stmts.inner_before, &inner_after = stmts.inner_after;
  // Lane k's scalars: their own slots; one loop variable for all when the bounds are uniform.
  std::vector<std::vector<::llvm::Value*>> slots(factor, local_slot_);
  for (unsigned k = 1; k < factor; ++k)
    for (uint32_t l = 0; l < k_.locals.size(); ++l)
      if (plan_.storage.storage[l] == LocalStorage::LaneScalar &&
          (l != loop->local || !jam.shared_var))
        slots[k][l] = entry_alloca(value_type(k_.locals[l].type), k_.locals[l].name.c_str());
  std::vector<::llvm::Value*> saved = local_slot_;

  // Across rows: z and y loops around the x loop, y stepping by `factor`.
  struct Outer {
    ::llvm::PHINode* index;
    ::llvm::BasicBlock* header;
    unsigned step, end;
  };
  std::vector<Outer> outer;
  auto open = [&](const char* name, unsigned step, unsigned end) {
    ::llvm::BasicBlock* from = b_.GetInsertBlock();
    ::llvm::BasicBlock* h = block(name);
    b_.CreateBr(h);
    b_.SetInsertPoint(h);
    ::llvm::PHINode* phi = b_.CreatePHI(b_.getInt32Ty(), 2, name + 5);
    phi->addIncoming(i32(0), from);
    outer.push_back({phi, h, step, end});
    return phi;
  };
  ::llvm::Value* z = i32(0);
  ::llvm::Value* y0 = i32(0);
  if (jam.rows) {
    if (k_.workgroup[2] > 1)
      z = open("lane.z", 1, k_.workgroup[2]);
    y0 = open("lane.y", factor, k_.workgroup[1]);
  }
  ::llvm::BasicBlock* pre = b_.GetInsertBlock();
  ::llvm::BasicBlock* header = block("lane.x");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  ::llvm::PHINode* first = b_.CreatePHI(b_.getInt32Ty(), 2, "x");
  first->addIncoming(i32(0), pre);
  std::vector<std::array<::llvm::Value*, 3>> ids(factor);
  std::vector<::llvm::Value*> lanes(factor);
  for (unsigned k = 0; k < factor; ++k) {
    if (jam.rows) {
      ids[k] = {first, k == 0 ? y0 : b_.CreateAdd(y0, i32(k)), z};
      lanes[k] = linear_lane(ids[k]);
    } else {
      lanes[k] = k == 0 ? first : b_.CreateAdd(first, i32(k), "lane");
      ids[k] = {lanes[k], i32(0), i32(0)};
    }
  }
  auto enter = [&](unsigned k) {
    lane_ = lanes[k];
    lid_ = ids[k];
    local_slot_ = slots[k];
  };
  auto each_lane = [&](const std::vector<const ir::Stmt*>& stmts) {
    for (unsigned k = 0; k < factor; ++k) {
      enter(k);
      for (const ir::Stmt* s : stmts)
        lane_stmt(*s);
    }
  };
  lane_part_->done = block("lane.done");
  each_lane(before);
  ::llvm::BasicBlock* join = nullptr;
  if (jam.wrapper) {
    // The condition is uniform: lane 0's value is every lane's.
    enter(0);
    begin_statement();
    ::llvm::BasicBlock* then_bb = block("if.then");
    join = block("if.end");
    b_.CreateCondBr(bool_condition(jam.wrapper->a), then_bb, join);
    b_.SetInsertPoint(then_bb);
    each_lane(inner_before);
  }
  ir::ScalarType t = k_.locals[loop->local].type;
  ::llvm::Type* ty = value_type(t);
  bool is_signed = ir::info(t).is_signed;
  const unsigned vars = jam.shared_var ? 1 : factor;
  for (unsigned k = 0; k < vars; ++k) {
    enter(k);
    begin_statement();
    store_local(loop->local, expr(loop->a));
  }
  ::llvm::BasicBlock* for_header = block("for");
  ::llvm::BasicBlock* body = block("for.body");
  ::llvm::BasicBlock* step = block("for.step");
  ::llvm::BasicBlock* exit = block("for.end");
  b_.CreateBr(for_header);
  b_.SetInsertPoint(for_header);
  // In step while every lane's loop goes on.
  ::llvm::Value* go = nullptr;
  for (unsigned k = 0; k < vars; ++k) {
    enter(k);
    begin_statement();
    ::llvm::Value* v = b_.CreateLoad(ty, local_ptr(loop->local));
    ::llvm::Value* end = expr(loop->b).v;
    ::llvm::Value* c = is_signed ? b_.CreateICmpSLT(v, end) : b_.CreateICmpULT(v, end);
    go = go ? b_.CreateAnd(go, c) : c;
  }
  b_.CreateCondBr(go, body, exit);
  b_.SetInsertPoint(body);
  for (unsigned k = 0; k < factor; ++k) {
    enter(k);
    lane_block(loop->body);
  }
  b_.CreateBr(step);
  b_.SetInsertPoint(step);
  if (!ir::bounded_without_poll(k_, *loop))
    poll_cancel();
  for (unsigned k = 0; k < vars; ++k) {
    enter(k);
    begin_statement();
    ::llvm::Value* cur = b_.CreateLoad(ty, local_ptr(loop->local));
    b_.CreateStore(b_.CreateAdd(cur, expr(loop->c).v), local_ptr(loop->local));
  }
  auto* back = b_.CreateBr(for_header);
  // Across rows the x loop is the one to vectorise, which LLVM does to innermost loops only: a
  // short loop with constant bounds (matmul_tiled's 16 steps through its tiles) is unrolled
  // whole first, as LLVM does by itself for one row's body but not for `factor` rows'.
  if (jam.rows && jam.shared_var)
    if (auto trips = ir::constant_trips(k_, *loop); trips && *trips * factor <= 128)
      back->setMetadata(::llvm::LLVMContext::MD_loop, loop_hint("llvm.loop.unroll.full"));
  b_.SetInsertPoint(exit);
  // Lanes with iterations left finish them alone, each in its own order.
  if (!jam.shared_var)
    for (unsigned k = 0; k < factor; ++k) {
      enter(k);
      lane_for_rest(*loop);
    }
  if (jam.wrapper) {
    each_lane(inner_after);
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }
  each_lane(after);
  b_.CreateBr(lane_part_->done);
  b_.SetInsertPoint(lane_part_->done);
  local_slot_ = saved;
  ::llvm::Value* next = b_.CreateAdd(first, i32(jam.rows ? 1 : factor));
  first->addIncoming(next, b_.GetInsertBlock());
  ::llvm::BasicBlock* done = block("lanes.exit");
  auto* br = b_.CreateCondBr(b_.CreateICmpULT(next, i32(k_.workgroup[0])), header, done);
  br->setMetadata(::llvm::LLVMContext::MD_loop, lane_loop_metadata(part, false, jam.rows ? 2 : 0));
  b_.SetInsertPoint(done);
  for (auto o = outer.rbegin(); o != outer.rend(); ++o) {
    ::llvm::Value* n = b_.CreateAdd(o->index, i32(o->step));
    o->index->addIncoming(n, b_.GetInsertBlock());
    ::llvm::BasicBlock* exit = block("lanes.exit");
    b_.CreateCondBr(b_.CreateICmpULT(n, i32(o->end)), o->header, exit);
    b_.SetInsertPoint(exit);
  }
}

// Lanes in lockstep: the split-k shape `for j = lid + u to n step s` (u, n, s uniform) runs as
// the GPU runs it, one iteration of every lane at a time, with the lanes the inner loop:
//
//   for each lane: the statements before the loop (and inside the uniform if, before it)
//   i = 0; while every lane's j = start + i * s is below n:
//     for each lane: j = start + i * s; the body      <- the vectoriser widens this lane loop
//     i = i + 1
//   for each lane: j = start + i * s; its remaining iterations alone; the statements after
//
// Consecutive lanes then read consecutive chunks (row-major weights: an interleaved access the
// vectoriser turns into wide loads and shuffles), and each lane's operations and their order are
// its own: j after i steps of s is start + i * s in wrapping arithmetic, the sum of i steps. The
// part's lane scalars live in per-lane arrays while it runs, since three lane loops share them.
void Lowering::emit_lanes_lockstep(const Part& part, const JamPlan& jam) {
  const ir::Stmt* loop = jam.loop;
  // Named references, not a structured binding: lambdas below capture them (clang 14 cannot
  // capture bindings).
  const JamStatements stmts = jam_statements(part, jam);
  const auto &before = stmts.before, &after = stmts.after;
  const auto &inner_before = stmts.inner_before, &inner_after = stmts.inner_after;
  std::vector<::llvm::Value*> saved_slots = local_slot_;
  lane_part_->lane_scalars_per_lane = true;
  for (uint32_t l = 0; l < k_.locals.size(); ++l)
    if (plan_.storage.storage[l] == LocalStorage::LaneScalar) {
      local_slot_[l] =
          entry_alloca(::llvm::ArrayType::get(value_type(k_.locals[l].type), plan_.lanes),
                       k_.locals[l].name.c_str());
    }
  const unsigned lanes = k_.workgroup[0];
  // One lane loop over [0, lanes) running `fn` for each lane; `widen`: the lockstep body's when it
  // stores (lane_loop_metadata).
  auto lane_loop = [&](const auto& fn, bool widen = false) {
    ::llvm::BasicBlock* pre = b_.GetInsertBlock();
    ::llvm::BasicBlock* header = block("lane.x");
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    ::llvm::PHINode* x = b_.CreatePHI(b_.getInt32Ty(), 2, "x");
    x->addIncoming(i32(0), pre);
    lane_ = x;
    lid_ = {x, i32(0), i32(0)};
    fn();
    ::llvm::Value* next = b_.CreateAdd(x, i32(1));
    x->addIncoming(next, b_.GetInsertBlock());
    ::llvm::BasicBlock* done = block("lanes.exit");
    auto* br = b_.CreateCondBr(b_.CreateICmpULT(next, i32(lanes)), header, done);
    br->setMetadata(::llvm::LLVMContext::MD_loop, lane_loop_metadata(part, widen));
    b_.SetInsertPoint(done);
  };
  auto run = [&](const std::vector<const ir::Stmt*>& stmts) {
    for (const ir::Stmt* s : stmts)
      lane_stmt(*s);
  };
  ir::ScalarType t = k_.locals[loop->local].type;
  ::llvm::Type* ty = value_type(t);
  // j = start + i * step for the current lane (the bounds are pure: evaluating them again is
  // evaluating them once).
  auto var_at = [&](::llvm::Value* i) {
    begin_statement();
    ::llvm::Value* j = b_.CreateAdd(expr(loop->a).v, b_.CreateMul(i, expr(loop->c).v));
    store_local(loop->local, {j, NanState::NoNan});
    return j;
  };
  lane_part_->done = block("lane.done"); // unused: the statements here cannot leave the part
  ::llvm::Value* cond = nullptr;
  if (jam.wrapper) {
    set_uniform_lane();
    begin_statement();
    cond = bool_condition(jam.wrapper->a);
  }
  lane_loop([&] {
    run(before);
    if (cond) {
      ::llvm::BasicBlock* then_bb = block("if.then");
      ::llvm::BasicBlock* join = block("if.end");
      b_.CreateCondBr(cond, then_bb, join);
      b_.SetInsertPoint(then_bb);
      run(inner_before);
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
    }
  });
  ::llvm::BasicBlock* skip = nullptr;
  if (cond) {
    ::llvm::BasicBlock* then_bb = block("if.then");
    skip = block("if.end");
    b_.CreateCondBr(cond, then_bb, skip);
    b_.SetInsertPoint(then_bb);
  }
  // Whether every lane's j at step i is below the end. The start is local_id(0) + u, so the loop
  // variable is a u32 (the verifier gives it its start's type) and lane l's j is j0 + l
  // (wrapping), j0 lane 0's: every lane's j is below n exactly when j0 < n and n - j0 >= lanes
  // (if j0 < n but n - j0 < lanes, lane n - j0 reaches n without wrapping). One compare per step
  // instead of a loop over the lanes (29 of the E5M2 GEMV step's ~540 cycles in llvm-mca on an
  // AVX2 Zen host).
  auto all_go = [&](::llvm::Value* i) {
    set_uniform_lane();
    begin_statement();
    ::llvm::Value* j0 = b_.CreateAdd(expr(loop->a).v, b_.CreateMul(i, expr(loop->c).v));
    ::llvm::Value* end = expr(loop->b).v;
    return b_.CreateAnd(
        b_.CreateICmpULT(j0, end),
        b_.CreateICmpUGE(b_.CreateSub(end, j0), ::llvm::ConstantInt::get(ty, lanes)));
  };
  ::llvm::BasicBlock* pre = b_.GetInsertBlock();
  ::llvm::BasicBlock* header = block("lockstep");
  ::llvm::BasicBlock* body = block("lockstep.body");
  ::llvm::BasicBlock* exit = block("lockstep.end");
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  ::llvm::PHINode* i = b_.CreatePHI(ty, 2, "i");
  i->addIncoming(::llvm::ConstantInt::get(ty, 0), pre);
  b_.CreateCondBr(all_go(i), body, exit);
  b_.SetInsertPoint(body);
  lane_loop(
      [&] {
        var_at(i);
        lane_block(loop->body);
      },
      jam.stores);
  poll_cancel();
  i->addIncoming(b_.CreateAdd(i, ::llvm::ConstantInt::get(ty, 1)), b_.GetInsertBlock());
  auto* back = b_.CreateBr(header);
  back->setMetadata(::llvm::LLVMContext::MD_loop, loop_hint("llvm.loop.unroll.disable"));
  b_.SetInsertPoint(exit);
  lane_loop([&] {
    var_at(i);
    lane_for_rest(*loop);
    run(inner_after);
  });
  if (skip) {
    b_.CreateBr(skip);
    b_.SetInsertPoint(skip);
  }
  lane_loop([&] { run(after); });
  lane_part_->done->eraseFromParent();
  lane_part_->done = nullptr;
  local_slot_ = saved_slots;
  lane_part_->lane_scalars_per_lane = false;
}

// Metadata that keeps LLVM from unrolling a loop of the kernel's structure (the loop over
// workgroups, loops containing barriers): each iteration holds whole lane loops, so unrolling
// only multiplies code (and compile time).
::llvm::Value* Lowering::linear_lane(const std::array<::llvm::Value*, 3>& id) {
  return b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(id[2], i32(k_.workgroup[1])), id[1]),
                                   i32(k_.workgroup[0])),
                      id[0], "lane");
}

::llvm::MDNode* Lowering::loop_hint(const char* name) {
  ::llvm::Metadata* ops[] = {nullptr,
                             ::llvm::MDNode::get(ctx_, {::llvm::MDString::get(ctx_, name)})};
  ::llvm::MDNode* md = ::llvm::MDNode::getDistinct(ctx_, ops);
  md->replaceOperandWith(0, md);
  return md;
}

// Whether the part divides integers under control flow by a divisor LLVM may take as the same
// in every lane: LLVM 19's vectoriser predicates a division by a non-constant divisor in a
// conditional block, and when the division's operands are the same for every lane it computes
// it once, under the first lane's mask only, so that every lane gets poison when the first lane
// has left (returned, or took the other branch). Found by the campaign of seed 20261202 (kernel
// 8600: `rem(and(group_id(0), len(b)), len(b))` after an early return); README, "LLVM 19: uniform
// predicated division". A division whose operands depend on the lane (`div(t, hw)` with t
// starting at local_id(0)) is computed lane by lane and is not affected, so it does not stop
// vectorisation; "the same in every lane" is the uniformity analysis under
// LoadLevel::Address, which also counts loads at one address and ids of one-lane dimensions.
static bool divides_under_control(const ir::Kernel& k, const Part& part,
                                  const ir::UniformityAnalysis& uniformity) {
  bool branches = false, divides = false;
  std::vector<ir::ExprId> stack;
  auto visit = [&](const ir::Stmt& s) {
    branches = branches || s.kind == ir::StmtKind::If || s.kind == ir::StmtKind::While ||
               s.kind == ir::StmtKind::For || s.kind == ir::StmtKind::Return ||
               s.kind == ir::StmtKind::Break || s.kind == ir::StmtKind::Continue;
    for (ir::ExprId root : ir::stmt_exprs(s))
      stack.push_back(root);
  };
  for (const ir::Stmt* top : part.stmts) {
    visit(*top);
    ir::for_each_stmt(top->body, visit);
    ir::for_each_stmt(top->else_body, visit);
  }
  while (!stack.empty() && !divides) {
    const ir::ExprId id = stack.back();
    stack.pop_back();
    if (id == ir::kNone)
      continue;
    const ir::Expr& e = k.expr(id);
    divides = (e.op == ir::Op::Div || e.op == ir::Op::Rem) && ir::is_int(e.type) &&
              uniformity.expr(id).level != ir::Uniformity::Lane;
    for (int i = 0; i < e.nargs; ++i)
      stack.push_back(e.args[i]);
  }
  return branches && divides;
}

// Loop metadata of a lane loop. Lane loops are never unrolled (the vectoriser still interleaves
// them): their trip counts are constants, so LLVM would unroll every one of them fully, which
// doubled compile time for barrier-heavy kernels and gained nothing measurable; loops inside a
// lane's code keep their unrolling. Lane loops that narrow to f16 get the width hint
// (options.hpp). Lane loops that divide integers under control flow by a value LLVM may take as
// uniform are not vectorised (divides_under_control). The lane loop of a lockstep body that
// stores (`widen`, emit_lanes_lockstep: an epilogue) is always vectorised: on AVX2 hosts LLVM
// 19's cost model refuses it when the body gathers (gamma[c] in a group norm) and masks a store,
// although the vector loop is faster: the fused group_norm+silu kernel ran 13.3 ms scalar and
// 7.1 ms vectorised on a Zen AVX2 host (bench/fusion, 1x320x64x64). Lockstep bodies that
// accumulate (the GEMVs) keep the cost model's choice: forced, the relaxed GEMV ran 10.7 ms
// instead of 6.0 on that host.
::llvm::MDNode* Lowering::lane_loop_metadata(const Part& part, bool widen, unsigned interleave) {
  std::vector<::llvm::Metadata*> ops = {nullptr};
  auto add = [&](const char* name, ::llvm::Constant* value) {
    ::llvm::Metadata* pair[] = {::llvm::MDString::get(ctx_, name),
                                ::llvm::ConstantAsMetadata::get(value)};
    ops.push_back(::llvm::MDNode::get(ctx_, pair));
  };
  ops.push_back(
      ::llvm::MDNode::get(ctx_, {::llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
  unsigned width = options_.narrowing_vector_width;
  // Without AVX-512, F16C converts 8 lanes at a time: act<f16> ran 54 ms with the cost model's
  // 4 and 32-37 ms with 8 on a Zen AVX2 host, but the fp8 GEMVs, which only widen, ran 16-18 ms
  // with 4 and 28-30 ms with 8, so only code that rounds to f16 gets it there.
  if (width == 0)
    width = target_.avx512 ? 16 : target_.f16c && lane_part_->rounds_to_f16 ? 8 : 1;
  if (divides_under_control(k_, part, plan_.address_uniformity)) {
    add("llvm.loop.vectorize.enable", b_.getFalse());
  } else if (lane_part_->narrows_f16 && width > 1 && !options_.records_errors()) {
    add("llvm.loop.vectorize.enable", b_.getTrue());
    add("llvm.loop.vectorize.width", b_.getInt32(width));
  } else if (widen && !options_.records_errors()) {
    add("llvm.loop.vectorize.enable", b_.getTrue());
  }
  if (interleave)
    add("llvm.loop.interleave.count", b_.getInt32(interleave));
  ::llvm::MDNode* md = ::llvm::MDNode::getDistinct(ctx_, ops);
  md->replaceOperandWith(0, md);
  return md;
}

} // namespace halfway::codegen::llvm::detail
