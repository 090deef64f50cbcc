// workloads_bench: the workloads halfway is for (issue 13's list) on interp, cpu and vulkan, each
// against a baseline measured in the same run, as JSON lines (bench/cpu/timing.hpp):
//   {"case", "device", "metric": "ms", "value": halfway, "baseline", "ratio": baseline / halfway,
//    "threads", "size", "baseline_is", "bit_exact"}
// Times are medians of interleaved runs: wall time of a launch on interp and cpu (the baseline
// split over the same thread pool as the device), GPU timestamps of the dispatch on vulkan.
// "bit_exact": true means the bench compared the two outputs and they are identical (a mismatch
// is reported on stderr and makes the exit status 1); false means the baseline computes
// differently (glibc's expf, OpenBLAS's FMA order, another kernel), with "differing" elements.
// README.md lists the cases, their sizes and the baselines.
//
// usage: workloads_bench [--quick] [--threads N] [--runs R] [--interp-runs R] [--case SUBSTRING]
//                        [--device interp|cpu|vulkan]
#include "baselines.hpp"
#include "examples.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/runtime/cpu/thread_pool.hpp"
#include "halfway/runtime/interp_device.hpp"
#include "kernels.hpp"
#include "timing.hpp"
#include "workload_baselines.hpp"

#ifdef HALFWAY_BENCH_VULKAN
#include "glsl.hpp"
#include "glsl_compare.hpp"
#include "halfway/runtime/vkdevice/vulkan_device.hpp"
#include "halfway/runtime/vulkan/environment.hpp"
#endif
#ifdef HALFWAY_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace halfway;
using namespace halfway::bench;
using ir::ScalarType;

namespace {

struct Config {
  bool quick = false;
  unsigned threads = 0; // 0: all cores
  int runs = 7;         // cpu and vulkan
  int interp_runs = 3;  // the interpreter is slow at full sizes
  std::string only;     // cases whose name contains this
  std::string device;   // devices whose name starts with this
};

// y = exp(x), one lane per element: the exp workload (issue 13 names no example for it).
Kernel exp_f32_kernel() {
  return kernel("exp_f32", {64}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] { y[i] = exp(x[i]); });
  });
}

