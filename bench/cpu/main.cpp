// cpu_bench: the CPU device against hand-written C++ loops (baselines.hpp), same binary, same
// thread pool and thread count, medians of interleaved runs. One JSON line per case:
//   {"case", "device": "cpu", "metric": "ms", "value": halfway, "baseline": C++, "ratio":
//   C++/halfway}
// and, for the compile-time and memo-hit goals, the goal in place of the baseline
// (ratio above 1: the goal is met). Every kernel case also gets a `<case>_safe_vs_unchecked`
// line: the default (memory-safe: guarded buffers, written buffers saved for restoring after a
// failure) against the same launch on a device generating the earlier unchecked code
// (rt::MemoryMode::UncheckedBaseline), so the cost of safety is measured in the same run;
// `saxpy_*_with_timeout_vs_unchecked` measures a launch that must save its written buffer.
//
//   cpu_bench [--quick] [--threads N] [--only saxpy|narrow|reduction|gemv|compile|memo]
#include "baselines.hpp"
#include "examples.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/support/thread_pool.hpp"
#include "kernels.hpp"
#include "timing.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <random>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <string>
#include <thread>
#include <vector>

using namespace halfway;
using namespace halfway::bench;
using ir::ScalarType;

namespace {

struct Config {
  bool quick = false;
  std::string only; // run the cases whose group name contains this
  unsigned threads = 0;
  int reps = 15;
};

rt::HostBuffer random_floats(size_t n, uint32_t seed, float lo = -2, float hi = 2) {
  rt::HostBuffer b(ScalarType::F32, n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& f : b.as<float>())
    f = d(rng);
  return b;
}

// The device's split of a launch: chunks of groups / (threads * 8) workgroups.
uint64_t chunk_of(uint64_t groups, unsigned threads) {
  return std::max<uint64_t>(1, groups / (uint64_t{threads} * 8));
}

class Bench {
public:
  explicit Bench(Config c)
      : c_(c), pool_(c.threads), threads_(pool_.size()),
        strict_(&strict_registry_, {.threads = threads_}),
        single_(&single_registry_, {.threads = threads_}),
        relaxed_(&relaxed_registry_, {.threads = threads_}),
        strict_old_(&strict_registry_, unchecked()), single_old_(&single_registry_, unchecked()),
        relaxed_old_(&relaxed_registry_, unchecked()) {
    (void)single_registry_.accept_single_rounding(policy::Scope::all_kernels(), "benchmark");
    (void)relaxed_registry_.accept_relaxed_accumulation(policy::Scope::all_kernels(), "benchmark");
  }

  void run() {
    print_line("threads", "count", threads_, threads_);
    auto want = [&](const char* group) {
      return std::string(group).find(c_.only) != std::string::npos;
    };
    if (want("saxpy"))
      for (size_t n : sizes())
        saxpy(n);
    if (want("narrow"))
      for (size_t n : sizes())
        narrow(n);
    if (want("reduction"))
      reduction();
    if (want("gemv"))
      gemv();
    if (want("compile"))
      compile_times();
    if (want("memo"))
      memo_hit();
  }

private:
  rt::CpuDeviceOptions unchecked() const {
    return {.threads = threads_, .memory = rt::MemoryMode::UncheckedBaseline};
  }
  rt::CpuDevice& old_of(rt::CpuDevice& d) {
    return &d == &strict_ ? strict_old_ : &d == &single_ ? single_old_ : relaxed_old_;
  }
  // The safe default against the earlier unchecked code, `rep` launches per timed run.
  void safety(const std::string& name, rt::CpuDevice& d, const ir::VerifiedKernel& k,
              const rt::Grid& g, std::vector<rt::Arg>& args, int rep = 1, int reps = 0) {
    rt::CpuDevice& old = old_of(d);
    Pair p = time_pair(
        reps ? reps : c_.reps,
        [&] {
          for (int r = 0; r < rep; ++r)
            d.launch(k, g, args);
        },
        [&] {
          for (int r = 0; r < rep; ++r)
            old.launch(k, g, args);
        });
    print_line(name + "_safe_vs_unchecked", "ms", p.halfway_ms / rep, p.baseline_ms / rep);
  }

