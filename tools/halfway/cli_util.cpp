#include "cli_util.hpp"

#include "halfway/support/driver_call.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <mutex>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace halfway::cli {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void usage(const std::string& message) {
  throw Error(ErrorKind::Usage, message);
}

[[noreturn]] void io_error(const std::string& path, const std::string& what, int err) {
  ErrorContext c;
  c.file = path;
  throw Error(ErrorKind::Io, what + ": " + std::strerror(err), c);
}

} // namespace

// ---- text and numbers ----------------------------------------------------------------------

std::string escape_for_terminal(std::string_view s, bool keep_layout) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c < 0x20 && !(keep_layout && (c == '\n' || c == '\t'))) || c == 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

uint64_t parse_count(std::string_view text, std::string_view option) {
  std::string shown = std::string(option) + " " + escape_for_terminal(text);
  if (text.empty())
    usage(shown + ": empty; expected a non-negative integer");
  if (text.find_first_not_of("0123456789") != std::string_view::npos) {
    if (text[0] == '-')
      usage(shown + ": negative; expected a non-negative integer");
    usage(shown + ": not a non-negative decimal integer");
  }
  uint64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc::result_out_of_range)
    usage(shown + ": too large (the largest is 18446744073709551615)");
  if (r.ec != std::errc() || r.ptr != text.data() + text.size())
    usage(shown + ": not a non-negative decimal integer");
  return v;
}

std::chrono::milliseconds parse_seconds(std::string_view text, std::string_view option) {
  std::string shown = std::string(option) + " " + escape_for_terminal(text);
  double v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() ||
      !std::isfinite(v))
    usage(shown + ": not a number of seconds");
  if (!(v > 0))
    usage(shown + ": must be more than 0 seconds");
  if (v > 1e6)
    usage(shown + ": more than 1000000 seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(v * 1000)));
}

std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

uint64_t physical_memory_bytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0)
    return 0;
  return checked_mul(static_cast<uint64_t>(pages), static_cast<uint64_t>(size)).value_or(0);
}

// ---- files --------------------------------------------------------------------------------

namespace {

// The file a write to `path` ends up replacing: symbolic links followed (a dangling one names
// its target).
fs::path resolve_target(const std::string& path) {
  fs::path p(path);
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    fs::path to = fs::read_symlink(p, ec);
    if (ec)
      break;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p;
}

} // namespace