rt::HostBuffer random_floats(size_t n, uint32_t seed, float lo, float hi) {
  rt::HostBuffer b(ScalarType::F32, n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (float& f : b.as<float>())
    f = d(rng);
  return b;
}

// Random finite fp8 bytes, four per u32 (element 0 lowest), as gemv_fp8 reads them.
template <class T8> rt::HostBuffer random_fp8_words(size_t words, uint32_t seed) {
  rt::HostBuffer b(ScalarType::U32, words);
  std::mt19937 rng(seed);
  for (uint32_t& w : b.as<uint32_t>()) {
    w = 0;
    for (int lane = 0; lane < 4; ++lane) {
      uint32_t byte = rng() & 0xff;
      // E4M3: S.1111.111 is NaN; E5M2: exponent 11111 is Inf or NaN.
      const bool special = std::is_same_v<T8, e4m3> ? (byte & 0x7f) == 0x7f : (byte & 0x7c) == 0x7c;
      if (special)
        byte &= 0xbf; // clear the exponent's top bit: a finite value
      w |= byte << (8 * lane);
    }
  }
  return b;
}

size_t count_differing(const rt::HostBuffer& a, const void* b) {
  const size_t n = a.size_bytes() / 4;
  const auto* pb = static_cast<const std::byte*>(b);
  size_t d = 0;
  for (size_t i = 0; i < n; ++i)
    d += std::memcmp(a.data() + 4 * i, pb + 4 * i, 4) != 0;
  return d;
}

#ifdef HALFWAY_BENCH_VULKAN
std::vector<std::byte> bytes_of(const rt::HostBuffer& b) {
  std::vector<std::byte> out(b.size_bytes());
  std::memcpy(out.data(), b.data(), out.size());
  return out;
}
#endif

class Bench {
public:
  explicit Bench(const Config& c)
      : c_(c), pool_(c.threads), threads_(pool_.size()), interp_(&strict_registry_),
        cpu_(&strict_registry_, {.threads = threads_}),
        cpu_relaxed_(&relaxed_registry_, {.threads = threads_}) {
    (void)relaxed_registry_.accept_relaxed_accumulation(
        policy::Scope::all_kernels(), "workloads_bench: the relaxed cases measure the opt-in");
    if (c_.quick)
      c_.runs = c_.interp_runs = 1;
#ifdef HALFWAY_HAVE_OPENBLAS
    openblas_set_num_threads(static_cast<int>(threads_));
#endif
#ifdef HALFWAY_BENCH_VULKAN
    if (want_device("vulkan")) {
      // Lavapipe runs compute on LP_NUM_THREADS threads (default: all cores); pin it like the
      // rest unless the caller chose. Cold numbers: no on-disk shader cache.
      setenv("LP_NUM_THREADS", std::to_string(threads_).c_str(), 0);
      vk::configure_mesa_shader_cache(vk::ShaderCache::Disabled);
      try {
        vulkan_ = std::make_unique<rt::VulkanDevice>(&strict_registry_);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "workloads_bench: no Vulkan device (%s): vulkan rows skipped\n",
                     e.what());
      }
    }
#else
    std::fprintf(stderr, "workloads_bench: built without the Vulkan device: vulkan rows skipped\n");
#endif
#ifndef HALFWAY_HAVE_OPENBLAS
    std::fprintf(stderr, "workloads_bench: built without OpenBLAS (libopenblas-dev): the "
                         "*_vs_openblas cases are skipped\n");
#endif
  }

  int run() {
    const char* blas = "none";
#ifdef HALFWAY_HAVE_OPENBLAS
    blas = "openblas";
    print_line("threads", "count", threads_, openblas_get_num_threads(), "cpu",
               ", \"baseline_is\": \"openblas threads\"");
#else
    print_line("threads", "count", threads_, threads_, "cpu",
               ", \"baseline_is\": \"pool threads\"");
#endif
    std::fprintf(stderr, "workloads_bench: %u threads for halfway, the C++ baselines, %s%s\n",
                 threads_, blas, c_.quick ? " (quick: small sizes, one run)" : "");
    exp_f32();
    gemv_f32();
    gemv_f32_vs_openblas();
    gemv_fp8_vs_f32<e4m3>("gemv_e4m3_vs_f32");
    gemv_fp8_vs_f32<e5m2>("gemv_e5m2_vs_f32");
    return failures_ ? 1 : 0;
  }

private:
  bool want(const std::string& name) const {
    return name.find(c_.only) != std::string::npos;
  }
  bool want_device(const std::string& name) const {
    return name.rfind(c_.device, 0) == 0;
  }

  // Items [0, n) split over the pool the way the CPU device splits workgroups: chunks of
  // n / (threads * 8) items.
  void parallel(uint64_t n, const std::function<void(uint64_t, uint64_t)>& body) {
    const uint64_t chunk = std::max<uint64_t>(1, n / (uint64_t{threads_} * 8));
    pool_.run(n, chunk, threads_, [&](uint64_t b, uint64_t e) {
      body(b, e);
      return true;
    });
  }

  // `differing`: the elements where halfway's output differs from the baseline's (0: bit exact,
  // checked); nullopt where the baseline computes something else (another kernel).
  std::string extra(const std::string& size, const std::string& baseline_is,
                    std::optional<size_t> differing) const {
    std::string s = ", \"threads\": " + std::to_string(threads_) + ", \"size\": \"" + size +
                    "\", \"baseline_is\": \"" + baseline_is + "\", \"bit_exact\": ";
    if (!differing)
      return s + "null";
    s += *differing ? "false" : "true";
    if (*differing)
      s += ", \"differing\": " + std::to_string(*differing);
    return s;
  }

  // Records a failure when a result that must equal the reference does not.
  void expect_same(const std::string& what, const rt::HostBuffer& got, const void* want) {
    if (size_t d = count_differing(got, want)) {
      std::fprintf(stderr, "workloads_bench: %s: %zu elements differ\n", what.c_str(), d);
      ++failures_;
    }
  }

  rt::LaunchOptions opts() const {
    return {.threads = threads_};
  }
  int runs_on(const std::string& device) const {
    return device == "interp" ? c_.interp_runs : c_.runs;
  }

  // ---- exp_f32: y = exp(x) over 2^24 elements, against a glibc expf loop ----------------------
  void exp_f32() {
    const std::string name = "exp_f32";
    if (!want(name))
      return;
    const size_t n = c_.quick ? size_t{1} << 16 : size_t{1} << 24;
    const std::string size = c_.quick ? "2^16" : "2^24";
    const ir::VerifiedKernel k = exp_f32_kernel();
    // The range where expf is finite and normal, so that every input exercises the polynomial.
    rt::HostBuffer x = random_floats(n, 1, -87.0f, 88.0f);
    rt::HostBuffer y(ScalarType::F32, n), yb(ScalarType::F32, n);
    std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y)};
    const rt::Grid grid = rt::Grid::for_lanes(k.kernel(), n);
    auto baseline = [&] {
      parallel(n, [&](uint64_t b, uint64_t e) {
        workloads::exp_f32(x.as<float>().data(), yb.as<float>().data(), b, e);
      });
    };
    for (rt::Device* d : host_devices()) {
      Pair p = time_pair(
          runs_on(d->name()), [&] { d->launch(k, grid, args, opts()); }, baseline);
      print_line(name, "ms", p.halfway_ms, p.baseline_ms, d->name(),
                 extra(size, "C++ glibc expf loop", count_differing(y, yb.data())));
    }
