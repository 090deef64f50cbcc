#pragma once
// halfway's one thread mechanism: a small fixed pool of worker threads, used by the interpreter
// (its workgroup batches), the CPU device (its workgroups) and the benchmarks' hand-written
// baselines, so that all of them run with the same threading. Workers start with the default
// MXCSR (round to nearest, no FTZ or DAZ), and the calling thread runs with it for the duration
// of a job: the host's f32/f64 instructions and F16C conversions follow MXCSR (generated code
// rounds f32 -> f16 with vcvtps2ph $4), and FTZ/DAZ would change f32 arithmetic
// (docs/measured.md). A thread created by a caller that changed MXCSR would inherit the change.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace halfway::support {

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
  // done. Once any call returns false or throws, no further chunk starts: run returns false, or
  // rethrows the first exception a chunk threw. One job at a time: concurrent callers are
  // serialised.
  using Body = std::function<bool(uint64_t begin, uint64_t end)>;
  bool run(uint64_t n, uint64_t chunk, unsigned threads, const Body& body);

private:
  struct State;
  std::unique_ptr<State> state_;
};

// memcpy, split into blocks over up to `threads` threads of `pool` when it is large enough for
// that to pay (one thread alone does not reach the memory bandwidth); `pool` may be null.
void parallel_copy(void* dst, const void* src, size_t bytes, ThreadPool* pool, unsigned threads);

// Sets the default MXCSR (0x1f80: all exceptions masked, round to nearest, FTZ and DAZ off) on
// this thread until destroyed, then restores the old value.
class DefaultFloatEnvironment {
public:
  DefaultFloatEnvironment();
  ~DefaultFloatEnvironment();
  DefaultFloatEnvironment(const DefaultFloatEnvironment&) = delete;
  DefaultFloatEnvironment& operator=(const DefaultFloatEnvironment&) = delete;

private:
  unsigned saved_ = 0;
};

} // namespace halfway::support
