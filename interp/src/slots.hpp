#pragma once
// Register slots by width. A register holds one element per lane in the storage of its type:
// bool and 8-bit types in bytes, 16-bit types in uint16_t, 32-bit in uint32_t (f32 as float),
// 64-bit in uint64_t (f64 as double). These helpers read and write one lane as a zero-extended
// bit pattern, for the paths that are not specialised per type.

#include "halfway/ir/types.hpp"

#include <bit>
#include <cstdint>
#include <cstring>

namespace halfway::interp {

// Bytes per lane in a register of type t (bool: 1, unlike memory where it is 4).
constexpr uint32_t slot_bytes(ir::ScalarType t) {
  return t == ir::ScalarType::Bool ? 1 : ir::info(t).bits / 8;
}

// An f32 or f64 result with NaNs made canonical (the interpreter's NaN results are always the
// canonical quiet NaN). Branch-free on the lanes, so that the loops using it vectorise.
template <class T> T canonical(T v) {
  if constexpr (sizeof(T) == 4)
    return v != v ? std::bit_cast<float>(0x7fc00000u) : v;
  else
    return v != v ? std::bit_cast<double>(0x7ff8000000000000ull) : v;
}

inline uint64_t get_slot(const void* reg, uint32_t bytes, uint32_t lane) {
  switch (bytes) {
  case 1:
    return static_cast<const uint8_t*>(reg)[lane];
  case 2:
    return static_cast<const uint16_t*>(reg)[lane];
  case 4:
    return static_cast<const uint32_t*>(reg)[lane];
  default:
    return static_cast<const uint64_t*>(reg)[lane];
  }
}

inline void set_slot(void* reg, uint32_t bytes, uint32_t lane, uint64_t bits) {
  switch (bytes) {
  case 1:
    static_cast<uint8_t*>(reg)[lane] = static_cast<uint8_t>(bits);
    return;
  case 2:
    static_cast<uint16_t*>(reg)[lane] = static_cast<uint16_t>(bits);
    return;
  case 4:
    static_cast<uint32_t*>(reg)[lane] = static_cast<uint32_t>(bits);
    return;
  default:
    static_cast<uint64_t*>(reg)[lane] = bits;
    return;
  }
}

inline void fill_slots(void* reg, uint32_t bytes, uint32_t count, uint64_t bits) {
  for (uint32_t i = 0; i < count; ++i)
    set_slot(reg, bytes, i, bits);
}

} // namespace halfway::interp
