#pragma once
// The worker threads of one launch. Workers run with the default MXCSR (round to nearest, no
// flush-to-zero, no denormals-are-zero): the host's f32/f64 instructions and F16C conversions
// follow MXCSR, and a thread created by a caller that changed it would inherit the change.

#include <cstddef>
#include <exception>
#include <functional>

namespace halfway::interp {

// Sets the default MXCSR for its lifetime and restores the previous one after.
class DefaultFloatEnvironment {
public:
  DefaultFloatEnvironment();
  ~DefaultFloatEnvironment();
  DefaultFloatEnvironment(const DefaultFloatEnvironment&) = delete;
  DefaultFloatEnvironment& operator=(const DefaultFloatEnvironment&) = delete;

private:
  unsigned saved_ = 0;
};

// Runs work(worker) for worker = 0 .. threads-1, worker 0 on the calling thread, each under the
// default float environment; rethrows the first exception any of them threw.
void run_workers(unsigned threads, const std::function<void(unsigned worker)>& work);

// memcpy, split across threads when it is large.
void parallel_copy(void* dst, const void* src, size_t bytes, unsigned threads);

} // namespace halfway::interp
