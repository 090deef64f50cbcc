#include "child_process.hpp"

#include "cli_util.hpp"
#include "halfway/support/error.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <poll.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

namespace halfway::cli::child {

void put_raw(std::string& out, const void* p, size_t n) {
  out.append(static_cast<const char*>(p), n);
}

void put(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

void put(std::string& out, const kernelgen::Check& c) {
  put(out, c.outcome);
  put(out, c.cause);
  put(out, c.violations);
  put(out, c.undecided);
  put(out, c.undecided_lanes);
  put(out, c.unchecked);
  put(out, c.report);
}

void Reader::get_raw(void* p, size_t n) {
  if (n > in.size() - at)
    throw Error(ErrorKind::Internal, std::string(who) + ": a truncated message from its process");
  std::memcpy(p, in.data() + at, n);
  at += n;
}

std::string Reader::get_string() {
  const auto n = get<uint64_t>();
  if (n > in.size() - at)
    throw Error(ErrorKind::Internal, std::string(who) + ": a truncated message from its process");
  std::string s = in.substr(at, n);
  at += n;
  return s;
}

kernelgen::Check Reader::get_check() {
  kernelgen::Check c;
  c.outcome = get<kernelgen::Outcome>();
  c.cause = get_string();
  c.violations = get<uint64_t>();
  c.undecided = get<uint64_t>();
  c.undecided_lanes = get<uint64_t>();
  c.unchecked = get<uint64_t>();
  c.report = get_string();
  return c;
}

namespace {

// False when the other end is gone.
bool write_all(int fd, const std::string& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

std::string frame(char tag, const std::string& payload) {
  std::string out(1, tag);
  put<uint64_t>(out, payload.size());
  return out + payload;
}

// False at the end of the stream before the first byte.
bool read_all(int fd, void* p, size_t n, const char* who) {
  auto* to = static_cast<char*>(p);
  size_t at = 0;
  while (at < n) {
    const ssize_t got = ::read(fd, to + at, n - at);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      throw Error(ErrorKind::Io,
                  std::string(who) + ": reading from its process: " + std::strerror(errno));
    if (got == 0) {
      if (at == 0)
        return false;
      throw Error(ErrorKind::Internal, std::string(who) + ": a truncated message from its process");
    }
    at += static_cast<size_t>(got);
  }
  return true;
}

} // namespace

void send(int fd, char tag, const std::string& payload) {
  if (!write_all(fd, frame(tag, payload)))
    std::_Exit(2); // the parent is gone: nobody is left to report to
}

bool send_to_child(int fd, char tag, const std::string& payload) {
  // A write to a pipe whose reader has died raises SIGPIPE, which would end this process without
  // a word: blocked for the write, and a pending one taken back before it is unblocked.
  sigset_t pipe_signal, before;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &before);
  const bool ok = write_all(fd, frame(tag, payload));
  if (!ok) {
    const timespec now{};
    while (::sigtimedwait(&pipe_signal, nullptr, &now) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return ok;
}

bool receive(int fd, char& tag, std::string& payload, const char* who) {
  if (!read_all(fd, &tag, 1, who))
    return false;
  uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n, who))
    throw Error(ErrorKind::Internal, std::string(who) + ": a truncated message from its process");
  payload.assign(n, '\0');
  if (n && !read_all(fd, payload.data(), n, who))
    throw Error(ErrorKind::Internal, std::string(who) + ": a truncated message from its process");
  return true;
}

bool wait_readable(int fd, const char* who) {
  for (;;) {
    if (interrupt_requested())
      return false;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, 100);
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      throw Error(ErrorKind::Io,
                  std::string(who) + ": waiting for its process: " + std::strerror(errno));
  }
}

Child::~Child() {
  if (from >= 0)
    ::close(from);
  if (to >= 0)
    ::close(to);
  if (pid > 0) {
    ::kill(pid, SIGKILL);
    int ignored = 0;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
  }
}

int Child::wait() {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw Error(ErrorKind::Internal,
                  std::string(who) + ": waiting for its process: " + std::strerror(errno));
  pid = -1;
  return status;
}

namespace {

void make_pipe(int fds[2], const char* who) {
  if (::pipe(fds) != 0)
    throw Error(ErrorKind::Io, std::string(who) + ": cannot make a pipe: " + std::strerror(errno));
}

} // namespace

std::unique_ptr<Child> spawn(const char* who, bool requests,
                             const std::function<void(int in, int out)>& body) {
  auto c = std::make_unique<Child>();
  c->who = who;
  int up[2];
  make_pipe(up, who);
  c->from = up[0]; // closed by c from here on
  int down[2] = {-1, -1};
  if (requests) {
    try {
      make_pipe(down, who);
    } catch (...) {
      ::close(up[1]);
      throw;
    }
    c->to = down[1];
  }
  std::fflush(stdout);
  std::fflush(stderr);
  c->pid = ::fork();
  if (c->pid < 0) {
    const int err = errno;
    ::close(up[1]);
    if (requests)
      ::close(down[0]);
    c->pid = -1;
    throw Error(ErrorKind::Io,
                std::string(who) + ": cannot start a process: " + std::strerror(err));
  }
  if (c->pid == 0) {
    ::close(up[0]);
    if (requests)
      ::close(down[1]);
    remove_crash_report();        // its death is the parent's to report
    std::signal(SIGINT, SIG_IGN); // Ctrl-C is the parent's too: it ends this process
    body(down[0], up[1]);
    std::_Exit(2); // `body` returned, which it must not
  }
  ::close(up[1]);
  if (requests)
    ::close(down[0]);
  return c;
}

std::string how_it_died(int status) {
  return WIFSIGNALED(status) ? signal_name(WTERMSIG(status)) : "an unknown way";
}

std::string crash_cause(const std::string& how) {
  return "the device crashed (" + how + ")";
}

} // namespace halfway::cli::child
