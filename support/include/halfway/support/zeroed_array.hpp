#pragma once
// A large array of trivially copyable elements whose pages start zeroed and are faulted in where
// they are first written: an anonymous mapping, advised to be backed by transparent huge pages.
// The checker keeps a few bytes per output element (hundreds of megabytes for 2^24 elements) and
// fills them from every worker thread; with 4 KiB pages each diff took tens of thousands of page
// faults for them, one per page, which cost more than the work on the elements did. Where the
// kernel does not back the advice (transparent huge pages off), it is ordinary zeroed memory.

#include <cstddef>
#include <new>
#include <type_traits>

namespace halfway::support {

class ZeroedPages {
public:
  ZeroedPages() = default;
  // Throws std::bad_alloc when the mapping cannot be made.
  explicit ZeroedPages(size_t bytes);
  ZeroedPages(ZeroedPages&& o) noexcept : data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  ZeroedPages& operator=(ZeroedPages&& o) noexcept;
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;
  ~ZeroedPages();

  void* data() const { return data_; }

private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

template <class T> class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T>);

public:
  ZeroedArray() = default;
  // Throws std::bad_alloc when count * sizeof(T) overflows or cannot be mapped.
  explicit ZeroedArray(size_t count) : pages_(bytes(count)) {}

  T* get() const { return static_cast<T*>(pages_.data()); }
  T& operator[](size_t i) const { return get()[i]; }

private:
  static size_t bytes(size_t count);
  ZeroedPages pages_;
};

template <class T> size_t ZeroedArray<T>::bytes(size_t count) {
  size_t b = 0;
  if (__builtin_mul_overflow(count, sizeof(T), &b))
    throw std::bad_alloc();
  return b;
}

} // namespace halfway::support
