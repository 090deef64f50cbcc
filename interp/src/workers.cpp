#include "workers.hpp"

#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace halfway::interp {

DefaultFloatEnvironment::DefaultFloatEnvironment() {
#if defined(__SSE__)
  saved_ = _mm_getcsr();
  _mm_setcsr(0x1f80); // all exceptions masked, round to nearest, FTZ and DAZ off
#endif
}

DefaultFloatEnvironment::~DefaultFloatEnvironment() {
#if defined(__SSE__)
  _mm_setcsr(saved_);
#endif
}

void run_workers(unsigned threads, const std::function<void(unsigned)>& work) {
  std::mutex mutex;
  std::exception_ptr first;
  auto guarded = [&](unsigned w) {
    DefaultFloatEnvironment env;
    try {
      work(w);
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!first)
        first = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < threads; ++w)
    pool.emplace_back(guarded, w);
  guarded(0);
  for (std::thread& t : pool)
    t.join();
  if (first)
    std::rethrow_exception(first);
}

void parallel_copy(void* dst, const void* src, size_t bytes, unsigned threads) {
  constexpr size_t kMinChunk = size_t{4} << 20;
  if (threads <= 1 || bytes < 2 * kMinChunk) {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return;
  }
  const size_t chunk = (bytes / threads + 63) / 64 * 64;
  run_workers(threads, [&](unsigned w) {
    const size_t begin = std::min(bytes, w * chunk), end = std::min(bytes, begin + chunk);
    if (end > begin)
      std::memcpy(static_cast<std::byte*>(dst) + begin, static_cast<const std::byte*>(src) + begin,
                  end - begin);
  });
}

} // namespace halfway::interp
