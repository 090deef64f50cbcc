#pragma once
// Reads the bit pattern of a host buffer's elements with the element size fixed once per buffer:
// the checker reads three buffers per element over millions of elements, and a call per element
// that looks the size up again and copies a variable number of bytes was most of its time.

#include "halfway/diff/compare.hpp"
#include "halfway/runtime/buffer.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

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

// same_bits and distance (compare.hpp) for one buffer's elements, inline where the controls
// flush nothing of its float type and preserve signed zeros, infinities and NaNs: then the only
// same results are equal patterns and two NaNs, and the distance between two numbers is that of
// their sign-magnitude positions. The checker calls them for every element that differs.
class ElementCompare {
public:
  ElementCompare() = default; // u32 elements: equal bits
  ElementCompare(ir::ScalarType type, const num::FloatControls& controls)
      : type_(type), controls_(controls) {
    if (const std::optional<num::Format> f = float_format(type)) {
      const num::FormatInfo& i = num::info(*f);
      plain_ = !num::flushes(*f, controls) && controls.preserve_signed_zero_inf_nan;
      sign_ = i.sign_mask;
      magnitude_ = i.sign_mask - 1; // the sign is the top bit
      nan_above_ = i.has_inf ? i.exp_mask : i.max_finite;
    }
  }

  bool same(uint64_t r, uint64_t d) const {
    if (r == d)
      return true;
    return plain_ ? nan(r) && nan(d) : same_bits(type_, r, d, controls_);
  }

  uint64_t distance(uint64_t a, uint64_t b) const {
    if (!plain_)
      return diff::distance(type_, a, b, controls_);
    const bool na = nan(a), nb = nan(b);
    if (na || nb)
      return na && nb ? 0 : std::numeric_limits<uint64_t>::max();
    const uint64_t ma = a & magnitude_, mb = b & magnitude_;
    if ((a ^ b) & sign_) // on either side of zero (at most 2^64 - 2 apart)
      return ma + mb;
    return ma > mb ? ma - mb : mb - ma;
  }

  // Whether the inline rules hold (a float type, nothing flushed, zeros, infinities and NaNs
  // preserved); then a pattern is a NaN when its magnitude bits (the sign left out) exceed
  // nan_above(). The judge decides eight elements at a time with them (sites.cpp).
  bool plain() const { return plain_; }
  uint64_t magnitude() const { return magnitude_; }
  uint64_t nan_above() const { return nan_above_; }

private:
  bool nan(uint64_t v) const { return (v & magnitude_) > nan_above_; }

  ir::ScalarType type_ = ir::ScalarType::U32;
  num::FloatControls controls_;
  bool plain_ = false;
  uint64_t sign_ = 0, magnitude_ = 0, nan_above_ = 0;
};

} // namespace halfway::diff::detail
