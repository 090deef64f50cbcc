#pragma once
// Bounding and interrupting a launch. Every device polls a Cancel at points that are cheap to
// reach often enough: the interpreter and the CPU device at loop back edges and between
// workgroups, Vulkan while it waits on its fence. A launch that observes expiry stops, restores
// every buffer it may have written (device.hpp) and throws ErrorKind::Timeout (the deadline
// passed) or ErrorKind::Interrupted (the flag was raised), naming the kernel, the device and the
// elapsed time.

#include "halfway/support/error.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace halfway::rt {

struct Cancel {
  using Clock = std::chrono::steady_clock;

  // No deadline: time_point::max(). Set from LaunchOptions::timeout at the start of a launch.
  Clock::time_point deadline = Clock::time_point::max();
  // Raised by someone else (a SIGINT handler, another thread) to interrupt; may be null.
  const std::atomic<bool>* flag = nullptr;
  Clock::time_point start = Clock::now();

  bool has_deadline() const { return deadline != Clock::time_point::max(); }
  bool interrupted() const { return flag && flag->load(std::memory_order_relaxed); }
  bool timed_out() const { return has_deadline() && Clock::now() >= deadline; }
  bool expired() const { return interrupted() || timed_out(); }

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start).count(); }

  // The error a device throws once expired() held: Interrupted when the flag is up, else Timeout.
  Error error(const std::string& kernel, const std::string& device) const;
};

} // namespace halfway::rt
