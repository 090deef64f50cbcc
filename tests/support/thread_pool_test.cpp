// The one thread pool (support/thread_pool.hpp): every chunk runs once, a false return or an
// exception stops the job, the first exception reaches the caller, and the pool is usable after.
#include "halfway/support/error.hpp"
#include "halfway/support/thread_pool.hpp"

#include <atomic>
#include <gtest/gtest.h>
#include <numeric>
#include <stdexcept>
#include <vector>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace halfway::support {
namespace {

TEST(ThreadPool, RunsEveryChunkOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4u);
  std::vector<std::atomic<int>> hits(1000);
  EXPECT_TRUE(pool.run(hits.size(), 7, 0, [&](uint64_t begin, uint64_t end) {
    EXPECT_LE(end - begin, 7u);
    for (uint64_t i = begin; i < end; ++i)
      ++hits[i];
    return true;
  }));
  for (const auto& h : hits)
    EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, FalseStopsTheJob) {
  ThreadPool pool(3);
  std::atomic<uint64_t> ran{0};
  EXPECT_FALSE(pool.run(100000, 1, 0, [&](uint64_t begin, uint64_t) {
    ++ran;
    return begin != 10;
  }));
  EXPECT_LT(ran.load(), 100000u); // no chunk starts once one said stop (a few were under way)
}

TEST(ThreadPool, TheFirstExceptionReachesTheCaller) {
  ThreadPool pool(3);
  for (int round = 0; round < 3; ++round) {
    try {
      pool.run(1000, 1, 0, [&](uint64_t begin, uint64_t) -> bool {
        if (begin == 500)
          throw Error(ErrorKind::Limit, "chunk 500");
        return true;
      });
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Limit);
      EXPECT_EQ(e.message(), "chunk 500");
    }
  }
  // Still usable, and a clean job returns true.
  std::atomic<uint64_t> sum{0};
  EXPECT_TRUE(pool.run(100, 3, 2, [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i)
      sum += i;
    return true;
  }));
  EXPECT_EQ(sum.load(), 4950u);
}

TEST(ThreadPool, ParallelCopyCopiesEveryByte) {
  ThreadPool pool(2);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{3} << 20, (size_t{5} << 20) + 17}) {
    std::vector<unsigned char> from(bytes), to(bytes, 0);
    std::iota(from.begin(), from.end(), static_cast<unsigned char>(1));
    parallel_copy(to.data(), from.data(), bytes, &pool, 0);
    EXPECT_EQ(to, from) << bytes;
    std::fill(to.begin(), to.end(), 0);
    parallel_copy(to.data(), from.data(), bytes, nullptr, 0);
    EXPECT_EQ(to, from) << bytes;
  }
}

#if defined(__SSE__)
TEST(ThreadPool, WorkersAndTheCallerRunWithTheDefaultFloatEnvironment) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040); // FTZ and DAZ on
  ThreadPool pool(3);
  std::atomic<int> flushed{0};
  pool.run(64, 1, 0, [&](uint64_t, uint64_t) {
    if (_mm_getcsr() & 0x8040)
      ++flushed;
    return true;
  });
  EXPECT_EQ(flushed.load(), 0);
  EXPECT_EQ(_mm_getcsr() & 0x8040, 0x8040u); // the caller's own, back after the job
  _mm_setcsr(saved);
}
#endif

} // namespace
} // namespace halfway::support
