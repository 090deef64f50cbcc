#include "halfway/support/zeroed_array.hpp"

#include <new>
#include <sys/mman.h>

namespace halfway::support {

ZeroedPages::ZeroedPages(size_t bytes) : bytes_(bytes) {
  if (bytes == 0)
    return;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw std::bad_alloc();
  // Only advice: refused (no transparent huge pages) it changes nothing.
  (void)::madvise(p, bytes, MADV_HUGEPAGE);
  data_ = p;
}

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& o) noexcept {
  if (this != &o) {
    if (data_)
      ::munmap(data_, bytes_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

ZeroedPages::~ZeroedPages() {
  if (data_)
    ::munmap(data_, bytes_);
}

} // namespace halfway::support