void check_output_path(const std::string& path, std::string_view option) {
  ErrorContext c;
  c.file = path;
  const std::string prefix = option.empty() ? "" : std::string(option) + ": ";
  auto fail = [&](const std::string& why) { throw Error(ErrorKind::Io, prefix + why, c); };
  auto fail_errno = [&](const std::string& why) { io_error(path, prefix + why, errno); };
  if (path.empty())
    usage(prefix + "empty path");
  fs::path target = resolve_target(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      fail("is a directory, not a file");
    if (!S_ISREG(st.st_mode))
      fail("is not a regular file (a device, FIFO or socket): halfway replaces output files "
           "atomically and writes only regular files");
    if (::access(target.c_str(), W_OK) != 0)
      fail_errno("cannot write the file");
  } else if (errno != ENOENT) {
    fail_errno("cannot inspect the file");
  }
  fs::path folder = target.parent_path();
  if (folder.empty())
    folder = ".";
  if (::stat(folder.c_str(), &st) != 0)
    fail_errno("no folder " + folder.string());
  if (!S_ISDIR(st.st_mode))
    fail(folder.string() + " is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    fail_errno("cannot create files in " + folder.string());
}

StagedFile::StagedFile(const std::string& path, std::string_view bytes) : path_(path) {
  check_output_path(path, "");
  fs::path target = resolve_target(path);
  target_ = target.string();
  fs::path folder = target.parent_path();
  folder_ = (folder.empty() ? fs::path(".") : folder).string();
  temp_ = (fs::path(folder_) / ("." + target.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(temp_.data());
  if (fd < 0) {
    temp_.clear();
    io_error(path, "cannot create a temporary file next to it", errno);
  }
  auto fail = [&](const char* what) {
    int err = errno;
    if (fd >= 0)
      ::close(fd);
    discard();
    io_error(path, what, err);
  };
  // The permission bits an existing file has, or those a new file gets under the umask.
  struct stat st {};
  mode_t mode;
  if (::stat(target_.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0)
    fail("cannot set the permissions of the temporary file");
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      fail("write failed");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0)
    fail("fsync failed");
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0)
    fail("close failed");
}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : path_(std::move(other.path_)), target_(std::move(other.target_)),
      folder_(std::move(other.folder_)), temp_(std::move(other.temp_)) {
  other.temp_.clear();
}

StagedFile::~StagedFile() {
  discard();
}

void StagedFile::discard() {
  if (!temp_.empty())
    ::unlink(temp_.c_str());
  temp_.clear();
}

void StagedFile::commit() {
  if (temp_.empty())
    return;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    int err = errno;
    discard();
    io_error(path_, "cannot rename the temporary file over it", err);
  }
  temp_.clear();
  // Make the rename itself durable; a failure here no longer loses data, so it is not an error.
  int dir = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  StagedFile(path, bytes).commit();
}

// ---- interrupts and deadlines ---------------------------------------------------------------

namespace {

static_assert(std::atomic<bool>::is_always_lock_free, "the SIGINT flag must be lock-free");
std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted.store(true, std::memory_order_relaxed);
}

// The one watchdog: a thread that looks at the current LaunchWatch every 20 ms.
struct Watchdog {
  std::mutex m;
  std::condition_variable cv;
  bool active = false;
  std::string kernel, device;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point start;
  std::optional<std::chrono::steady_clock::time_point> interrupted_at;
  std::thread thread;

  static constexpr std::chrono::milliseconds kGrace{2000};

  void run() {
    std::unique_lock lock(m);
    for (;;) {
      cv.wait_for(lock, std::chrono::milliseconds(20));
      if (!active)
        continue;
      auto now = std::chrono::steady_clock::now();
      bool interrupt = g_interrupted.load(std::memory_order_relaxed);
      if (interrupt && !interrupted_at)
        interrupted_at = now;
      ErrorKind kind;
      if (interrupt && now >= *interrupted_at + kGrace)
        kind = ErrorKind::Interrupted;
      else if (deadline != std::chrono::steady_clock::time_point::max() && now >= deadline + kGrace)
        kind = ErrorKind::Timeout;
      else
        continue;
      double s = std::chrono::duration<double>(now - start).count();
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.1f", s);
      std::string message =
          kind == ErrorKind::Timeout
              ? device + " did not stop at the time limit; halfway ended it after " + secs + " s"
              : "interrupted (Ctrl-C); " + device + " did not stop, so halfway ended it after " +
                    secs + " s";
      ErrorContext c;
      c.kernel = kernel;
      Output::get().fail(kind, message, c);
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(2);
    }
  }
};

Watchdog& watchdog() {
  static Watchdog* w = [] {
    auto* dog = new Watchdog; // never destroyed: the thread lives as long as the process
    dog->thread = std::thread([dog] { dog->run(); });
    dog->thread.detach();
    return dog;
  }();
  return *w;
}

} // namespace

const std::atomic<bool>* install_interrupt_handler() {
  static bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND; // a second Ctrl-C ends the process the default way
    ::sigaction(SIGINT, &sa, nullptr);
    return true;
  }();
  (void)installed;
  return &g_interrupted;
}

bool interrupt_requested() {
  return g_interrupted.load(std::memory_order_relaxed);
}

// ---- driver crashes ---------------------------------------------------------------------------

namespace {
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

// The actions install_crash_report replaced, one per kFatalSignals entry: a sanitizer's handler,
// or the default.
struct sigaction g_previous[std::size(kFatalSignals)];

extern "C" void on_fatal_signal(int sig, siginfo_t* info, void* /*context*/) {
  const support::DriverCallRecord* call = support::driver_call_in_flight();
  if (!call) {
    // Not a driver's: halfway's own bug, which must end the way it would have without this
    // handler, through the action it replaced (AddressSanitizer's report, or a core dump). A fault
    // the processor raised recurs when the handler returns, and reaches that action with its own
    // address; a signal that was sent (abort, kill) is sent again, and delivered on return.
    for (size_t i = 0; i < std::size(kFatalSignals); ++i)
      if (kFatalSignals[i] == sig)
        ::sigaction(sig, &g_previous[i], nullptr);
    if (info == nullptr || info->si_code <= 0)
      ::raise(sig);
    return;
  }
  // The driver crashed, not halfway; its heap may be damaged but the message is worth the risk
  // (the handler resets itself, so a second fault ends the process the default way).
  ErrorContext c;
  c.kernel = call->kernel;
  Output::get().fail(ErrorKind::Device,
                     std::string(call->device) + " crashed (" + signal_name(sig) + ") while " +
                         call->doing +
                         ": a driver bug, after which nothing in this process can run; `halfway "
                         "emit --spirv` prints the module to report it with",
                     c);
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(2);
}
} // namespace