  std::vector<size_t> sizes() const {
    return c_.quick ? std::vector<size_t>{1 << 16, 1 << 20} : std::vector<size_t>{1 << 16, 1 << 24};
  }
  static std::string size_name(size_t n) {
    return n >= (1 << 20) ? std::to_string(n >> 20) + "M" : std::to_string(n >> 10) + "K";
  }

  // Runs the baseline over workgroups [0, groups) the way the device splits a launch.
  void parallel(uint64_t groups, const std::function<void(uint64_t, uint64_t)>& body) {
    pool_.run(groups, chunk_of(groups, threads_), threads_, [&](uint64_t b, uint64_t e) {
      body(b, e);
      return true;
    });
  }

  void launch(rt::CpuDevice& d, const ir::VerifiedKernel& k, const rt::Grid& g,
              std::vector<rt::Arg>& args) {
    d.launch(k, g, args);
  }

  // Small sizes repeat inside one timed run so that a run is long enough to time.
  int repeats(size_t n) const { return std::max<int>(1, static_cast<int>((1 << 22) / n)); }

  void saxpy(size_t n) {
    ir::VerifiedKernel k = examples::saxpy();
    rt::HostBuffer x = random_floats(n, 1), y = random_floats(n, 2), yb = y.clone();
    std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y), rt::Arg::f32(0.5f)};
    rt::Grid grid = rt::Grid::for_lanes(k.kernel(), n);
    int rep = repeats(n);
    Pair p = time_pair(
        c_.reps,
        [&] {
          for (int r = 0; r < rep; ++r)
            launch(strict_, k, grid, args);
        },
        [&] {
          for (int r = 0; r < rep; ++r)
            parallel(grid.total_groups(), [&](uint64_t b, uint64_t e) {
              bench::saxpy(0.5f, x.as<float>().data(), yb.as<float>().data(), b * 64,
                           std::min<size_t>(e * 64, n));
            });
        });
    print_line("saxpy_f32_" + size_name(n), "ms", p.halfway_ms / rep, p.baseline_ms / rep);
    safety("saxpy_f32_" + size_name(n), strict_, k, grid, args, rep);
    // A launch that may fail (here: it has a timeout) saves y first: the snapshot's cost.
    Pair bounded = time_pair(
        c_.reps,
        [&] {
          for (int r = 0; r < rep; ++r)
            strict_.launch(k, grid, args, {.timeout = std::chrono::hours(1)});
        },
        [&] {
          for (int r = 0; r < rep; ++r)
            strict_old_.launch(k, grid, args);
        });
    print_line("saxpy_f32_" + size_name(n) + "_with_timeout_vs_unchecked", "ms",
               bounded.halfway_ms / rep, bounded.baseline_ms / rep);
  }

  void narrow(size_t n) {
    ir::VerifiedKernel k = examples::narrow_f16();
    rt::HostBuffer a = random_floats(n, 3), b = random_floats(n, 4), c = random_floats(n, 5);
    rt::HostBuffer out(ScalarType::F16, n), outb(ScalarType::F16, n);
    std::vector<rt::Arg> args{rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(c), rt::Arg::of(out)};
    rt::Grid grid = rt::Grid::for_lanes(k.kernel(), n);
    const float *pa = a.as<float>().data(), *pb = b.as<float>().data(), *pc = c.as<float>().data();
    uint16_t* po = outb.as<uint16_t>().data();
    int rep = repeats(n);
    using Loop = void (*)(const float*, const float*, const float*, uint16_t*, size_t, size_t);
    auto baseline = [&](Loop loop) {
      return [&, loop] {
        for (int r = 0; r < rep; ++r)
          parallel(grid.total_groups(), [&](uint64_t g0, uint64_t g1) {
            loop(pa, pb, pc, po, g0 * 64, std::min<size_t>(g1 * 64, n));
          });
      };
    };
    auto on = [&](rt::CpuDevice& d) {
      return [&] {
        for (int r = 0; r < rep; ++r)
          launch(d, k, grid, args);
      };
    };
    std::string s = size_name(n);
    Pair strict = time_pair(c_.reps, on(strict_), baseline(&bench::narrow_f16));
    print_line("narrow_f16_strict_" + s, "ms", strict.halfway_ms / rep, strict.baseline_ms / rep);
    Pair intrinsics = time_pair(c_.reps, on(strict_), baseline(&bench::narrow_f16_intrinsics));
    print_line("narrow_f16_strict_vs_avx512_intrinsics_" + s, "ms", intrinsics.halfway_ms / rep,
               intrinsics.baseline_ms / rep);
    Pair single = time_pair(c_.reps, on(single_), baseline(&bench::relaxed::narrow_f16));
    print_line("narrow_f16_single_rounding_" + s, "ms", single.halfway_ms / rep,
               single.baseline_ms / rep);
    safety("narrow_f16_strict_" + s, strict_, k, grid, args, rep);
    safety("narrow_f16_single_rounding_" + s, single_, k, grid, args, rep);
  }

  void reduction() {
    ir::VerifiedKernel k = examples::reduce_chunks();
    const uint32_t per_lane = 64;
    const size_t groups = c_.quick ? 256 : 1024;
    const size_t n = groups * 256 * per_lane;
    rt::HostBuffer x = random_floats(n, 6, 0, 1), out(ScalarType::F32, groups),
                   outb(ScalarType::F32, groups);
    std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(out), rt::Arg::u32(per_lane)};
    rt::Grid grid{{static_cast<uint32_t>(groups), 1, 1}};
    using Loop = void (*)(const float*, float*, uint32_t, size_t, size_t);
    auto baseline = [&](Loop loop) {
      return [&, loop] {
        parallel(groups, [&](uint64_t b, uint64_t e) {
          loop(x.as<float>().data(), outb.as<float>().data(), per_lane, b, e);
        });
      };
    };
    std::string s = std::to_string(n >> 20) + "M";
    Pair strict = time_pair(
        c_.reps, [&] { launch(strict_, k, grid, args); }, baseline(&bench::reduce_chunks));
    print_line("reduction_strict_" + s, "ms", strict.halfway_ms, strict.baseline_ms);
    Pair relaxed = time_pair(
        c_.reps, [&] { launch(relaxed_, k, grid, args); },
        baseline(&bench::relaxed::reduce_chunks));
    print_line("reduction_relaxed_" + s, "ms", relaxed.halfway_ms, relaxed.baseline_ms);
    safety("reduction_strict_" + s, strict_, k, grid, args);
    safety("reduction_relaxed_" + s, relaxed_, k, grid, args);
  }

  void gemv() {
    ir::VerifiedKernel k = gemv_f32();
    const uint32_t rows = 4096, cols = 4096;
    rt::HostBuffer w = random_floats(size_t{rows} * cols, 7), x = random_floats(cols, 8);
    rt::HostBuffer y(ScalarType::F32, rows), yb(ScalarType::F32, rows);
    std::vector<rt::Arg> args{rt::Arg::of(w), rt::Arg::of(x), rt::Arg::of(y), rt::Arg::u32(cols)};
    rt::Grid grid = rt::Grid::for_lanes(k.kernel(), rows);
    using Loop = void (*)(const float*, const float*, float*, uint32_t, size_t, size_t);
    auto baseline = [&](Loop loop) {
      return [&, loop] {
        parallel(grid.total_groups(), [&](uint64_t b, uint64_t e) {
          loop(w.as<float>().data(), x.as<float>().data(), yb.as<float>().data(), cols, b * 64,
               std::min<size_t>(e * 64, rows));
        });
      };
    };
    int reps = c_.quick ? 5 : c_.reps;
    Pair strict = time_pair(
        reps, [&] { launch(strict_, k, grid, args); }, baseline(&bench::gemv));
    print_line("gemv_f32_4096x4096_strict", "ms", strict.halfway_ms, strict.baseline_ms);
    Pair relaxed = time_pair(
        reps, [&] { launch(relaxed_, k, grid, args); }, baseline(&bench::relaxed::gemv));
    print_line("gemv_f32_4096x4096_relaxed", "ms", relaxed.halfway_ms, relaxed.baseline_ms);
    safety("gemv_f32_4096x4096_strict", strict_, k, grid, args, 1, reps);
    safety("gemv_f32_4096x4096_relaxed", relaxed_, k, grid, args, 1, reps);
  }

  // Lowering + O3 + code generation of each kernel on a warm JIT (the memo cleared before each
  // compile), against the 20 ms goal; and the very first compile of a fresh device, which also
  // creates the LLJIT.
  void compile_times() {
    constexpr double kGoalMs = 20;
    {
      policy::Registry registry;
      rt::CpuDevice fresh(&registry, {.threads = 1});
      ir::VerifiedKernel k = examples::saxpy();
      rt::HostBuffer x(ScalarType::F32, 64), y(ScalarType::F32, 64);
      std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y), rt::Arg::f32(1)};
      rt::LaunchResult r = fresh.launch(k, rt::Grid{}, args);
      print_line("compile_first_kernel_with_jit_setup", "ms", r.compile_ms, kGoalMs);
    }
    struct Item {
      std::string name;
      ir::VerifiedKernel kernel;
      rt::CpuDevice* device;
    };
    std::vector<Item> items = {{"saxpy", examples::saxpy(), &strict_},
                               {"narrow_f16", examples::narrow_f16(), &strict_},
                               {"narrow_f16_single_rounding", examples::narrow_f16(), &single_},
                               {"reduce_sum", examples::reduce_sum(), &strict_},
                               {"reduce_chunks_relaxed", examples::reduce_chunks(), &relaxed_},
                               {"gemv_f32", gemv_f32(), &strict_},
                               {"gemv_fp8_e4m3", examples::gemv_fp8<e4m3>(), &strict_}};
    for (Item& it : items) {
      const ir::Kernel& k = it.kernel.kernel();
      std::vector<rt::HostBuffer> buffers;
      buffers.reserve(k.params.size());
      std::vector<rt::Arg> args;
      for (const ir::Param& p : k.params) {
        if (p.is_buffer()) {
          buffers.emplace_back(p.type, 1024); // every index of one workgroup in bounds
          args.push_back(rt::Arg::of(buffers.back()));
        } else {
          args.push_back(rt::Arg::bits(0));
        }
      }
      std::vector<double> ms;
      for (int r = 0; r < 7; ++r) {
        it.device->clear_memo();
        ms.push_back(it.device->launch(it.kernel, rt::Grid{}, args).compile_ms);
      }
      std::sort(ms.begin(), ms.end());
      print_line("compile_" + it.name, "ms", ms[ms.size() / 2], kGoalMs);
    }
  }

  // A launch on a memo hit of a one-lane kernel: argument checks, budget lookup, memo lookup,
  // running one workgroup on the calling thread. Median of many, against the 2 us goal; and
  // against the unchecked device, in alternating blocks of launches so that both see the same
  // machine (a noisy neighbour or a frequency change affects both alike).
  void memo_hit() {
    ir::VerifiedKernel k = tiny();
    rt::HostBuffer y(ScalarType::U32, 1);
    std::vector<rt::Arg> args{rt::Arg::of(y)};
    strict_.launch(k, rt::Grid{}, args);
    strict_old_.launch(k, rt::Grid{}, args);
    constexpr int kBlocks = 200, kPerBlock = 100;
    std::vector<double> us, old_us;
    us.reserve(kBlocks * kPerBlock);
    old_us.reserve(kBlocks * kPerBlock);
    auto block = [&](rt::CpuDevice& d, std::vector<double>& out) {
      for (int r = 0; r < kPerBlock; ++r) {
        auto start = std::chrono::steady_clock::now();
        d.launch(k, rt::Grid{}, args);
        out.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                .count());
      }
    };
    for (int b = 0; b < kBlocks; ++b) {
      block(strict_, us);
      block(strict_old_, old_us);
    }
    std::sort(us.begin(), us.end());
    std::sort(old_us.begin(), old_us.end());
    print_line("memo_hit_launch", "us", us[us.size() / 2], 2.0);
    print_line("memo_hit_launch_safe_vs_unchecked", "us", us[us.size() / 2],
               old_us[old_us.size() / 2]);
  }

  Config c_;
  support::ThreadPool pool_;
  unsigned threads_;
  policy::Registry strict_registry_, single_registry_, relaxed_registry_;
  rt::CpuDevice strict_, single_, relaxed_;
  rt::CpuDevice strict_old_, single_old_, relaxed_old_; // the earlier unchecked code
};

} // namespace

int main(int argc, char** argv) {
  // stdout carries the JSON lines only: the policy's log of the opt-ins goes to stderr.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("cpu_bench"));
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      c.quick = true, c.reps = 5;
    else if (a == "--threads" && i + 1 < argc)
      c.threads = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--only" && i + 1 < argc)
      c.only = argv[++i];
  }
  Bench(c).run();
  return 0;
}
