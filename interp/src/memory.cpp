// Loads and stores on buffers, shared and private arrays: bounds checks on every active lane (per
// dimension on rank-2 and rank-3 arrays), the shared-memory race check, and a contiguous fast
// path (every lane active, 32-bit indices i0, i0+1, ...) that checks the range once and copies.
#include "access.hpp"
#include "halfway/ir/bits.hpp"
#include "slots.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace halfway::interp {

namespace {

// The first index when every lane is active and the 32-bit indices are i0, i0+1, ... in bounds.
bool contiguous(Exec& x, const LaneMask& m, const void* index_reg, ir::ScalarType t,
                uint64_t length, uint64_t& first) {
  if (!m.all() || (t != ir::ScalarType::U32 && t != ir::ScalarType::I32))
    return false;
  const uint32_t* idx = static_cast<const uint32_t*>(index_reg);
  const uint32_t n = x.lanes(), start = idx[0];
  if (t == ir::ScalarType::I32 && static_cast<int32_t>(start) < 0)
    return false;
  if (uint64_t{start} + n > length)
    return false;
  uint32_t differ = 0;
  for (uint32_t i = 0; i < n; ++i)
    differ |= idx[i] ^ (start + i);
  first = start;
  return differ == 0;
}

// Whether every lane's 32-bit index is within a buffer of `length` elements, when every lane is
// active: one vectorised pass, after which the access needs no per-lane check. A negative i32 is
// at least 2^31 as u32, so below min(length, 2^31) covers both of its bounds.
bool all_in_bounds(Exec& x, const LaneMask& m, const void* index_reg, ir::ScalarType t,
                   uint64_t length) {
  if (!m.all() || (t != ir::ScalarType::U32 && t != ir::ScalarType::I32))
    return false;
  const uint64_t limit =
      t == ir::ScalarType::I32 ? std::min<uint64_t>(length, uint64_t{1} << 31) : length;
  const uint32_t* idx = static_cast<const uint32_t*>(index_reg);
  uint32_t bad = 0;
  for (uint32_t i = 0, n = x.lanes(); i < n; ++i)
    bad |= uint64_t{idx[i]} >= limit;
  return bad == 0;
}

// I: the index's C++ type (its signedness decides whether negative indices exist).
template <class I> bool in_bounds(I v, uint64_t length) {
  if constexpr (std::is_signed_v<I>)
    if (v < 0)
      return false;
  return static_cast<uint64_t>(v) < length;
}

// Reports the out-of-bounds access (check() finds it out of bounds again and says why).
template <class I>
[[gnu::noinline]] void out_of_bounds(Exec& x, const Target& t, I v, uint32_t lane,
                                     SharedAccess kind, ir::ExprId node, uint32_t line) {
  Index ix = v < 0 ? Index{true, 0 - static_cast<uint64_t>(static_cast<int64_t>(v))}
                   : Index{false, static_cast<uint64_t>(v)};
  check(x, t, ix, lane, kind, node, line);
}

template <class E, class I, bool Shared> void load_lanes(Exec& x, const Node& n, const Target& t) {
  const I* idx = x.reg<I>(n.arg[0]);
  E* r = x.reg<E>(n.reg);
  const E* base = reinterpret_cast<const E*>(t.base);
  for_active(x.mask(), [&](uint32_t lane) {
    const I v = idx[lane];
    if (!in_bounds(v, t.length))
      return out_of_bounds(x, t, v, lane, SharedAccess::Read, n.id, 0);
    if constexpr (Shared)
      if (!x.shared_access(t.id, static_cast<uint64_t>(v), lane, SharedAccess::Read, n.id, 0))
        return;
    r[lane] = base[static_cast<uint64_t>(v)];
  });
}

template <class E, class I, bool Shared>
void store_lanes(Exec& x, const CStmt& cs, const LaneMask& m, const Target& t) {
  const ir::Stmt& s = *cs.stmt;
  const I* idx = x.reg<I>(x.program().nodes[s.a].reg);
  const E* value = x.reg<E>(x.program().nodes[s.b].reg);
  E* base = reinterpret_cast<E*>(t.base);
  for_active(m, [&](uint32_t lane) {
    const I v = idx[lane];
    if (!in_bounds(v, t.length))
      return out_of_bounds(x, t, v, lane, SharedAccess::Write, ir::kNone, s.line);
    if constexpr (Shared)
      if (!x.shared_access(t.id, static_cast<uint64_t>(v), lane, SharedAccess::Write, ir::kNone,
                           s.line))
        return;
    base[static_cast<uint64_t>(v)] = value[lane];
  });
}

// Rank-1 private arrays, typed like the buffer path: lane l's copy starts at l * length elements.
template <class E, class I> void load_private(Exec& x, const Node& n, const Target& t) {
  const I* idx = x.reg<I>(n.arg[0]);
  E* r = x.reg<E>(n.reg);
  const E* base = reinterpret_cast<const E*>(t.base);
  for_active(x.mask(), [&](uint32_t lane) {
    const I v = idx[lane];
    if (!in_bounds(v, t.length))
      return out_of_bounds(x, t, v, lane, SharedAccess::Read, n.id, 0);
    r[lane] = base[static_cast<uint64_t>(v) * x.capacity() + lane];
  });
}

template <class E, class I>
void store_private(Exec& x, const CStmt& cs, const LaneMask& m, const Target& t) {
  const ir::Stmt& s = *cs.stmt;
  const I* idx = x.reg<I>(x.program().nodes[s.a].reg);
  const E* value = x.reg<E>(x.program().nodes[s.b].reg);
  E* base = reinterpret_cast<E*>(t.base);
  for_active(m, [&](uint32_t lane) {
    const I v = idx[lane];
    if (!in_bounds(v, t.length))
      return out_of_bounds(x, t, v, lane, SharedAccess::Write, ir::kNone, s.line);
    base[static_cast<uint64_t>(v) * x.capacity() + lane] = value[lane];
  });
}

bool rank1_private(const Exec& x, const Target& t) {
  return t.space == ir::Space::Private && x.program().kernel->privates[t.id].rank() == 1;
}

// Calls f.template operator()<E>() for the unsigned type of the element storage.
template <class F> void by_bytes(uint32_t bytes, F f) {
  switch (bytes) {
  case 1:
    return f.template operator()<uint8_t>();
  case 2:
    return f.template operator()<uint16_t>();
  case 4:
    return f.template operator()<uint32_t>();
  default:
    return f.template operator()<uint64_t>();
  }
}

// Calls f.template operator()<E, I, Shared>() for the element storage, index type and space.
template <class F> void dispatch(uint32_t element_bytes, ir::ScalarType index, bool shared, F f) {
  auto by_index = [&]<class E>() {
    auto go = [&]<class I>() {
      if (shared)
        f.template operator()<E, I, true>();
      else
        f.template operator()<E, I, false>();
    };
    switch (index) {
    case ir::ScalarType::I8:
      return go.template operator()<int8_t>();
    case ir::ScalarType::U8:
      return go.template operator()<uint8_t>();
    case ir::ScalarType::I16:
      return go.template operator()<int16_t>();
    case ir::ScalarType::U16:
      return go.template operator()<uint16_t>();
    case ir::ScalarType::I32:
      return go.template operator()<int32_t>();
    case ir::ScalarType::U32:
      return go.template operator()<uint32_t>();
    case ir::ScalarType::I64:
      return go.template operator()<int64_t>();
    default:
      return go.template operator()<uint64_t>();
    }
  };
  by_bytes(element_bytes, by_index);
}

// Private arrays and arrays of rank 2 and 3, one lane at a time: each index is checked against
// its dimension, then `out` is the row-major element (in the lane's own copy of a private
// array). Shared elements go through the race check as rank-1 ones do.
bool element(Exec& x, const Target& t, const std::array<uint32_t, 3>& regs,
             const std::array<ir::ScalarType, 3>& types, uint32_t lane, SharedAccess kind,
             ir::ExprId node, uint32_t line, std::byte*& out) {
  const ir::SharedArray& a = x.program().kernel->array(t.space, t.id);
  const uint32_t rank = a.rank();
  uint64_t linear = 0;
  for (uint32_t d = 0; d < rank; ++d) {
    const Index ix = read_index(x.reg<std::byte>(regs[d]), types[d], lane);
    if (rank == 1 ? !check(x, t, ix, lane, kind, node, line)
                  : !check_dimension(x, t, kind, d, ix, a.dim(d), lane, node, line))
      return false;
    linear = linear * a.dim(d) + ix.value; // below the array's size, so below 2^32
  }
  if (rank > 1 && t.space == ir::Space::Shared &&
      !x.shared_access(t.id, linear, lane, kind, node, line))
    return false;
  const uint64_t at = t.space == ir::Space::Private ? linear * x.capacity() + lane : linear;
  out = t.base + at * t.bytes;
  return true;
}

bool by_element(const Exec& x, const Target& t) {
  return t.space == ir::Space::Private ||
         (t.space == ir::Space::Shared && x.program().kernel->shared[t.id].rank() > 1);
}

// The fast path of element(): when every lane is active, the indices are 32-bit and every one
// lies within its dimension, writes every lane's row-major element number to x.elements() and
// returns true. Otherwise returns false and the caller goes lane by lane, which finds and
// reports the first failing lane as before. Checks first, for all lanes, in one vectorised pass.
bool all_elements(Exec& x, const ir::SharedArray& a, const std::array<uint32_t, 3>& regs,
                  const std::array<ir::ScalarType, 3>& types, const LaneMask& m) {
  const uint32_t rank = a.rank();
  if (!m.all())
    return false;
  for (uint32_t d = 0; d < rank; ++d)
    if (types[d] != ir::ScalarType::U32 && types[d] != ir::ScalarType::I32)
      return false;
  // A negative i32 index is at least 2^31 as u32, so one unsigned compare checks both bounds.
  const uint32_t n = x.lanes();
  uint32_t* __restrict out = x.elements();
  const uint32_t* i0 = x.reg<uint32_t>(regs[0]);
  const uint32_t d0 = a.dim(0);
  uint32_t bad = 0;
  if (rank == 1) {
    for (uint32_t i = 0; i < n; ++i) {
      bad |= i0[i] >= d0;
      out[i] = i0[i];
    }
  } else if (rank == 2) {
    const uint32_t* i1 = x.reg<uint32_t>(regs[1]);
    const uint32_t d1 = a.dim(1);
    for (uint32_t i = 0; i < n; ++i) {
      bad |= (i0[i] >= d0) | (i1[i] >= d1);
      out[i] = i0[i] * d1 + i1[i]; // wraps only where bad
    }
  } else {
    const uint32_t* i1 = x.reg<uint32_t>(regs[1]);
    const uint32_t* i2 = x.reg<uint32_t>(regs[2]);
    const uint32_t d1 = a.dim(1), d2 = a.dim(2);
    for (uint32_t i = 0; i < n; ++i) {
      bad |= (i0[i] >= d0) | (i1[i] >= d1) | (i2[i] >= d2);
      out[i] = (i0[i] * d1 + i1[i]) * d2 + i2[i];
    }
  }
  return bad == 0;
}

const ir::SharedArray& k_array(const Exec& x, const Target& t) {
  return x.program().kernel->array(t.space, t.id);
}

// Whether every lane names the same element (a private array indexed by a loop counter), so that
// its private slots are consecutive.
bool uniform(const uint32_t* el, uint32_t n) {
  uint32_t differ = 0;
  for (uint32_t i = 0; i < n; ++i)
    differ |= el[i] ^ el[0];
  return differ == 0;
}

// The fast paths of load_elements and store_elements (all_elements() held): the race check of
// every lane in lane order, as the lane-by-lane path makes it, then one plain loop.
void load_all(Exec& x, const Node& n, const Target& t) {
  const uint32_t* el = x.elements();
  if (t.space == ir::Space::Shared)
    x.shared_reads(t.id, el, n.id); // a race stopped the workgroup: what it loads is never used
  const uint32_t lanes = x.lanes();
  by_bytes(t.bytes, [&]<class E>() {
    E* __restrict r = x.reg<E>(n.reg);
    const E* base = reinterpret_cast<const E*>(t.base);
    if (t.space == ir::Space::Shared) {
      for (uint32_t i = 0; i < lanes; ++i)
        r[i] = base[el[i]];
      return;
    }
    // Private: element-major, so lanes that read one element read consecutive slots.
    const uint64_t capacity = x.capacity();
    if (uniform(el, lanes)) {
      std::memcpy(r, base + el[0] * capacity, size_t{lanes} * sizeof(E));
      return;
    }
    for (uint32_t i = 0; i < lanes; ++i)
      r[i] = base[el[i] * capacity + i];
  });
}

void store_all(Exec& x, const CStmt& cs, const Target& t) {
  const ir::Stmt& s = *cs.stmt;
  const uint32_t* el = x.elements();
  const uint32_t n = x.lanes();
  const uint64_t capacity = x.capacity();
  by_bytes(t.bytes, [&]<class E>() {
    const E* value = x.reg<E>(x.program().nodes[s.b].reg);
    E* base = reinterpret_cast<E*>(t.base);
    if (t.space == ir::Space::Shared) {
      x.shared_writes(t.id, el, s.line, [&](uint32_t i) { base[el[i]] = value[i]; });
      return;
    }
    if (uniform(el, n)) {
      std::memcpy(base + el[0] * capacity, value, size_t{n} * sizeof(E));
      return;
    }
    for (uint32_t i = 0; i < n; ++i)
      base[el[i] * capacity + i] = value[i];
  });
}

void load_elements(Exec& x, const Node& n, const Target& t) {
  const ir::Kernel& k = *x.program().kernel;
  const ir::Expr& e = *n.expr;
  std::array<uint32_t, 3> regs{};
  std::array<ir::ScalarType, 3> types{};
  for (int i = 0; i < e.nargs; ++i) {
    regs[i] = n.arg[i];
    types[i] = k.expr(e.args[i]).type;
  }
  if (all_elements(x, k.array(t.space, t.id), regs, types, x.mask()))
    return load_all(x, n, t);
  void* r = x.reg<std::byte>(n.reg);
  for_active(x.mask(), [&](uint32_t lane) {
    std::byte* p = nullptr;
    if (!element(x, t, regs, types, lane, SharedAccess::Read, n.id, 0, p))
      return;
    uint64_t bits = 0;
    std::memcpy(&bits, p, t.bytes); // little-endian: the low bytes
    set_slot(r, t.bytes, lane, bits);
  });
}

void store_elements(Exec& x, const CStmt& cs, const LaneMask& m, const Target& t) {
  const ir::Stmt& s = *cs.stmt;
  const Program& p = x.program();
  std::array<uint32_t, 3> regs{};
  std::array<ir::ScalarType, 3> types{};
  const std::array<ir::ExprId, 3> ix = ir::store_indices(s);
  for (int i = 0; i < 3; ++i)
    if (ix[i] != ir::kNone) {
      regs[i] = p.nodes[ix[i]].reg;
      types[i] = p.nodes[ix[i]].type;
    }
  if (all_elements(x, p.kernel->array(t.space, t.id), regs, types, m))
    return store_all(x, cs, t);
  const void* value = x.reg<std::byte>(p.nodes[s.b].reg);
  for_active(m, [&](uint32_t lane) {
    std::byte* at = nullptr;
    if (!element(x, t, regs, types, lane, SharedAccess::Write, ir::kNone, s.line, at))
      return;
    const uint64_t bits = get_slot(value, t.bytes, lane);
    std::memcpy(at, &bits, t.bytes);
  });
}

void load(Exec& x, const Node& n) {
  const ir::Expr& e = *n.expr;
  const Target t = target_of(x, e.space, e.ref);
  if (rank1_private(x, t)) {
    if (all_elements(x, k_array(x, t), {n.arg[0]}, {n.arg_type}, x.mask()))
      return load_all(x, n, t);
    return dispatch(t.bytes, n.arg_type, false,
                    [&]<class E, class I, bool>() { load_private<E, I>(x, n, t); });
  }
  if (by_element(x, t))
    return load_elements(x, n, t);
  if (t.space == ir::Space::Shared &&
      all_elements(x, k_array(x, t), {n.arg[0]}, {n.arg_type}, x.mask()))
    return load_all(x, n, t);
  const void* index = x.reg<std::byte>(n.arg[0]);
  uint64_t first;
  if (t.space == ir::Space::Buffer && contiguous(x, x.mask(), index, n.arg_type, t.length, first)) {
    std::memcpy(x.reg<std::byte>(n.reg), t.base + first * t.bytes, size_t{x.lanes()} * t.bytes);
    return;
  }
  if (t.space == ir::Space::Buffer && all_in_bounds(x, x.mask(), index, n.arg_type, t.length))
    return by_bytes(t.bytes, [&]<class E>() {
      const uint32_t* idx = static_cast<const uint32_t*>(index);
      const E* base = reinterpret_cast<const E*>(t.base);
      E* __restrict r = x.reg<E>(n.reg);
      for (uint32_t i = 0, lanes = x.lanes(); i < lanes; ++i)
        r[i] = base[idx[i]];
    });
  dispatch(t.bytes, n.arg_type, t.space == ir::Space::Shared,
           [&]<class E, class I, bool Shared>() { load_lanes<E, I, Shared>(x, n, t); });
}

} // namespace