#ifdef HALFWAY_BENCH_VULKAN
    if (vulkan_)
      glsl_row(name, size,
               {name,
                &k,
                workloads::kExpF32,
                64,
                n,
                {0, 0},
                {bytes_of(x), bytes_of(y)},
                {static_cast<uint32_t>(n)},
                1});
#endif
  }

  // ---- gemv_f32_4096: y = W x at 4096 x 4096, one lane per row -----------------------------
  void gemv_f32() {
    const std::string name = "gemv_f32_4096";
    if (!want(name))
      return;
    const uint32_t rows = c_.quick ? 256 : 4096, cols = rows;
    const std::string size = std::to_string(rows) + "x" + std::to_string(cols);
    const ir::VerifiedKernel k = bench::gemv_f32();
    rt::HostBuffer w = random_floats(size_t{rows} * cols, 2, -1, 1),
                   x = random_floats(cols, 3, -1, 1);
    rt::HostBuffer y(ScalarType::F32, rows), yb(ScalarType::F32, rows);
    std::vector<rt::Arg> args{rt::Arg::of(w), rt::Arg::of(x), rt::Arg::of(y), rt::Arg::u32(cols)};
    const rt::Grid grid = rt::Grid::for_lanes(k.kernel(), rows);
    using Loop = void (*)(const float*, const float*, float*, uint32_t, size_t, size_t);
    auto baseline = [&](Loop loop) {
      return [&, loop] {
        parallel(rows, [&](uint64_t b, uint64_t e) {
          loop(w.as<float>().data(), x.as<float>().data(), yb.as<float>().data(), cols, b, e);
        });
      };
    };
    for (rt::Device* d : host_devices()) {
      Pair p = time_pair(
          runs_on(d->name()), [&] { d->launch(k, grid, args, opts()); }, baseline(&bench::gemv));
      const size_t differing = count_differing(y, yb.data());
      expect_same(name + " on " + d->name() + " against the strict C++ loop", y, yb.data());
      print_line(name, "ms", p.halfway_ms, p.baseline_ms, d->name(),
                 extra(size, "C++ loop, -ffp-contract=off, same order", differing));
    }
    // The relaxed-accumulation opt-in against the loop compiled with contraction and
    // reassociation (the same freedom): not bit-comparable.
    if (want_device("cpu")) {
      const auto run = [&] { cpu_relaxed_.launch(k, grid, args, opts()); };
      Pair p = time_pair(c_.runs, run, baseline(&bench::relaxed::gemv));
      print_line(name, "ms", p.halfway_ms, p.baseline_ms, "cpu:relaxed",
                 extra(size, "C++ loop, -ffp-contract=fast -fassociative-math",
                       count_differing(y, yb.data())));
    }
#ifdef HALFWAY_BENCH_VULKAN
    if (vulkan_)
      glsl_row(name, size,
               {name,
                &k,
                workloads::kGemvF32,
                64,
                rows,
                {0, 0, 0, cols},
                {bytes_of(w), bytes_of(x), bytes_of(y)},
                {rows, cols},
                2});
#endif
  }

  // ---- gemv_f32_4096{,_relaxed}_vs_openblas: the same kernel against cblas_sgemv ------------
  void gemv_f32_vs_openblas() {
#ifdef HALFWAY_HAVE_OPENBLAS
    if (!want_device("cpu"))
      return;
    const uint32_t rows = c_.quick ? 256 : 4096, cols = rows;
    const std::string size = std::to_string(rows) + "x" + std::to_string(cols);
    const ir::VerifiedKernel k = bench::gemv_f32();
    rt::HostBuffer w = random_floats(size_t{rows} * cols, 4, -1, 1),
                   x = random_floats(cols, 5, -1, 1);
    rt::HostBuffer y(ScalarType::F32, rows), yb(ScalarType::F32, rows);
    std::vector<rt::Arg> args{rt::Arg::of(w), rt::Arg::of(x), rt::Arg::of(y), rt::Arg::u32(cols)};
    const rt::Grid grid = rt::Grid::for_lanes(k.kernel(), rows);
    auto sgemv = [&] {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(rows), static_cast<int>(cols), 1.0f,
                  w.as<float>().data(), static_cast<int>(cols), x.as<float>().data(), 1, 0.0f,
                  yb.as<float>().data(), 1);
    };
    const std::pair<const char*, rt::CpuDevice*> variants[] = {
        {"gemv_f32_4096_vs_openblas", &cpu_}, {"gemv_f32_4096_relaxed_vs_openblas", &cpu_relaxed_}};
    for (const auto& [name, device] : variants) {
      if (!want(name))
        continue;
      rt::CpuDevice& d = *device;
      Pair p = time_pair(
          c_.runs, [&] { d.launch(k, grid, args, opts()); }, sgemv);
      print_line(name, "ms", p.halfway_ms, p.baseline_ms, device == &cpu_ ? "cpu" : "cpu:relaxed",
                 extra(size, "OpenBLAS cblas_sgemv", count_differing(y, yb.data())));
    }
