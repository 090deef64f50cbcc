#pragma once
// What keeps a failed launch from changing any buffer. The kernel runs on the caller's buffers in
// place, after the contents of every buffer bound to a writable parameter were saved; a failed
// launch copies the saved contents back. This costs one copy per launch (a copy-and-commit scheme
// costs two), and the save areas are kept for the next launch so that big launches do not pay
// for fresh pages every time.

#include "halfway/ir/kernel.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/support/thread_pool.hpp"

#include <memory>
#include <span>
#include <vector>

namespace halfway::interp {

class Backup {
public:
  Backup() = default;
  ~Backup();
  Backup(const Backup&) = delete;
  Backup& operator=(const Backup&) = delete;

  // Saves every buffer bound to a write or read_write parameter (once per distinct buffer); large
  // copies are split over up to `threads` threads of `workers`, which must outlive this object.
  void save(const ir::Kernel& k, std::span<const rt::Arg> args, support::ThreadPool& workers,
            unsigned threads);
  // Puts the saved contents back.
  void restore();

private:
  struct Saved {
    rt::HostBuffer* buffer;
    std::byte* copy;
    size_t capacity;
  };
  std::vector<Saved> saved_;
  support::ThreadPool* workers_ = nullptr;
  unsigned threads_ = 1;
};

} // namespace halfway::interp
