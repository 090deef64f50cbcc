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
  return {space, id, x.shared(id), k.shared[id].size, bytes, &k.shared[id].name};
}

inline std::string describe(const Target& t, SharedAccess kind) {
  static constexpr const char* kWhat[] = {"load from", "store to", "atomic on"};
  return std::string(kWhat[static_cast<int>(kind)]) +
         (t.space == ir::Space::Buffer ? " buffer " : " shared ") + *t.name;
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
  return t.space == ir::Space::Buffer || x.shared_access(t.id, ix.value, lane, kind, node, line);
}

} // namespace halfway::interp