#endif
  }

  // ---- gemv_<fp8>_vs_f32: the fp8 GEMV against halfway's f32 GEMV of the same design ----------
  // Both one lane per row with f32 accumulation in column order, at 4096 x 4096; the fp8 kernel's
  // results on cpu and vulkan are compared with the interpreter's where it ran.
  template <class T8> void gemv_fp8_vs_f32(const std::string& name) {
    if (!want(name))
      return;
    const uint32_t rows = c_.quick ? 256 : 4096, cols = rows;
    const std::string size = std::to_string(rows) + "x" + std::to_string(cols);
    const ir::VerifiedKernel k8 = examples::gemv_fp8<T8>(), k32 = bench::gemv_f32();
    rt::HostBuffer w8 = random_fp8_words<T8>(size_t{rows} * cols / 4, 6);
    rt::HostBuffer w32 = random_floats(size_t{rows} * cols, 7, -1, 1);
    rt::HostBuffer x = random_floats(cols, 8, -1, 1);
    rt::HostBuffer y8(ScalarType::F32, rows), y32(ScalarType::F32, rows);
    std::vector<rt::Arg> a8{rt::Arg::of(w8), rt::Arg::of(x), rt::Arg::of(y8), rt::Arg::u32(cols)};
    std::vector<rt::Arg> a32{rt::Arg::of(w32), rt::Arg::of(x), rt::Arg::of(y32),
                             rt::Arg::u32(cols)};
    const rt::Grid grid = rt::Grid::for_lanes(k8.kernel(), rows);
    std::optional<std::vector<float>> reference; // the interpreter's fp8 result
    std::vector<rt::Device*> devices = host_devices();
#ifdef HALFWAY_BENCH_VULKAN
    if (vulkan_)
      devices.push_back(vulkan_.get());
#endif
    for (rt::Device* d : devices) {
      const bool gpu = d->name().rfind("vulkan", 0) == 0;
      // On vulkan each side's GPU timestamps (LaunchResult::device_ms), without the copies.
      auto side = [&](const ir::VerifiedKernel& k, std::vector<rt::Arg>& args) {
        return [&, gpu] {
          auto t0 = std::chrono::steady_clock::now();
          rt::LaunchResult r = d->launch(k, grid, args, opts());
          return gpu ? r.device_ms
                     : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                                 t0)
                           .count();
        };
      };
      Pair p = time_pair_measured(runs_on(d->name()), side(k8, a8), side(k32, a32));
      if (!reference)
        reference.emplace(y8.as<float>().begin(), y8.as<float>().end());
      else
        expect_same(name + " on " + d->name() + " against the interpreter", y8, reference->data());
      print_line(name, "ms", p.halfway_ms, p.baseline_ms, d->name(),
                 extra(size, "halfway gemv_f32, same design", std::nullopt));
    }
  }

