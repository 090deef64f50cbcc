#pragma once
// A small fixed pool of worker threads for the CPU device (and for the benchmarks' hand-written
// baselines, so that both run with the same threading). Workers start with the default MXCSR
// (round to nearest, no FTZ or DAZ), and the calling thread runs with it for the duration of a
// job: generated code rounds f32 -> f16 through MXCSR (vcvtps2ph $4) and FTZ/DAZ would change
// f32 arithmetic (docs/measured.md).

#include <cstdint>
#include <functional>
#include <memory>

namespace halfway::rt {

class ThreadPool {
public:
  // `threads` counts the calling thread: a pool of N starts N - 1 workers. 0: all cores.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const;

  // Calls body(begin, end) over consecutive chunks of [0, n) of at most `chunk` items, on up to
  // `threads` threads (0: all), the caller included, and returns when every started chunk is
  // done. Once any call returns false no further chunk starts, and run returns false. One job at
  // a time: concurrent callers are serialised.
  using Body = std::function<bool(uint64_t begin, uint64_t end)>;
  bool run(uint64_t n, uint64_t chunk, unsigned threads, const Body& body);

private:
  struct State;
  std::unique_ptr<State> state_;
};

// Sets the default MXCSR (0x1f80) on this thread until destroyed, then restores the old value.
class DefaultFloatEnvironment {
public:
  DefaultFloatEnvironment();
  ~DefaultFloatEnvironment();
  DefaultFloatEnvironment(const DefaultFloatEnvironment&) = delete;
  DefaultFloatEnvironment& operator=(const DefaultFloatEnvironment&) = delete;

private:
  unsigned saved_;
};

} // namespace halfway::rt
