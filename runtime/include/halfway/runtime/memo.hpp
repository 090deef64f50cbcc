#pragma once
// The launch memo: compiled code keyed by (kernel structural hash, device, budget). A kernel
// compiled before an opt-in was accepted has a different budget key, so its next launch misses
// and is regenerated without barriers; nothing is ever invalidated by hand.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace halfway::rt {

struct MemoKey {
  uint64_t kernel_hash = 0;
  std::string device;
  uint64_t budget_key = 0;
  uint64_t variant = 0; // device-specific options that change code (e.g. bounds checking)
  auto operator<=>(const MemoKey&) const = default;
};

template <class Compiled> class LaunchMemo {
public:
  // The entry for `key`, made by `make()` on a miss. `hit` reports which. Thread-safe; two
  // threads missing on the same key at once may both compile, and the first result is kept.
  std::shared_ptr<Compiled> get(const MemoKey& key,
                                const std::function<std::shared_ptr<Compiled>()>& make,
                                bool* hit = nullptr) {
    {
      std::lock_guard lock(mutex_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        if (hit)
          *hit = true;
        return it->second;
      }
    }
    if (hit)
      *hit = false;
    auto made = make();
    std::lock_guard lock(mutex_);
    return entries_.emplace(key, std::move(made)).first->second;
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

private:
  mutable std::mutex mutex_;
  std::map<MemoKey, std::shared_ptr<Compiled>> entries_;
};

} // namespace halfway::rt
