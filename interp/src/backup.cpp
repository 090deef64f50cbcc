#include "backup.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>

namespace halfway::interp {

namespace {

// Save areas kept between launches: at most a few, at most 1 GiB in all.
class Pool {
public:
  std::pair<std::byte*, size_t> take(size_t bytes) {
    {
      std::lock_guard lock(mutex_);
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->second >= bytes && (best == free_.end() || it->second < best->second))
          best = it;
      if (best != free_.end()) {
        auto block = *best;
        free_.erase(best);
        cached_ -= block.second;
        return block;
      }
    }
    size_t size = std::max<size_t>(64, (bytes + 63) / 64 * 64);
    auto* p = static_cast<std::byte*>(std::aligned_alloc(64, size));
    if (!p)
      throw std::bad_alloc();
    return {p, size};
  }
  void give(std::byte* p, size_t size) {
    std::lock_guard lock(mutex_);
    free_.emplace_back(p, size);
    cached_ += size;
    while (free_.size() > 4 || cached_ > (size_t{1} << 30)) {
      auto smallest = std::min_element(free_.begin(), free_.end(),
                                       [](auto& a, auto& b) { return a.second < b.second; });
      cached_ -= smallest->second;
      std::free(smallest->first);
      free_.erase(smallest);
    }
  }

private:
  std::mutex mutex_;
  std::vector<std::pair<std::byte*, size_t>> free_;
  size_t cached_ = 0;
};

Pool& pool() {
  static Pool* p = new Pool; // never destroyed: launches may run during static destruction
  return *p;
}

} // namespace

Backup::~Backup() {
  for (Saved& s : saved_)
    pool().give(s.copy, s.capacity);
}

void Backup::save(const ir::Kernel& k, std::span<const rt::Arg> args, support::ThreadPool& workers,
                  unsigned threads) {
  workers_ = &workers;
  threads_ = threads;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!k.params[i].is_buffer() || k.params[i].access == ir::Access::Read)
      continue;
    rt::HostBuffer* b = args[i].buffer;
    if (std::any_of(saved_.begin(), saved_.end(), [&](const Saved& s) { return s.buffer == b; }))
      continue;
    auto [copy, capacity] = pool().take(b->size_bytes());
    saved_.push_back({b, copy, capacity});
    support::parallel_copy(copy, b->data(), b->size_bytes(), workers_, threads_);
  }
}

void Backup::restore() {
  for (Saved& s : saved_)
    support::parallel_copy(s.buffer->data(), s.copy, s.buffer->size_bytes(), workers_, threads_);
}

} // namespace halfway::interp
