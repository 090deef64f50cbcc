#include "halfway/support/driver_call.hpp"

#include <algorithm>
#include <atomic>

namespace halfway::support {

namespace {
thread_local const DriverCallRecord* t_current = nullptr;
// Not state any result depends on: read only by a fatal-signal handler to say what crashed.
std::atomic<const DriverCallRecord*> g_latest{nullptr};
static_assert(std::atomic<const DriverCallRecord*>::is_always_lock_free);

template <size_t N> void copy_truncated(char (&to)[N], std::string_view from) {
  const size_t n = std::min(from.size(), N - 1);
  std::copy_n(from.data(), n, to);
  to[n] = '\0';
}
} // namespace

DriverCall::DriverCall(std::string_view kernel, std::string_view device,
                       std::string_view doing) noexcept
    : outer_(t_current) {
  copy_truncated(record_.kernel, kernel);
  copy_truncated(record_.device, device);
  copy_truncated(record_.doing, doing);
  t_current = &record_;
  g_latest.store(&record_, std::memory_order_release);
}

DriverCall::~DriverCall() {
  t_current = outer_;
  // Only when no later call replaced it: the record is about to go.
  const DriverCallRecord* self = &record_;
  g_latest.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

const DriverCallRecord* driver_call_in_flight() noexcept {
  if (t_current)
    return t_current;
  return g_latest.load(std::memory_order_acquire);
}

} // namespace halfway::support