std::string signal_name(int sig) {
  switch (sig) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGBUS:
    return "SIGBUS";
  case SIGILL:
    return "SIGILL";
  case SIGFPE:
    return "SIGFPE";
  case SIGABRT:
    return "SIGABRT";
  case SIGKILL:
    return "SIGKILL";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "signal " + std::to_string(sig);
  }
}

void install_crash_report() {
  static bool installed = false; // a second call would save these handlers as the previous ones
  if (installed)
    return;
  installed = true;
  // A driver that overflows its stack still gets its message: the handler runs on its own.
  static std::vector<char> alternate(std::max<size_t>(SIGSTKSZ, 64 * 1024));
  stack_t st{};
  st.ss_sp = alternate.data();
  st.ss_size = alternate.size();
  ::sigaltstack(&st, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_SIGINFO;
  for (size_t i = 0; i < std::size(kFatalSignals); ++i)
    ::sigaction(kFatalSignals[i], &sa, &g_previous[i]);
}

void remove_crash_report() {
  for (int sig : kFatalSignals)
    std::signal(sig, SIG_DFL);
}

void throw_if_interrupted(const std::string& kernel) {
  if (!interrupt_requested())
    return;
  ErrorContext c;
  c.kernel = kernel;
  throw Error(ErrorKind::Interrupted, "interrupted (Ctrl-C); no output file was written", c);
}

LaunchWatch::LaunchWatch(std::string kernel, std::string device, std::chrono::milliseconds budget)
    : kernel_(std::move(kernel)), device_(std::move(device)), budget_(budget),
      start_(std::chrono::steady_clock::now()) {
  throw_if_interrupted(kernel_);
  Watchdog& w = watchdog();
  std::lock_guard lock(w.m);
  w.active = true;
  w.kernel = kernel_;
  w.device = device_;
  w.start = start_;
  w.deadline =
      budget_.count() > 0 ? start_ + budget_ : std::chrono::steady_clock::time_point::max();
  w.interrupted_at.reset();
}

LaunchWatch::~LaunchWatch() {
  Watchdog& w = watchdog();
  std::lock_guard lock(w.m);
  w.active = false;
}

void LaunchWatch::check() const {
  ErrorContext c;
  c.kernel = kernel_;
  if (interrupt_requested())
    throw Error(ErrorKind::Interrupted,
                "interrupted (Ctrl-C) during " + device_ + "; no output file was written", c);
  auto took = std::chrono::steady_clock::now() - start_;
  if (budget_.count() > 0 && took > budget_) {
    char secs[64];
    std::snprintf(secs, sizeof secs, "%.3f s, more than its limit of %.3f s",
                  std::chrono::duration<double>(took).count(), budget_.count() / 1000.0);
    throw Error(ErrorKind::Timeout, device_ + " took " + secs, c);
  }
}

// ---- logging and output -------------------------------------------------------------------

void setup_logging(int verbosity) {
  const char* no_color = std::getenv("NO_COLOR");
  bool colour = !(no_color && *no_color) && ::isatty(2) == 1;
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
      colour ? spdlog::color_mode::automatic : spdlog::color_mode::never);
  auto logger = std::make_shared<spdlog::logger>("halfway", sink);
  logger->set_pattern("halfway: %^%l%$: %v");
  spdlog::level::level_enum level = spdlog::level::info;
  if (const char* env = std::getenv("HALFWAY_LOG"); env && *env) {
    std::string v = env;
    if (v == "trace")
      level = spdlog::level::trace;
    else if (v == "debug")
      level = spdlog::level::debug;
    else if (v == "info")
      level = spdlog::level::info;
    else if (v == "warn" || v == "warning")
      level = spdlog::level::warn;
    else if (v == "error")
      level = spdlog::level::err;
    else if (v == "off")
      level = spdlog::level::off;
    else
      std::cerr << "halfway: warning: HALFWAY_LOG=" << escape_for_terminal(v)
                << " is not one of trace, debug, info, warn, error, off; using info\n";
  }
  if (verbosity > 1)
    level = spdlog::level::trace;
  else if (verbosity == 1)
    level = spdlog::level::debug;
  else if (verbosity < 0)
    level = spdlog::level::err;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

std::string error_json(ErrorKind kind, const std::string& message, const ErrorContext& c) {
  std::string kind_id;
  switch (kind) {
  case ErrorKind::Verify:
    kind_id = "verify";
    break;
  case ErrorKind::Parse:
    kind_id = "parse";
    break;
  case ErrorKind::OutOfBounds:
    kind_id = "out_of_bounds";
    break;
  case ErrorKind::DivideByZero:
    kind_id = "divide_by_zero";
    break;
  case ErrorKind::ShiftOverflow:
    kind_id = "shift_overflow";
    break;
  case ErrorKind::Barrier:
    kind_id = "barrier";
    break;
  case ErrorKind::DataRace:
    kind_id = "data_race";
    break;
  case ErrorKind::Unsupported:
    kind_id = "unsupported";
    break;
  case ErrorKind::Device:
    kind_id = "device";
    break;
  case ErrorKind::Usage:
    kind_id = "usage";
    break;
  case ErrorKind::Limit:
    kind_id = "limit";
    break;
  case ErrorKind::Timeout:
    kind_id = "timeout";
    break;
  case ErrorKind::Interrupted:
    kind_id = "interrupted";
    break;
  case ErrorKind::Io:
    kind_id = "io";
    break;
  case ErrorKind::Internal:
    kind_id = "internal";
    break;
  }
  std::string o = "{\"kind\": " + json_quote(kind_id) +
                  ", \"title\": " + json_quote(error_kind_name(kind)) +
                  ", \"message\": " + json_quote(message) +
                  ", \"text\": " + json_quote(format_error(kind, message, c));
  auto str = [&](const char* key, const std::string& v) {
    if (!v.empty())
      o += std::string(", \"") + key + "\": " + json_quote(v);
  };
  auto num = [&](const char* key, std::optional<uint64_t> v) {
    if (v)
      o += std::string(", \"") + key + "\": " + std::to_string(*v);
  };
  str("file", c.file);
  if (c.line) {
    num("line", c.line);
    num("column", c.column);
  }
  str("kernel", c.kernel);
  num("node", c.node ? std::optional<uint64_t>(*c.node) : std::nullopt);
  str("buffer", c.buffer);
  num("index", c.index);
  num("length", c.length);
  num("workgroup", c.workgroup);
  num("lane", c.lane ? std::optional<uint64_t>(*c.lane) : std::nullopt);
  return o + "}";
}

namespace {
std::mutex g_output_mutex;
}

Output& Output::get() {
  static Output o;
  return o;
}

void Output::set_json(bool json, std::string command) {
  std::lock_guard lock(g_output_mutex);
  json_ = json;
  command_ = std::move(command);
}

namespace {
// Writes to stdout; false (errno set) when the write or the flush fails, e.g. on a full disk.
bool put_stdout(const std::string& s) {
  errno = 0;
  bool ok = std::fwrite(s.data(), 1, s.size(), stdout) == s.size();
  ok = std::fflush(stdout) == 0 && ok;
  if (!ok && errno == 0)
    errno = EIO;
  return ok;
}

[[noreturn]] void stdout_failed(int err) {
  throw Error(ErrorKind::Io,
              std::string("cannot write the results to standard output: ") + std::strerror(err));
}
} // namespace

void Output::text(const std::string& s) {
  std::unique_lock lock(g_output_mutex);
  if (done_)
    return;
  if (!put_stdout(escape_for_terminal(s, true))) {
    int err = errno;
    json_ = false; // stdout is unusable: the error goes to stderr only
    lock.unlock();
    stdout_failed(err);
  }
}

void Output::result(std::string json_value) {
  std::lock_guard lock(g_output_mutex);
  results_.push_back(std::move(json_value));
}

namespace {
std::string document(const std::string& command, const std::vector<std::string>& results,
                     const std::string& error) {
  std::string d = "{\"command\": " + json_quote(command) + ", \"results\": [";
  for (size_t i = 0; i < results.size(); ++i)
    d += (i ? ",\n" : "\n") + results[i];
  d += results.empty() ? "]" : "\n]";
  return d + ", \"error\": " + error + "}\n";
}
} // namespace

void Output::finish() {
  std::unique_lock lock(g_output_mutex);
  if (done_)
    return;
  done_ = true;
  if (!json_)
    return;
  if (!put_stdout(document(command_, results_, "null"))) {
    int err = errno;
    json_ = false;
    done_ = false;
    lock.unlock();
    stdout_failed(err);
  }
}

void Output::fail(ErrorKind kind, const std::string& message, const ErrorContext& context) {
  std::lock_guard lock(g_output_mutex);
  if (done_)
    return;
  done_ = true;
  std::string line =
      "halfway: " + escape_for_terminal(format_error(kind, message, context), true) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  if (!json_)
    return;
  std::string d = document(command_, results_, error_json(kind, message, context));
  std::fwrite(d.data(), 1, d.size(), stdout);
  std::fflush(stdout);
}

} // namespace halfway::cli
