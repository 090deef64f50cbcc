#pragma once
// Reads the bit pattern of a host buffer's elements with the element size fixed once per buffer:
// the checker reads three buffers per element over millions of elements, and a call per element
// that looks the size up again and copies a variable number of bytes was most of its time.

#include "halfway/runtime/buffer.hpp"

#include <cstdint>
#include <cstring>

namespace halfway::diff::detail {

class ElementBits {
public:
  explicit ElementBits(const rt::HostBuffer& b)
      : data_(b.data()), bytes_(static_cast<uint32_t>(ir::bytes(b.type()))) {}

  uint64_t operator[](uint64_t i) const {
    switch (bytes_) {
    case 1:
      return read<uint8_t>(i);
    case 2:
      return read<uint16_t>(i);
    case 4:
      return read<uint32_t>(i);
    default:
      return read<uint64_t>(i);
    }
  }

  // Element i of a buffer whose elements are T (of the buffer's size).
  template <class T> T read(uint64_t i) const {
    T v;
    std::memcpy(&v, data_ + i * sizeof(T), sizeof(T));
    return v;
  }

  const std::byte* data() const { return data_; }

private:
  const std::byte* data_;
  uint32_t bytes_;
};

} // namespace halfway::diff::detail
