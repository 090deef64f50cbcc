#pragma once
// What halfway was asking of a third-party driver when the process received a fatal signal.
//
// A Vulkan driver is code halfway cannot make safe: Mesa 22.3's lavapipe, for one, dereferences
// a null pointer while compiling some valid SPIR-V (a loop whose only path to its continue
// target is a branch the driver folds away, followed by a read of a variable the loop wrote).
// Nothing can continue after such a crash, but the user is owed the message every other failure
// gets: which kernel, on which device, doing what. A DriverCall names the call for its lifetime;
// an application's fatal-signal handler (the CLI's: tools/halfway) reads it with
// driver_call_in_flight() and reports it instead of dying silently with status 139. The library
// installs no signal handler itself: that is the application's to decide.
//
// The record is a fixed-size copy, so that reading it needs neither the heap nor a lock: the
// calling thread's own record first (a pipeline compile runs on it), else the most recent one
// any thread began (a dispatch runs on the driver's own threads, which hold none).

#include <string_view>

namespace halfway::support {

struct DriverCallRecord {
  char kernel[128] = {};
  char device[128] = {};
  char doing[64] = {}; // "compiling the pipeline", "running the dispatch"
};

class DriverCall {
public:
  DriverCall(std::string_view kernel, std::string_view device, std::string_view doing) noexcept;
  ~DriverCall();
  DriverCall(const DriverCall&) = delete;
  DriverCall& operator=(const DriverCall&) = delete;

private:
  DriverCallRecord record_;
  const DriverCallRecord* outer_; // this thread's enclosing call, restored on destruction
};

// The call in flight on this thread, else the latest any thread began that has not ended, else
// nullptr. Async-signal-safe: for a SIGSEGV handler.
const DriverCallRecord* driver_call_in_flight() noexcept;

} // namespace halfway::support