EvalFn memory_eval(const Program&, const Node& n) {
  return n.op == ir::Op::Load ? load : nullptr;
}

void exec_store(Exec& x, const CStmt& cs, const LaneMask& m) {
  const ir::Stmt& s = *cs.stmt;
  const Program& p = x.program();
  const Target t = target_of(x, s.space, s.mem);
  if (rank1_private(x, t)) {
    if (all_elements(x, k_array(x, t), {p.nodes[s.a].reg}, {p.nodes[s.a].type}, m))
      return store_all(x, cs, t);
    return dispatch(t.bytes, p.nodes[s.a].type, false,
                    [&]<class E, class I, bool>() { store_private<E, I>(x, cs, m, t); });
  }
  if (by_element(x, t))
    return store_elements(x, cs, m, t);
  const ir::ScalarType index_type = p.nodes[s.a].type;
  if (t.space == ir::Space::Shared &&
      all_elements(x, k_array(x, t), {p.nodes[s.a].reg}, {index_type}, m))
    return store_all(x, cs, t);
  const void* index = x.reg<std::byte>(p.nodes[s.a].reg);
  uint64_t first;
  if (t.space == ir::Space::Buffer && contiguous(x, m, index, index_type, t.length, first)) {
    std::memcpy(t.base + first * t.bytes, x.reg<std::byte>(p.nodes[s.b].reg),
                size_t{x.lanes()} * t.bytes);
    return;
  }
  // Lanes store in lane order, so of two lanes storing to one element the later one's value stays,
  // as in the lane-by-lane path.
  if (t.space == ir::Space::Buffer && all_in_bounds(x, m, index, index_type, t.length))
    return by_bytes(t.bytes, [&]<class E>() {
      const uint32_t* idx = static_cast<const uint32_t*>(index);
      const E* value = x.reg<E>(p.nodes[s.b].reg);
      E* base = reinterpret_cast<E*>(t.base);
      for (uint32_t i = 0, lanes = x.lanes(); i < lanes; ++i)
        base[idx[i]] = value[i];
    });
  dispatch(t.bytes, index_type, t.space == ir::Space::Shared,
           [&]<class E, class I, bool Shared>() { store_lanes<E, I, Shared>(x, cs, m, t); });
}

} // namespace halfway::interp
