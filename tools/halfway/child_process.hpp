#pragma once
// What `halfway fuzz` and `halfway reduce` share to run devices in a child process, so that a
// device that crashes (a Vulkan driver dereferencing a null pointer while it compiles valid
// SPIR-V) is a finding rather than the end of the command: frames over pipes, the encoding of a
// kernelgen::Check, and the child's end. A frame is a tag byte, a u64 length and the payload.

#include "halfway/kernelgen/campaign.hpp"

#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <type_traits>

namespace halfway::cli::child {

// The child failed and said why on stderr (an error other than a crash): exit with `status`.
struct AlreadyReported {
  int status = 2;
};

void put_raw(std::string& out, const void* p, size_t n);
template <class T> void put(std::string& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  put_raw(out, &v, sizeof v);
}
void put(std::string& out, const std::string& s);
void put(std::string& out, const kernelgen::Check& c);

// Reads a payload back in the order it was written; a short one is an Internal error naming
// `who` (the command whose child sent it).
struct Reader {
  const std::string& in;
  const char* who;
  size_t at = 0;
  void get_raw(void* p, size_t n);
  template <class T> T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    get_raw(&v, sizeof v);
    return v;
  }
  std::string get_string();
  kernelgen::Check get_check();
};

// Writes a frame from the child. When the parent is gone nobody is left to report to: the
// process ends (status 2).
void send(int fd, char tag, const std::string& payload);
// Writes a frame from the parent; false when the child is gone (no SIGPIPE reaches the process).
bool send_to_child(int fd, char tag, const std::string& payload);
// Reads a frame; false at the end of the stream before one. `who` names the command in errors.
bool receive(int fd, char& tag, std::string& payload, const char* who);
// Waits until `fd` has something to read (a frame, or the end of the stream), looking every 0.1 s
// whether Ctrl-C was pressed; false then. A child ignores Ctrl-C, and a check may run for its
// whole --timeout: the parent stops waiting at once instead.
bool wait_readable(int fd, const char* who);

// A child process and the parent's ends of its pipes. Leaving it (an exception from a callback:
// Ctrl-C) kills and reaps the child.
struct Child {
  pid_t pid = -1;
  int from = -1; // what the child writes
  int to = -1;   // what the child reads, when it reads anything
  const char* who = "";
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();
  // Waits for the child to end and returns its wait status.
  int wait();
};

// Starts a child process that runs `body(in, out)` and must not return: `out` is the pipe it
// writes to the parent (Child::from), `in` the pipe it reads from the parent (Child::to) when
// `requests` is set, else -1. In the child, first, its death is made the parent's to report (the
// default actions of fatal signals) and Ctrl-C the parent's too (ignored). The parent's output is
// flushed before the fork; a pipe or fork that fails throws Error(Io) naming `who`.
std::unique_ptr<Child> spawn(const char* who, bool requests,
                             const std::function<void(int in, int out)>& body);

// How a child that did not exit died, from its wait status: "SIGSEGV", or "an unknown way".
std::string how_it_died(int status);
// The cause of a check whose process died that way: "the device crashed (SIGSEGV)".
std::string crash_cause(const std::string& how);

} // namespace halfway::cli::child