#ifdef HALFWAY_BENCH_VULKAN
  // Halfway's kernel against its GLSL twin on the Vulkan device (glsl_compare.hpp), which also
  // checks that both produce the same bits.
  void glsl_row(const std::string& name, const std::string& size, const GlslCase& c) {
    try {
      GlslComparison r = compare_with_glsl(*vulkan_, c, c_.runs);
      print_line(name, "ms", r.halfway_ms, r.glsl_ms, vulkan_->name(),
                 extra(size, "hand GLSL via shaderc", 0));
    } catch (const std::runtime_error& e) {
      std::fprintf(stderr, "workloads_bench: %s\n", e.what());
      ++failures_;
    }
  }
#endif

  std::vector<rt::Device*> host_devices() {
    std::vector<rt::Device*> out;
    if (want_device("interp"))
      out.push_back(&interp_);
    if (want_device("cpu"))
      out.push_back(&cpu_);
    return out;
  }

  Config c_;
  rt::ThreadPool pool_;
  unsigned threads_;
  policy::Registry strict_registry_, relaxed_registry_;
  rt::InterpreterDevice interp_;
  rt::CpuDevice cpu_, cpu_relaxed_;
#ifdef HALFWAY_BENCH_VULKAN
  std::unique_ptr<rt::VulkanDevice> vulkan_;
#endif
  int failures_ = 0;
};

} // namespace

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--quick")
      c.quick = true;
    else if (a == "--threads" && has_value)
      c.threads = static_cast<unsigned>(std::stoul(argv[++i]));
    else if (a == "--runs" && has_value)
      c.runs = std::stoi(argv[++i]);
    else if (a == "--interp-runs" && has_value)
      c.interp_runs = std::stoi(argv[++i]);
    else if (a == "--case" && has_value)
      c.only = argv[++i];
    else if (a == "--device" && has_value)
      c.device = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: workloads_bench [--quick] [--threads N] [--runs R] [--interp-runs R] "
                   "[--case SUBSTRING] [--device interp|cpu|vulkan]\n");
      return 2;
    }
  }
  try {
    return Bench(c).run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "workloads_bench: %s\n", e.what());
    return 2;
  }
}
