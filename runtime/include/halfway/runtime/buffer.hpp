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

// A buffer of `size()` elements of one IR type, stored as the elements' bit patterns in
// little-endian order (f16 as its 16 bits, fp8 as bytes, and so on), aligned to the element size.
//
// Guarded storage (the CPU device's memory safety, codegen/llvm/README.md): each buffer is its
// own reservation of address space whose data ends exactly at a page boundary and is followed by
// an inaccessible guard of 2^32 elements plus a page. Generated code turns every index of 32 bits
// or fewer into a zero-extended 32-bit offset, so any out-of-bounds index (negative ones included)
// lands in the guard and faults instead of reading or writing other memory; the CPU device turns
// that fault into the interpreter's error. The guard is address space only (PROT_NONE,
// MAP_NORESERVE): it costs no memory. When the reservation cannot be made (RLIMIT_AS, a full
// address space) the buffer is a plain allocation and guarded() is false; devices then check
// every access explicitly.
class HostBuffer {
public:
  HostBuffer() = default;
  // Throws ErrorKind::Usage when count * element bytes does not fit 64 bits, ErrorKind::Device
  // ("out of host memory") when the memory cannot be had. The elements start zeroed.
  HostBuffer(ir::ScalarType type, size_t count);
  ~HostBuffer();
  HostBuffer(HostBuffer&& o) noexcept;
  HostBuffer& operator=(HostBuffer&& o) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  ir::ScalarType type() const { return type_; }
  size_t size() const { return count_; }
  size_t size_bytes() const { return count_ * ir::bytes(type_); }
  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }

  // Whether every byte from data() + size_bytes() up to guard_end() is inaccessible, and the end
  // of that guard: an access at any 32-bit index past the end faults inside it.
  bool guarded() const { return guarded_; }
  const std::byte* guard_end() const { return guard_end_; }

  // Typed views; T must have the element's size (e.g. uint16_t or a 16-bit tag for f16).
  template <class T> std::span<T> as() {
    check_view(sizeof(T));
    return {reinterpret_cast<T*>(data_), count_};
  }
  template <class T> std::span<const T> as() const {
    check_view(sizeof(T));
    return {reinterpret_cast<const T*>(data_), count_};
  }

  // Element i as a zero-extended bit pattern, and back.
  uint64_t get_bits(size_t i) const;
  void set_bits(size_t i, uint64_t bits);

  HostBuffer clone() const;
  bool operator==(const HostBuffer& o) const;

  // Tests: while set, new buffers are plain allocations (guarded() false), as when the address
  // space reservation fails.
  static void force_unguarded_for_testing(bool on);

private:
  void check_view(size_t element_size) const;
  void release() noexcept;
  ir::ScalarType type_ = ir::ScalarType::U8;
  size_t count_ = 0;
  std::byte* data_ = nullptr;
  void* mapping_ = nullptr; // the reservation (guarded) or the malloc'ed block (not guarded)
  size_t mapping_bytes_ = 0;
  const std::byte* guard_end_ = nullptr;
  bool guarded_ = false;
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

  // Enough workgroups along x for `lanes` lanes (the CLI's --grid N); a Usage error when that
  // needs 2^32 workgroups or more (checked without overflow for any `lanes`).
  static Grid for_lanes(const ir::Kernel& k, uint64_t lanes);
  // The same per dimension (--grid XxYxZ): lanes[d] rounded up to whole workgroups of the
  // kernel's workgroup[d]; a Usage error naming the dimension when that needs 2^32 or more.
  static Grid for_lanes(const ir::Kernel& k, const std::array<uint64_t, 3>& lanes);
  uint64_t total_groups() const { return uint64_t{groups[0]} * groups[1] * groups[2]; }
};

// Throws a Usage error naming the kernel and parameter when the arguments do not fit the kernel:
// wrong count, a missing buffer, a buffer whose element type differs from the parameter's, a
// buffer where a scalar is expected or the reverse, or an empty grid.
void check_args(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args);

} // namespace halfway::rt
