#pragma once
// Large host allocations: buffers, shadow and verdict arrays of millions of elements. Each fresh
// 4 KiB page costs a fault, and inside a virtual machine (EPT) that fault costs a few
// microseconds, which made faulting in the two copies of a differential run's buffers most of a
// strict diff's time (docs/measured.md). Regions of at least kHugeAdviceBytes are therefore
// advised as transparent huge pages (MADV_HUGEPAGE), which the kernel honours where THP is
// enabled in "always" or "madvise" mode: one fault per 2 MiB. The advice changes nothing else;
// where the kernel ignores it the memory is as before.

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace halfway::support {

inline constexpr size_t kHugeAdviceBytes = size_t{4} << 20;

// Advises [p, p + bytes) as huge-page backed when it is at least kHugeAdviceBytes (p page
// aligned, part of an anonymous private mapping). Best effort: errors are ignored.
void advise_huge_pages(void* p, size_t bytes) noexcept;

// Zero-filled memory of `bytes`, page aligned when large (an anonymous mapping, advised as
// above), else from calloc. Throws std::bad_alloc. Free with free_large(p, bytes).
void* allocate_large(size_t bytes);
void free_large(void* p, size_t bytes) noexcept;

// An array of `n` T (trivial types) in zero-filled large memory: all bits zero.
template <class T> class LargeArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

public:
  LargeArray() = default;
  explicit LargeArray(size_t n) : n_(n) {
    if (n > static_cast<size_t>(-1) / sizeof(T))
      throw std::bad_alloc();
    p_ = static_cast<T*>(allocate_large(n * sizeof(T)));
  }
  ~LargeArray() { free_large(p_, n_ * sizeof(T)); }
  LargeArray(LargeArray&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  LargeArray& operator=(LargeArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;

  T* get() { return p_; }
  const T* get() const { return p_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  size_t size() const { return n_; }
  explicit operator bool() const { return p_ != nullptr; }

private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// A std::allocator for vectors that grow to millions of elements (zero-filled, huge-page advised
// when large, as allocate_large).
template <class T> struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U> LargeAllocator(const LargeAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T))
      throw std::bad_alloc();
    return static_cast<T*>(allocate_large(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { free_large(p, n * sizeof(T)); }
  template <class U> bool operator==(const LargeAllocator<U>&) const noexcept { return true; }
};

template <class T> using LargeVector = std::vector<T, LargeAllocator<T>>;

} // namespace halfway::support
