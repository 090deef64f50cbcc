// Statements in lockstep: each statement runs once for all active lanes; if, while and for
// narrow the mask, break/continue/return take lanes out of it until their loop (or the batch)
// ends, and lanes stopped by an error leave every mask after the statement that stopped them.
#include "accum.hpp"
#include "exact.hpp"
#include "exec.hpp"
#include "interval.hpp"
#include "slots.hpp"

#include <cstring>
#include <type_traits>

namespace halfway::interp {

namespace {

// Copies src to dst on the active lanes.
template <class T> void masked_copy(T* dst, const T* src, const LaneMask& m) {
  const uint8_t* on = m.data();
  for (uint32_t i = 0, n = m.size(); i < n; ++i)
    dst[i] = on[i] ? src[i] : dst[i];
}

// `for` compares and steps its integer local in the local's own type: S is the C++ type of the
// compare, the step wraps in the unsigned type of S's width. Both run over whole lane arrays so
// that they vectorise; lanes the mask leaves out are compared (their result is masked off) but
// never stepped.
struct LoopOps {
  void (*less)(const void* local, const void* bound, uint8_t* out, uint32_t n);
  void (*step)(void* local, const void* step, const LaneMask& m);
};

template <class S> LoopOps loop_ops() {
  using U = std::make_unsigned_t<S>;
  return {[](const void* local, const void* bound, uint8_t* out, uint32_t n) {
            const S* a = static_cast<const S*>(local);
            const S* b = static_cast<const S*>(bound);
            for (uint32_t i = 0; i < n; ++i)
              out[i] = a[i] < b[i];
          },
          [](void* local, const void* step, const LaneMask& m) {
            U* a = static_cast<U*>(local);
            const U* c = static_cast<const U*>(step);
            const uint8_t* on = m.data();
            if (m.all()) {
              for (uint32_t i = 0, n = m.size(); i < n; ++i)
                a[i] = static_cast<U>(a[i] + c[i]);
              return;
            }
            for (uint32_t i = 0, n = m.size(); i < n; ++i)
              a[i] = on[i] ? static_cast<U>(a[i] + c[i]) : a[i];
          }};
}

LoopOps loop_ops_of(ir::ScalarType t) {
  switch (t) {
  case ir::ScalarType::I8:
    return loop_ops<int8_t>();
  case ir::ScalarType::I16:
    return loop_ops<int16_t>();
  case ir::ScalarType::I32:
    return loop_ops<int32_t>();
  case ir::ScalarType::I64:
    return loop_ops<int64_t>();
  default: // unsigned slots hold the value itself
    switch (slot_bytes(t)) {
    case 1:
      return loop_ops<uint8_t>();
    case 2:
      return loop_ops<uint16_t>();
    case 4:
      return loop_ops<uint32_t>();
    default:
      return loop_ops<uint64_t>();
    }
  }
}

} // namespace

void Exec::eval(const std::vector<uint32_t>& nodes, const LaneMask& m) {
  mask_ = &m;
  for (uint32_t id : nodes) {
    const Node& n = p_.nodes[id];
    n.eval(*this, n);
    if (iv_)
      interval_node(*this, n);
  }
}

void Exec::block(const std::vector<CStmt>& stmts, LaneMask& m) {
  for (const CStmt& s : stmts) {
    if (m.none())
      return;
    tick();
    stmt(s, m);
    drop_stopped(m);
  }
}

void Exec::assign(uint32_t local, uint32_t from, const LaneMask& m) {
  const uint32_t bytes = slot_bytes(p_.kernel->locals[local].type);
  const uint32_t to = p_.local_reg(local);
  if (to == from)
    return;
  if (iv_)
    interval_assign(*this, local, from, m);
  if (m.all()) {
    std::memcpy(reg<std::byte>(to), reg<std::byte>(from), size_t{n_} * bytes);
    return;
  }
  switch (bytes) {
  case 1:
    masked_copy(reg<uint8_t>(to), reg<uint8_t>(from), m);
    return;
  case 2:
    masked_copy(reg<uint16_t>(to), reg<uint16_t>(from), m);
    return;
  case 4:
    masked_copy(reg<uint32_t>(to), reg<uint32_t>(from), m);
    return;
  default:
    masked_copy(reg<uint64_t>(to), reg<uint64_t>(from), m);
    return;
  }
}

void Exec::stmt(const CStmt& cs, LaneMask& m) {
  const ir::Stmt& s = *cs.stmt;
  switch (s.kind) {
  case ir::StmtKind::Let:
  case ir::StmtKind::Assign:
    eval(cs.eval, m);
    drop_stopped(m);
    if (cs.acc != ir::kNone)
      acc_action(*this, cs, m);
    assign(s.local, p_.nodes[s.a].reg, m);
    return;
  case ir::StmtKind::Store: {
    const size_t records = shadow_.evaluations();
    eval(cs.eval, m);
    drop_stopped(m);
    if (shadow_.evaluations() != records)
      attach_destinations(*this, cs, records);
    exec_store(*this, cs, m);
    if (iv_)
      interval_store(*this, cs, m);
    if (cs.acc != ir::kNone)
      acc_action(*this, cs, m);
    return;
  }
  case ir::StmtKind::Atomic:
    eval(cs.eval, m);
    drop_stopped(m);
    exec_atomic(*this, cs, m);
    if (iv_)
      interval_atomic(*this, cs, m);
    if (cs.acc != ir::kNone)
      acc_action(*this, cs, m);
    return;
  case ir::StmtKind::If:
    if_stmt(cs, m);
    return;
  case ir::StmtKind::While:
    while_stmt(cs, m);
    return;
  case ir::StmtKind::For:
    for_stmt(cs, m);
    return;
  case ir::StmtKind::Break:
    m.clear();
    return;
  case ir::StmtKind::Continue:
    loops_.back().continued->or_with(m);
    m.clear();
    return;
  case ir::StmtKind::Return:
    returned_.or_with(m);
    m.clear();
    return;
  case ir::StmtKind::Barrier:
    barrier(cs, m);
    return;
  }
}

void Exec::if_stmt(const CStmt& cs, LaneMask& m) {
  eval(cs.eval, m);
  drop_stopped(m);
  if (m.none())
    return;
  const uint8_t* cond = reg<uint8_t>(p_.nodes[cs.stmt->a].reg);
  if (iv_)
    interval_condition(*this, p_.nodes[cs.stmt->a].reg, m);
  ScopedMask then_lanes(masks_), else_lanes(masks_);
  then_lanes.m.assign(m);
  then_lanes.m.and_with(cond);
  else_lanes.m.and_not_of(m, cond);
  block(cs.body, then_lanes.m);
  block(cs.else_body, else_lanes.m);
  m.assign(then_lanes.m);
  m.or_with(else_lanes.m);
}

void Exec::while_stmt(const CStmt& cs, LaneMask& m) {
  ScopedMask lanes(masks_), continued(masks_);
  LaneMask& l = lanes.m;
  l.assign(m);
  continued.m.reset_empty(n_);
  loops_.push_back({&continued.m});
  const uint8_t* cond = reg<uint8_t>(p_.nodes[cs.stmt->a].reg);
  for (;;) {
    tick();
    drop_stopped(l);
    if (l.none())
      break;
    eval(cs.eval, l);
    if (iv_)
      interval_condition(*this, p_.nodes[cs.stmt->a].reg, l);
    l.and_with(cond);
    if (l.none())
      break;
    block(cs.body, l);
    l.or_with(continued.m);
    continued.m.clear();
  }
  loops_.pop_back();
  m.and_not(returned_);
  drop_stopped(m);
}

void Exec::for_stmt(const CStmt& cs, LaneMask& m) {
  const ir::Stmt& s = *cs.stmt;
  const LoopOps ops = loop_ops_of(p_.kernel->locals[s.local].type);
  eval(cs.eval, m);
  drop_stopped(m);
  assign(s.local, p_.nodes[s.a].reg, m);
  if (cs.dot != ir::kNone && dot_loop(cs, m))
    return;
  ScopedMask lanes(masks_), continued(masks_);
  LaneMask& l = lanes.m;
  l.assign(m);
  continued.m.reset_empty(n_);
  loops_.push_back({&continued.m});
  void* local = reg<std::byte>(p_.local_reg(s.local));
  const void* bound = reg<std::byte>(p_.nodes[s.b].reg);
  const void* step = reg<std::byte>(p_.nodes[s.c].reg);
  for (;;) {
    tick();
    drop_stopped(l);
    if (l.none())
      break;
    eval(cs.bound, l);
    if (iv_)
      interval_for_compare(*this, p_.local_reg(s.local), p_.nodes[s.b].reg, l);
    ops.less(local, bound, scratch_.data(), n_);
    l.and_with(scratch_.data());
    if (l.none())
      break;
    block(cs.body, l);
    l.or_with(continued.m);
    continued.m.clear();
    drop_stopped(l);
    if (l.none())
      break;
    eval(cs.step, l);
    if (iv_)
      interval_for_step(*this, p_.local_reg(s.local), p_.nodes[s.c].reg, l);
    ops.step(local, step, l);
  }
  loops_.pop_back();
  m.and_not(returned_);
  drop_stopped(m);
}

void Exec::barrier(const CStmt& cs, LaneMask& m) {
  if (m.count() == n_) {
    new_interval(cs.barrier);
    return;
  }
  uint32_t missing = 0;
  while (m[missing])
    ++missing;
  fail(missing, ErrorKind::Barrier,
       "barrier reached by " + std::to_string(m.count()) + " of " + std::to_string(n_) +
           " lanes of the workgroup; lane " + std::to_string(local_of(missing)) +
           (returned_[missing] ? " had returned" : " did not reach it"),
       {}, ir::kNone, cs.stmt->line);
  m.clear();
}

} // namespace halfway::interp
