#include "fuzz_process.hpp"

#include "cli_util.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sys/wait.h>
#include <type_traits>
#include <unistd.h>

namespace halfway::cli {

namespace {

// What the child sends: one frame per event, a tag byte and a length-prefixed payload.
enum Tag : char {
  kBefore = 'B',  // about to compare kernel `index` on device `device`
  kFinding = 'F', // a finding, whole
  kCounts = 'K',  // the child's counts after a kernel
};

static_assert(std::is_trivially_copyable_v<kernelgen::RunSetup>);

struct Counts {
  uint64_t done = 0, kernels = 0, comparisons = 0, mismatches = 0, explained = 0, unexplained = 0,
           inconclusive = 0, unsupported = 0, undecided_comparisons = 0, undecided_elements = 0;
};

Counts counts_of(uint64_t done, const kernelgen::CampaignResult& r) {
  return {done,
          r.kernels,
          r.comparisons,
          r.mismatches,
          r.explained,
          r.unexplained,
          r.inconclusive,
          r.unsupported,
          r.undecided_comparisons,
          r.undecided_elements};
}

void add(kernelgen::CampaignResult& to, const Counts& c) {
  to.kernels += c.kernels;
  to.comparisons += c.comparisons;
  to.mismatches += c.mismatches;
  to.explained += c.explained;
  to.unexplained += c.unexplained;
  to.inconclusive += c.inconclusive;
  to.unsupported += c.unsupported;
  to.undecided_comparisons += c.undecided_comparisons;
  to.undecided_elements += c.undecided_elements;
}

// ---- encoding ----

void put_raw(std::string& out, const void* p, size_t n) {
  out.append(static_cast<const char*>(p), n);
}
template <class T> void put(std::string& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  put_raw(out, &v, sizeof v);
}
void put(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

struct Reader {
  const std::string& in;
  size_t at = 0;
  void get_raw(void* p, size_t n) {
    if (n > in.size() - at)
      throw Error(ErrorKind::Internal, "fuzz: a truncated message from the campaign's process");
    std::memcpy(p, in.data() + at, n);
    at += n;
  }
  template <class T> T get() {
    T v;
    get_raw(&v, sizeof v);
    return v;
  }
  std::string get_string() {
    const auto n = get<uint64_t>();
    if (n > in.size() - at)
      throw Error(ErrorKind::Internal, "fuzz: a truncated message from the campaign's process");
    std::string s = in.substr(at, n);
    at += n;
    return s;
  }
};

std::string encode(const kernelgen::Finding& f) {
  std::string out;
  put(out, f.index);
  put(out, f.kernel);
  put(out, f.device);
  put(out, f.check.outcome);
  put(out, f.check.cause);
  put(out, f.check.violations);
  put(out, f.check.undecided);
  put(out, f.check.undecided_lanes);
  put(out, f.check.unchecked);
  put(out, f.check.report);
  put(out, f.text);
  put(out, f.setup);
  return out;
}

kernelgen::Finding decode_finding(const std::string& payload) {
  Reader r{payload};
  kernelgen::Finding f;
  f.index = r.get<uint64_t>();
  f.kernel = r.get_string();
  f.device = r.get_string();
  f.check.outcome = r.get<kernelgen::Outcome>();
  f.check.cause = r.get_string();
  f.check.violations = r.get<uint64_t>();
  f.check.undecided = r.get<uint64_t>();
  f.check.undecided_lanes = r.get<uint64_t>();
  f.check.unchecked = r.get<uint64_t>();
  f.check.report = r.get_string();
  f.text = r.get_string();
  f.setup = r.get<kernelgen::RunSetup>();
  return f;
}

// ---- the pipe ----

void write_all(int fd, const std::string& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      std::_Exit(2); // the parent is gone: nobody is left to report to
    at += static_cast<size_t>(n);
  }
}

void send(int fd, Tag tag, const std::string& payload) {
  std::string frame(1, tag);
  put<uint64_t>(frame, payload.size());
  write_all(fd, frame + payload);
}

// False at the end of the stream.
bool read_all(int fd, void* p, size_t n) {
  auto* to = static_cast<char*>(p);
  size_t at = 0;
  while (at < n) {
    const ssize_t got = ::read(fd, to + at, n - at);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      throw Error(ErrorKind::Io, std::string("fuzz: reading from the campaign's process: ") +
                                     std::strerror(errno));
    if (got == 0) {
      if (at == 0)
        return false;
      throw Error(ErrorKind::Internal, "fuzz: a truncated message from the campaign's process");
    }
    at += static_cast<size_t>(got);
  }
  return true;
}

// The child: runs the campaign from `position` on and reports to `fd`; never returns.
[[noreturn]] void run_child(const kernelgen::CampaignOptions& options, uint64_t position, int fd) {
  remove_crash_report();        // its death is the parent's to report
  std::signal(SIGINT, SIG_IGN); // Ctrl-C is the parent's too: it ends this process
  int status = 0;
  try {
    kernelgen::CampaignOptions o = options;
    o.resume_at = position;
    o.progress = [fd](uint64_t done, const kernelgen::CampaignResult& r) {
      std::string payload;
      put(payload, counts_of(done, r));
      send(fd, kCounts, payload);
    };
    o.on_finding = [fd](const kernelgen::Finding& f) { send(fd, kFinding, encode(f)); };
    o.before_check = [fd](uint64_t index, size_t device) {
      std::string payload;
      put(payload, index);
      put<uint64_t>(payload, device);
      send(fd, kBefore, payload);
    };
    kernelgen::run_campaign(o);
  } catch (const Error& e) {
    Output::get().fail(e.kind(), e.message(), e.context());
    status = 2;
  } catch (const std::exception& e) {
    Output::get().fail(ErrorKind::Internal, e.what(), {});
    status = 2;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}

// Ends and reaps a child the parent leaves early (an exception from a callback: Ctrl-C).
struct Child {
  pid_t pid = -1;
  int fd = -1;
  ~Child() {
    if (fd >= 0)
      ::close(fd);
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      int ignored = 0;
      while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
    }
  }
  int wait() {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
      if (errno != EINTR)
        throw Error(ErrorKind::Internal, std::string("fuzz: waiting for the campaign's process: ") +
                                             std::strerror(errno));
    pid = -1;
    return status;
  }
};

} // namespace

kernelgen::CampaignResult run_campaign_in_child(const kernelgen::CampaignOptions& options) {
  const auto indices = kernelgen::shard_indices(options.count, options.shard, options.shards);
  kernelgen::CampaignResult result;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  uint64_t done = 0; // kernels the finished children completed
  uint64_t position = 0;
  while (position < indices.size()) {
    int fds[2];
    if (::pipe(fds) != 0)
      throw Error(ErrorKind::Io, std::string("fuzz: cannot make a pipe: ") + std::strerror(errno));
    std::fflush(stdout);
    std::fflush(stderr);
    Child child;
    child.pid = ::fork();
    if (child.pid < 0) {
      const int err = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      throw Error(ErrorKind::Io,
                  std::string("fuzz: cannot start a process: ") + std::strerror(err));
    }
    if (child.pid == 0) {
      ::close(fds[0]);
      run_child(options, position, fds[1]);
    }
    ::close(fds[1]);
    child.fd = fds[0];

    Counts counts;                                   // the child's, as last sent
    std::optional<std::pair<uint64_t, size_t>> busy; // (index, device) being compared
    for (;;) {
      char tag = 0;
      if (!read_all(child.fd, &tag, 1))
        break;
      uint64_t n = 0;
      read_all(child.fd, &n, sizeof n);
      std::string payload(n, '\0');
      read_all(child.fd, payload.data(), n);
      Reader r{payload};
      if (tag == kBefore) {
        const auto index = r.get<uint64_t>();
        busy.emplace(index, static_cast<size_t>(r.get<uint64_t>()));
      } else if (tag == kCounts) {
        counts = r.get<Counts>();
        busy.reset();
        kernelgen::CampaignResult now = result;
        add(now, counts);
        now.seconds = elapsed();
        if (options.progress)
          options.progress(done + counts.done, now);
      } else if (tag == kFinding) {
        kernelgen::Finding f = decode_finding(payload);
        ++result.causes[f.check.cause];
        if (options.on_finding)
          options.on_finding(f);
        result.findings.push_back(std::move(f));
      } else {
        throw Error(ErrorKind::Internal, "fuzz: an unknown message from the campaign's process");
      }
    }
    const int status = child.wait();
    add(result, counts);
    done += counts.done;
    if (WIFEXITED(status)) {
      if (WEXITSTATUS(status) != 0)
        throw AlreadyReported{WEXITSTATUS(status)};
      break; // the child ran the rest of the shard
    }
    const std::string how = WIFSIGNALED(status) ? signal_name(WTERMSIG(status)) : "an unknown way";
    if (!busy)
      throw Error(ErrorKind::Internal, "fuzz: the campaign's process died (" + how +
                                           ") outside any comparison, after " +
                                           std::to_string(done) + " kernels");
    // The comparison in flight killed it: the device crashed on this kernel.
    const auto [index, device] = *busy;
    const kernelgen::Generated g = kernelgen::generate(options.seed, index, options.gen);
    kernelgen::Finding f;
    f.index = index;
    f.kernel = g.kernel.name;
    f.device = options.devices.at(device);
    f.check.outcome = kernelgen::Outcome::Unexplained;
    f.check.cause = "the device crashed (" + how + ")";
    f.check.report = "the process comparing kernel " + f.kernel + " on " + f.device + " died (" +
                     how + "); the campaign went on in a new one";
    f.text = ir::print(g.kernel);
    f.setup = kernelgen::setup_of(g);
    f.setup.timeout = options.timeout;
    ++result.kernels;
    result.comparisons += device + 1;
    ++result.mismatches;
    ++result.unexplained;
    ++result.causes[f.check.cause];
    if (options.on_finding)
      options.on_finding(f);
    result.findings.push_back(std::move(f));
    ++done;
    result.seconds = elapsed();
    if (options.progress)
      options.progress(done, result);
    if (options.stop_after_unexplained && result.unexplained >= options.stop_after_unexplained)
      break;
    position = static_cast<uint64_t>(std::lower_bound(indices.begin(), indices.end(), index) -
                                     indices.begin()) +
               1;
  }
  result.seconds = elapsed();
  return result;
}

} // namespace halfway::cli
