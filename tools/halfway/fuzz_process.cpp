#include "fuzz_process.hpp"

#include "cli_util.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sys/wait.h>
#include <type_traits>

namespace halfway::cli {

using namespace child;

namespace {

constexpr const char* kWho = "fuzz";

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

std::string encode(const kernelgen::Finding& f) {
  std::string out;
  put(out, f.index);
  put(out, f.kernel);
  put(out, f.device);
  put(out, f.check);
  put(out, f.text);
  put(out, f.setup);
  return out;
}

kernelgen::Finding decode_finding(const std::string& payload) {
  Reader r{payload, kWho};
  kernelgen::Finding f;
  f.index = r.get<uint64_t>();
  f.kernel = r.get_string();
  f.device = r.get_string();
  f.check = r.get_check();
  f.text = r.get_string();
  f.setup = r.get<kernelgen::RunSetup>();
  return f;
}

// The child: runs the campaign from `position` on and reports to `fd`; never returns.
[[noreturn]] void run_child(const kernelgen::CampaignOptions& options, uint64_t position, int fd) {
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
    const std::unique_ptr<Child> child =
        spawn(kWho, false, [&](int, int out) { run_child(options, position, out); });

    Counts counts;                                   // the child's, as last sent
    std::optional<std::pair<uint64_t, size_t>> busy; // (index, device) being compared
    char tag = 0;
    std::string payload;
    while (wait_readable(child->from, kWho) && receive(child->from, tag, payload, kWho)) {
      Reader r{payload, kWho};
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
    throw_if_interrupted("fuzz campaign"); // leaving kills the child (Child's destructor)
    const int status = child->wait();
    add(result, counts);
    done += counts.done;
    if (WIFEXITED(status)) {
      if (WEXITSTATUS(status) != 0)
        throw AlreadyReported{WEXITSTATUS(status)};
      break; // the child ran the rest of the shard
    }
    const std::string how = how_it_died(status);
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
    f.check.cause = crash_cause(how);
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
