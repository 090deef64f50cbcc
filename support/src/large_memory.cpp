#include "halfway/support/large_memory.hpp"

#include <cstdlib>
#include <sys/mman.h>

namespace halfway::support {

void advise_huge_pages(void* p, size_t bytes) noexcept {
  if (p && bytes >= kHugeAdviceBytes)
    (void)::madvise(p, bytes, MADV_HUGEPAGE);
}

void* allocate_large(size_t bytes) {
  if (bytes < kHugeAdviceBytes) {
    void* p = std::calloc(bytes ? bytes : 1, 1);
    if (!p)
      throw std::bad_alloc();
    return p;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw std::bad_alloc();
  advise_huge_pages(p, bytes);
  return p; // anonymous pages are zero
}

void free_large(void* p, size_t bytes) noexcept {
  if (!p)
    return;
  if (bytes < kHugeAdviceBytes)
    std::free(p);
  else
    ::munmap(p, bytes);
}

} // namespace halfway::support
