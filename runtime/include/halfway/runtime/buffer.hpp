#pragma once
// Host-side data for a launch: typed buffers, scalar arguments and the grid. Every device (the
// interpreter, the CPU JIT, Vulkan) takes exactly these, so the same inputs can be run everywhere
// and compared.

#include "halfway/ir/kernel.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace halfway::rt {

// A buffer of `size()` elements of one IR type, 64-byte aligned, stored as the elements' bit
// patterns in little-endian order (f16 as its 16 bits, fp8 as bytes, and so on).
class HostBuffer {
public:
  HostBuffer() = default;
  HostBuffer(ir::ScalarType type, size_t count);

  ir::ScalarType type() const { return type_; }
  size_t size() const { return count_; }
  size_t size_bytes() const { return count_ * ir::bytes(type_); }
  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }

  // Typed views; T must have the element's size (e.g. uint16_t or a 16-bit tag for f16).
  template <class T> std::span<T> as() {
    check_view(sizeof(T));
    return {reinterpret_cast<T*>(data_.get()), count_};
  }
  template <class T> std::span<const T> as() const {
    check_view(sizeof(T));
    return {reinterpret_cast<const T*>(data_.get()), count_};
  }

  // Element i as a zero-extended bit pattern, and back.
  uint64_t get_bits(size_t i) const;
  void set_bits(size_t i, uint64_t bits);

  HostBuffer clone() const;
  bool operator==(const HostBuffer& o) const;

private:
  void check_view(size_t element_size) const;
  struct Free {
    void operator()(std::byte* p) const;
  };
  ir::ScalarType type_ = ir::ScalarType::U8;
  size_t count_ = 0;
  std::unique_ptr<std::byte[], Free> data_;
};

// One argument per kernel parameter, in parameter order: a buffer for a buffer parameter, a bit
// pattern for a scalar parameter.
struct Arg {
  HostBuffer* buffer = nullptr;
  uint64_t scalar = 0;

  static Arg of(HostBuffer& b) { return {&b, 0}; }
  static Arg bits(uint64_t bits) { return {nullptr, bits}; }
  static Arg f32(float v);
  static Arg u32(uint32_t v) { return {nullptr, v}; }
  static Arg i32(int32_t v) { return {nullptr, static_cast<uint32_t>(v)}; }
};

// Number of workgroups in each dimension.
struct Grid {
  std::array<uint32_t, 3> groups{1, 1, 1};

  // Enough workgroups along x for `lanes` lanes (the CLI's --grid N).
  static Grid for_lanes(const ir::Kernel& k, uint64_t lanes);
  uint64_t total_groups() const { return uint64_t{groups[0]} * groups[1] * groups[2]; }
};

// Throws a Usage error naming the kernel and parameter when the arguments do not fit the kernel:
// wrong count, a missing buffer, a buffer whose element type differs from the parameter's, a
// buffer where a scalar is expected or the reverse, or an empty grid.
void check_args(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args);

} // namespace halfway::rt
