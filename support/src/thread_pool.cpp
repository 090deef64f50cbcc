#include "halfway/support/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace halfway::support {

namespace {
constexpr unsigned kDefaultMxcsr = 0x1f80;

void set_default_mxcsr() {
#if defined(__SSE__)
  _mm_setcsr(kDefaultMxcsr);
#endif
}
} // namespace

DefaultFloatEnvironment::DefaultFloatEnvironment() {
#if defined(__SSE__)
  saved_ = _mm_getcsr();
  _mm_setcsr(kDefaultMxcsr);
#endif
}
DefaultFloatEnvironment::~DefaultFloatEnvironment() {
#if defined(__SSE__)
  _mm_setcsr(saved_);
#endif
}

struct ThreadPool::State {
  std::mutex run_mutex; // one job at a time
  std::mutex mutex;
  std::condition_variable wake, finished;
  std::vector<std::thread> workers;
  bool quit = false;
  uint64_t generation = 0;

  // The current job.
  const Body* body = nullptr;
  uint64_t n = 0, chunk = 1;
  unsigned participants = 0; // workers (not counting the caller) that take part
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr failure; // the first exception a chunk threw (under `mutex`)
  unsigned running = 0;       // participants that have not finished

  void work() {
    for (;;) {
      uint64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n || stop.load(std::memory_order_relaxed))
        return;
      uint64_t end = std::min(n, begin + chunk);
      try {
        if (!(*body)(begin, end))
          stop.store(true, std::memory_order_relaxed);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure)
          failure = std::current_exception();
        stop.store(true, std::memory_order_relaxed);
      }
    }
  }

  void worker(unsigned index) {
    set_default_mxcsr();
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return quit || generation != seen; });
        if (quit)
          return;
        seen = generation;
        if (index >= participants)
          continue;
      }
      work();
      std::lock_guard lock(mutex);
      if (--running == 0)
        finished.notify_one();
    }
  }
};

ThreadPool::ThreadPool(unsigned threads) : state_(std::make_unique<State>()) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i + 1 < threads; ++i)
    state_->workers.emplace_back([s = state_.get(), i] { s->worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(state_->mutex);
    state_->quit = true;
  }
  state_->wake.notify_all();
  for (std::thread& t : state_->workers)
    t.join();
}

unsigned ThreadPool::size() const {
  return static_cast<unsigned>(state_->workers.size()) + 1;
}

bool ThreadPool::run(uint64_t n, uint64_t chunk, unsigned threads, const Body& body) {
  if (n == 0)
    return true;
  State& s = *state_;
  std::lock_guard job(s.run_mutex);
  DefaultFloatEnvironment env;
  chunk = std::max<uint64_t>(chunk, 1);
  unsigned total = threads == 0 ? size() : std::min(threads, size());
  unsigned helpers =
      static_cast<unsigned>(std::min<uint64_t>(total - 1, (n + chunk - 1) / chunk - 1));
  s.body = &body;
  s.n = n;
  s.chunk = chunk;
  s.next.store(0, std::memory_order_relaxed);
  s.stop.store(false, std::memory_order_relaxed);
  s.failure = nullptr;
  if (helpers > 0) {
    {
      std::lock_guard lock(s.mutex);
      s.participants = helpers;
      s.running = helpers;
      ++s.generation;
    }
    s.wake.notify_all();
  }
  s.work();
  if (helpers > 0) {
    std::unique_lock lock(s.mutex);
    s.finished.wait(lock, [&] { return s.running == 0; });
  }
  if (s.failure)
    std::rethrow_exception(std::exchange(s.failure, nullptr));
  return !s.stop.load(std::memory_order_relaxed);
}

void parallel_copy(void* dst, const void* src, size_t bytes, ThreadPool* pool, unsigned threads) {
  constexpr uint64_t kBlock = 1 << 20;
  auto* to = static_cast<std::byte*>(dst);
  const auto* from = static_cast<const std::byte*>(src);
  if (bytes < 2 * kBlock || !pool || pool->size() == 1 || threads == 1) {
    if (bytes)
      std::memcpy(to, from, bytes);
    return;
  }
  pool->run((bytes + kBlock - 1) / kBlock, 1, threads, [&](uint64_t begin, uint64_t end) {
    const uint64_t first = begin * kBlock, last = std::min<uint64_t>(bytes, end * kBlock);
    std::memcpy(to + first, from + first, last - first);
    return true;
  });
}

} // namespace halfway::support
