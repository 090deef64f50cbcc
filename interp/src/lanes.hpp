#pragma once
// Active-lane masks. A mask is one byte per lane (0 or 1) plus the count of active lanes, so that
// the common case of every lane active runs a plain loop without tests.

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace halfway::interp {

class LaneMask {
public:
  LaneMask() = default;
  explicit LaneMask(uint32_t capacity) : on_(capacity, 0) {}

  uint32_t size() const { return n_; }
  uint32_t count() const { return count_; }
  bool all() const { return count_ == n_; }
  bool none() const { return count_ == 0; }
  bool operator[](uint32_t i) const { return on_[i] != 0; }
  const uint8_t* data() const { return on_.data(); }

  // The first n lanes on (capacity must allow n).
  void reset(uint32_t n) {
    n_ = n;
    std::memset(on_.data(), 1, n);
    std::memset(on_.data() + n, 0, on_.size() - n);
    count_ = n;
  }
  // n lanes, none of them on.
  void reset_empty(uint32_t n) {
    n_ = n;
    clear();
  }
  void clear() {
    std::memset(on_.data(), 0, on_.size());
    count_ = 0;
  }
  void assign(const LaneMask& o) {
    n_ = o.n_;
    count_ = o.count_;
    std::memcpy(on_.data(), o.on_.data(), on_.size());
  }
  void set(uint32_t i) {
    count_ += on_[i] == 0;
    on_[i] = 1;
  }
  // this &= cond (cond: one byte per lane, nonzero = true).
  void and_with(const uint8_t* cond) {
    count_ = combine(on_.data(), on_.data(), cond, n_,
                     [](uint8_t a, uint8_t b) { return a & (b != 0); });
  }
  // this = base & !cond.
  void and_not_of(const LaneMask& base, const uint8_t* cond) {
    n_ = base.n_;
    count_ = combine(on_.data(), base.on_.data(), cond, n_,
                     [](uint8_t a, uint8_t b) { return a & (b == 0); });
  }
  // this &= !other.
  void and_not(const LaneMask& other) {
    count_ = combine(on_.data(), on_.data(), other.on_.data(), n_,
                     [](uint8_t a, uint8_t b) { return a & (b ^ 1); });
  }
  // this |= other.
  void or_with(const LaneMask& other) {
    if (other.none())
      return;
    count_ = combine(on_.data(), on_.data(), other.on_.data(), n_,
                     [](uint8_t a, uint8_t b) { return a | b; });
  }

private:
  // out[i] = f(a[i], b[i]) for i < n; returns the number of lanes on. Plain locals and byte
  // arithmetic so that the loop vectorises (a store through uint8_t* may alias any member).
  template <class F>
  static uint32_t combine(uint8_t* out, const uint8_t* a, const uint8_t* b, uint32_t n, F f) {
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t v = f(a[i], b[i]);
      out[i] = v;
      count += v;
    }
    return count;
  }

  std::vector<uint8_t> on_;
  uint32_t n_ = 0;
  uint32_t count_ = 0;
};

// Masks for nested control flow, reused across statements and batches: push and pop in stack
// order. References stay valid while the stack grows.
class MaskStack {
public:
  void set_capacity(uint32_t capacity) { capacity_ = capacity; }
  LaneMask& push() {
    if (top_ == masks_.size())
      masks_.push_back(std::make_unique<LaneMask>(capacity_));
    return *masks_[top_++];
  }
  void pop() { --top_; }

private:
  uint32_t capacity_ = 0;
  size_t top_ = 0;
  std::vector<std::unique_ptr<LaneMask>> masks_;
};

// A mask from the stack for the duration of one compound statement.
struct ScopedMask {
  explicit ScopedMask(MaskStack& s) : stack(s), m(s.push()) {}
  ~ScopedMask() { stack.pop(); }
  ScopedMask(const ScopedMask&) = delete;
  ScopedMask& operator=(const ScopedMask&) = delete;
  MaskStack& stack;
  LaneMask& m;
};

// Calls f(lane) for every active lane, in increasing lane order. Sparse masks are common (a
// reduction's last steps run one lane of 256), so it skips eight inactive lanes at a time and
// stops after the last active one.
template <class F> inline void for_active(const LaneMask& m, F&& f) {
  const uint32_t n = m.size();
  if (m.all()) {
    for (uint32_t i = 0; i < n; ++i)
      f(i);
    return;
  }
  uint32_t left = m.count();
  const uint8_t* on = m.data();
  uint32_t i = 0;
  for (; left && i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, on + i, 8);
    if (!word)
      continue;
    // Bytes of 0 or 1 -> bit k set when byte k is 1.
    auto bits = static_cast<uint32_t>((word * 0x0102040810204080ull) >> 56);
    while (bits) {
      f(i + static_cast<uint32_t>(__builtin_ctz(bits)));
      bits &= bits - 1;
      --left;
    }
  }
  for (; left && i < n; ++i)
    if (on[i]) {
      f(i);
      --left;
    }
}

} // namespace halfway::interp
