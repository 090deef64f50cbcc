#pragma once
// What loads, stores and atomics share: where an access goes, and the bounds and race check
// every lane's access goes through.

#include "exec.hpp"
#include "halfway/ir/bits.hpp"
#include "slots.hpp"

#include <string>

namespace halfway::interp {

struct Index {
  bool negative = false;
  uint64_t value = 0; // the index, or its magnitude when negative
};

inline Index read_index(const void* reg, ir::ScalarType t, uint32_t lane) {
  uint64_t v = get_slot(reg, ir::bytes(t), lane);
  if (!ir::info(t).is_signed)
    return {false, v};
  int64_t s = ir::sign_extend(v, ir::info(t).bits);
  return s < 0 ? Index{true, 0 - static_cast<uint64_t>(s)} : Index{false, static_cast<uint64_t>(s)};
}

// Where an access goes.
struct Target {
  ir::Space space;
  uint32_t id;
  std::byte* base;
  uint64_t length;
  uint32_t bytes;
  const std::string* name;
};

inline Target target_of(Exec& x, ir::Space space, uint32_t id) {
  const ir::Kernel& k = *x.program().kernel;
  const uint32_t bytes = ir::bytes(k.element_type(space, id));
  if (space == ir::Space::Buffer) {
    const BufferView& b = x.launch().buffers[id];
    return {space, id, b.data, b.length, bytes, &k.params[id].name};
  }
  if (space == ir::Space::Private)
    return {space, id, x.private_array(id), k.privates[id].size, bytes, &k.privates[id].name};
  return {space, id, x.shared(id), k.shared[id].size, bytes, &k.shared[id].name};
}

inline const char* space_word(ir::Space s) {
  return s == ir::Space::Buffer ? " buffer " : s == ir::Space::Shared ? " shared " : " private ";
}

inline std::string describe(const Target& t, SharedAccess kind) {
  static constexpr const char* kWhat[] = {"load from", "store to", "atomic on"};
  return std::string(kWhat[static_cast<int>(kind)]) + space_word(t.space) + *t.name;
}

// Checks one index of a rank-2 or rank-3 array against its dimension; reports and returns false
// when it is outside. The message names the dimension (0 is the outermost) and gives that
// dimension's size as the length.
inline bool check_dimension(Exec& x, const Target& t, SharedAccess kind, uint32_t dim, Index ix,
                            uint64_t size, uint32_t lane, ir::ExprId node, uint32_t line) {
  // The message is built only on failure: this runs for every lane of every access.
  auto where = [dim] { return " in dimension " + std::to_string(dim); };
  if (ix.negative) {
    x.fail(lane, ErrorKind::OutOfBounds,
           describe(t, kind) + " at negative index -" + std::to_string(ix.value) + where() +
               " (length " + std::to_string(size) + ")",
           {.buffer = *t.name, .length = size}, node, line);
    return false;
  }
  if (ix.value >= size) {
    x.fail(lane, ErrorKind::OutOfBounds,
           describe(t, kind) + " out of bounds" + where() + ": index " + std::to_string(ix.value) +
               ", length " + std::to_string(size),
           {.buffer = *t.name, .index = ix.value, .length = size}, node, line);
    return false;
  }
  return true;
}

// Checks one lane's access; reports and returns false when it is out of bounds or races.
inline bool check(Exec& x, const Target& t, Index ix, uint32_t lane, SharedAccess kind,
                  ir::ExprId node, uint32_t line) {
  if (ix.negative) {
    x.fail(lane, ErrorKind::OutOfBounds,
           describe(t, kind) + " at negative index -" + std::to_string(ix.value) + " (length " +
               std::to_string(t.length) + ")",
           {.buffer = *t.name, .length = t.length}, node, line);
    return false;
  }
  if (ix.value >= t.length) {
    x.fail(lane, ErrorKind::OutOfBounds,
           describe(t, kind) + " out of bounds: index " + std::to_string(ix.value) + ", length " +
               std::to_string(t.length),
           {.buffer = *t.name, .index = ix.value, .length = t.length}, node, line);
    return false;
  }
  return t.space != ir::Space::Shared || x.shared_access(t.id, ix.value, lane, kind, node, line);
}

// The row-major element that index expressions `ix` (registers of this run) name in array `mem`
// of `space` at `lane`.
inline uint64_t element_at(Exec& x, ir::Space space, uint32_t mem,
                           const std::array<ir::ExprId, 3>& ix, uint32_t lane) {
  const ir::Kernel& k = *x.program().kernel;
  uint64_t linear = 0;
  for (uint32_t d = 0; d < 3 && ix[d] != ir::kNone; ++d) {
    const Node& n = x.program().nodes[ix[d]];
    uint64_t v = get_slot(x.reg<std::byte>(n.reg), ir::bytes(n.type), lane);
    if (ir::info(n.type).is_signed)
      v = static_cast<uint64_t>(ir::sign_extend(v, ir::info(n.type).bits));
    // Wraps on purpose: an out-of-range index gives some element, and the access then fails.
    linear = d == 0 ? v : linear * k.array(space, mem).dim(d) + v;
  }
  return linear;
}

// The row-major element a store's indices name at `lane`, for the records of narrowing sites and
// accumulations. Records are made before the store checks its indices; an out-of-range index
// gives some element number here, and the store then fails.
inline uint64_t stored_element(Exec& x, const ir::Stmt& s, uint32_t lane) {
  return element_at(x, s.space, s.mem, ir::store_indices(s), lane);
}

// The element a load expression reads at `lane` (its indices were evaluated in this statement).
inline uint64_t loaded_element(Exec& x, const ir::Expr& e, uint32_t lane) {
  std::array<ir::ExprId, 3> ix{ir::kNone, ir::kNone, ir::kNone};
  for (int d = 0; d < e.nargs && d < 3; ++d)
    ix[d] = e.args[d];
  return element_at(x, e.space, e.ref, ix, lane);
}

} // namespace halfway::interp
