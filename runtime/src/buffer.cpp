#include "halfway/runtime/buffer.hpp"

#include "halfway/ir/error.hpp"

#include <bit>
#include <cstdlib>
#include <new>

namespace halfway::rt {

void HostBuffer::Free::operator()(std::byte* p) const {
  std::free(p);
}

HostBuffer::HostBuffer(ir::ScalarType type, size_t count) : type_(type), count_(count) {
  if (type == ir::ScalarType::Bool)
    throw Error(ErrorKind::Usage, "buffers of bool do not exist; use u8 or u32");
  size_t bytes = (size_bytes() + 63) / 64 * 64;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(64, bytes ? bytes : 64));
  if (!p)
    throw Error(ErrorKind::Device,
                "out of host memory allocating " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, bytes ? bytes : 64);
  data_.reset(p);
}

void HostBuffer::check_view(size_t element_size) const {
  if (element_size != ir::bytes(type_))
    throw Error(ErrorKind::Usage, "typed view of a " + std::string(ir::name(type_)) +
                                      " buffer with elements of " + std::to_string(element_size) +
                                      " bytes");
}

uint64_t HostBuffer::get_bits(size_t i) const {
  uint64_t v = 0;
  std::memcpy(&v, data_.get() + i * ir::bytes(type_), ir::bytes(type_));
  return v;
}

void HostBuffer::set_bits(size_t i, uint64_t bits) {
  std::memcpy(data_.get() + i * ir::bytes(type_), &bits, ir::bytes(type_));
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
  uint64_t groups = (lanes + k.workgroup[0] - 1) / k.workgroup[0];
  if (groups > 0xffffffffull)
    throw Error(ErrorKind::Usage,
                "grid of " + std::to_string(lanes) + " lanes needs more than 2^32 workgroups",
                {.kernel = k.name});
  return Grid{{static_cast<uint32_t>(groups), 1, 1}};
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
