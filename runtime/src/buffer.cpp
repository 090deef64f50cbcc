#include "halfway/runtime/buffer.hpp"

#include "halfway/support/error.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

namespace halfway::rt {

namespace {

std::atomic<bool> force_unguarded{false};

size_t page_size() {
  static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

[[noreturn]] void out_of_memory(uint64_t bytes) {
  throw Error(ErrorKind::Device,
              "out of host memory allocating " + std::to_string(bytes) + " bytes");
}

} // namespace

void HostBuffer::force_unguarded_for_testing(bool on) {
  force_unguarded = on;
}

HostBuffer::HostBuffer(ir::ScalarType type, size_t count) : type_(type), count_(count) {
  if (type == ir::ScalarType::Bool)
    throw Error(ErrorKind::Usage, "buffers of bool do not exist; use u8 or u32");
  uint64_t element = ir::bytes(type);
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(uint64_t{count}, element, &bytes))
    throw Error(ErrorKind::Usage, "a buffer of " + std::to_string(count) + " " +
                                      std::string(ir::name(type)) +
                                      " elements needs more than 2^64 bytes");
  // More than the machine's memory can never be had; refusing it here keeps a lazily committed
  // mapping from succeeding now and failing (OOM) when it is filled.
  uint64_t physical = uint64_t(::sysconf(_SC_PHYS_PAGES)) * page_size();
  if (bytes > physical)
    out_of_memory(bytes);
  uint64_t page = page_size();
  uint64_t data_span = (bytes + page - 1) / page * page;
  uint64_t guard = (element << 32) + page;
  if (!force_unguarded.load(std::memory_order_relaxed)) {
    // Reserve data and guard as inaccessible address space, then map the data part (rounded up
    // to pages) readable and writable at its start, so that the data ends where the guard begins.
    uint64_t total = data_span + guard;
    void* base =
        ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base != MAP_FAILED) {
      bool ok = data_span == 0 || ::mmap(base, data_span, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == base;
      if (ok) {
        mapping_ = base;
        mapping_bytes_ = total;
        data_ = static_cast<std::byte*>(base) + data_span - bytes;
        guard_end_ = static_cast<std::byte*>(base) + total;
        guarded_ = true;
        return; // anonymous pages are zero
      }
      ::munmap(base, total);
    }
  }
  // Unguarded: a plain allocation (devices check every access).
  uint64_t alloc = std::max<uint64_t>(64, (bytes + 63) / 64 * 64);
  auto* p = static_cast<std::byte*>(std::aligned_alloc(64, alloc));
  if (!p)
    out_of_memory(bytes);
  std::memset(p, 0, alloc);
  mapping_ = p;
  mapping_bytes_ = alloc;
  data_ = p;
}

void HostBuffer::release() noexcept {
  if (guarded_)
    ::munmap(mapping_, mapping_bytes_);
  else
    std::free(mapping_);
  mapping_ = nullptr;
  data_ = nullptr;
  guard_end_ = nullptr;
  guarded_ = false;
  mapping_bytes_ = 0;
}

HostBuffer::~HostBuffer() {
  release();
}

HostBuffer::HostBuffer(HostBuffer&& o) noexcept
    : type_(o.type_), count_(o.count_), data_(o.data_), mapping_(o.mapping_),
      mapping_bytes_(o.mapping_bytes_), guard_end_(o.guard_end_), guarded_(o.guarded_) {
  o.mapping_ = nullptr;
  o.data_ = nullptr;
  o.guard_end_ = nullptr;
  o.guarded_ = false;
  o.count_ = 0;
}

HostBuffer& HostBuffer::operator=(HostBuffer&& o) noexcept {
  if (this != &o) {
    release();
    type_ = o.type_;
    count_ = o.count_;
    data_ = o.data_;
    mapping_ = o.mapping_;
    mapping_bytes_ = o.mapping_bytes_;
    guard_end_ = o.guard_end_;
    guarded_ = o.guarded_;
    o.mapping_ = nullptr;
    o.data_ = nullptr;
    o.guard_end_ = nullptr;
    o.guarded_ = false;
    o.count_ = 0;
  }
  return *this;
}

void HostBuffer::check_view(size_t element_size) const {
  if (element_size != ir::bytes(type_))
    throw Error(ErrorKind::Usage, "typed view of a " + std::string(ir::name(type_)) +
                                      " buffer with elements of " + std::to_string(element_size) +
                                      " bytes");
}

uint64_t HostBuffer::get_bits(size_t i) const {
  uint64_t v = 0;
  std::memcpy(&v, data_ + i * ir::bytes(type_), ir::bytes(type_));
  return v;
}

void HostBuffer::set_bits(size_t i, uint64_t bits) {
  std::memcpy(data_ + i * ir::bytes(type_), &bits, ir::bytes(type_));
}

HostBuffer HostBuffer::clone() const {
  HostBuffer b(type_, count_);
  if (count_)
    std::memcpy(b.data(), data(), size_bytes());
  return b;
}

bool HostBuffer::operator==(const HostBuffer& o) const {
  return type_ == o.type_ && count_ == o.count_ &&
         (count_ == 0 || std::memcmp(data(), o.data(), size_bytes()) == 0);
}

Arg Arg::f32(float v) {
  return {nullptr, std::bit_cast<uint32_t>(v)};
}

Grid Grid::for_lanes(const ir::Kernel& k, uint64_t lanes) {
  uint64_t x = std::max<uint32_t>(1, k.workgroup[0]);
  uint64_t groups = lanes / x + (lanes % x != 0); // lanes + x - 1 would wrap near 2^64
  if (groups > 0xffffffffull)
    throw Error(ErrorKind::Usage,
                "grid of " + std::to_string(lanes) + " lanes needs more than 2^32 workgroups",
                {.kernel = k.name});
  return Grid{{static_cast<uint32_t>(groups), 1, 1}};
}

Grid Grid::for_lanes(const ir::Kernel& k, const std::array<uint64_t, 3>& lanes) {
  Grid g;
  for (int d = 0; d < 3; ++d) {
    uint64_t size = std::max<uint32_t>(1, k.workgroup[d]);
    uint64_t groups = lanes[d] / size + (lanes[d] % size != 0);
    if (groups > 0xffffffffull)
      throw Error(ErrorKind::Usage,
                  "grid of " + std::to_string(lanes[d]) + " lanes along " + "xyz"[d] +
                      " needs more than 2^32 workgroups",
                  {.kernel = k.name});
    g.groups[d] = static_cast<uint32_t>(groups);
  }
  return g;
}

void check_args(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args) {
  ErrorContext c;
  c.kernel = k.name;
  if (args.size() != k.params.size())
    throw Error(ErrorKind::Usage,
                "kernel takes " + std::to_string(k.params.size()) + " arguments, " +
                    std::to_string(args.size()) + " given",
                c);
  if (grid.total_groups() == 0)
    throw Error(ErrorKind::Usage, "empty grid", c);
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Param& p = k.params[i];
    c.buffer = p.name;
    if (p.is_buffer() && !args[i].buffer)
      throw Error(ErrorKind::Usage, "parameter " + p.name + " is a buffer; no buffer given", c);
    if (!p.is_buffer() && args[i].buffer)
      throw Error(ErrorKind::Usage, "parameter " + p.name + " is a scalar; a buffer was given", c);
    if (p.is_buffer() && args[i].buffer->type() != p.type)
      throw Error(ErrorKind::Usage,
                  "buffer " + p.name + " holds " + std::string(ir::name(p.type)) + " elements; a " +
                      std::string(ir::name(args[i].buffer->type())) + " buffer was given",
                  c);
    if (p.is_buffer() && args[i].buffer->size() > 0xffffffffull)
      throw Error(ErrorKind::Usage, "buffer " + p.name + " has more than 2^32 elements", c);
  }
}

} // namespace halfway::rt
