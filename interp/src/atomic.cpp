// Atomic read-modify-write statements on buffers and shared arrays. Lanes apply in increasing
// order within a batch; on buffers every operation is a real atomic (std::atomic_ref), since
// other workers may update the same element.
#include "access.hpp"

#include <atomic>

namespace halfway::interp {

namespace {

template <class U, class S>
void atomic_lanes(Exec& x, const CStmt& cs, const LaneMask& m, const Target& t) {
  const ir::Stmt& s = *cs.stmt;
  const Program& p = x.program();
  const ir::ScalarType index_type = p.nodes[s.a].type;
  const void* index = x.reg<std::byte>(p.nodes[s.a].reg);
  const U* value = x.reg<U>(p.nodes[s.b].reg);
  const U* comparand = s.c != ir::kNone ? x.reg<U>(p.nodes[s.c].reg) : nullptr;
  U* result = s.local != ir::kNone ? x.reg<U>(p.local_reg(s.local)) : nullptr;
  for_active(m, [&](uint32_t lane) {
    const Index ix = read_index(index, index_type, lane);
    if (!check(x, t, ix, lane, SharedAccess::Atomic, ir::kNone, s.line))
      return;
    std::atomic_ref<U> ref(*reinterpret_cast<U*>(t.base + ix.value * sizeof(U)));
    const U v = value[lane];
    U old = 0;
    switch (s.atomic) {
    case ir::AtomicOp::Add:
      old = ref.fetch_add(v);
      break;
    case ir::AtomicOp::Sub:
      old = ref.fetch_sub(v);
      break;
    case ir::AtomicOp::And:
      old = ref.fetch_and(v);
      break;
    case ir::AtomicOp::Or:
      old = ref.fetch_or(v);
      break;
    case ir::AtomicOp::Xor:
      old = ref.fetch_xor(v);
      break;
    case ir::AtomicOp::Exchange:
      old = ref.exchange(v);
      break;
    case ir::AtomicOp::CompareExchange:
      old = comparand[lane];
      ref.compare_exchange_strong(old, v);
      break;
    case ir::AtomicOp::Min:
      old = ref.load();
      while (static_cast<S>(v) < static_cast<S>(old) && !ref.compare_exchange_weak(old, v)) {
      }
      break;
    case ir::AtomicOp::Max:
      old = ref.load();
      while (static_cast<S>(v) > static_cast<S>(old) && !ref.compare_exchange_weak(old, v)) {
      }
      break;
    }
    if (result)
      result[lane] = old;
  });
}

} // namespace

void exec_atomic(Exec& x, const CStmt& cs, const LaneMask& m) {
  const ir::Stmt& s = *cs.stmt;
  const Target t = target_of(x, s.space, s.mem);
  switch (x.program().kernel->element_type(s.space, s.mem)) {
  case ir::ScalarType::I32:
    atomic_lanes<uint32_t, int32_t>(x, cs, m, t);
    return;
  case ir::ScalarType::U32:
    atomic_lanes<uint32_t, uint32_t>(x, cs, m, t);
    return;
  case ir::ScalarType::I64:
    atomic_lanes<uint64_t, int64_t>(x, cs, m, t);
    return;
  default:
    atomic_lanes<uint64_t, uint64_t>(x, cs, m, t);
    return;
  }
}

} // namespace halfway::interp
