// workloads_bench: the workloads halfway is for (examples/*.hpp, issue 13's list) on interp, cpu
// and vulkan, each against a baseline measured in the same run, as JSON lines
// (bench/cpu/timing.hpp):
//   {"case", "device", "metric": "ms", "value": halfway, "baseline", "ratio": baseline / halfway,
//    "threads", "size", "baseline_is", "bit_exact"[, "differing"]}
// Times are medians of interleaved runs: the wall time of a launch on interp and cpu (the C++
// baseline split over a pool of the same number of threads, OpenBLAS pinned to it too), the GPU
// timestamps of the dispatch on vulkan (lavapipe pinned to it through LP_NUM_THREADS).
// "bit_exact": true means the bench compared both outputs and found them identical; a baseline
// that claims bit-comparability (strict C++ in the kernel's order, GLSL with `precise`) and
// differs is reported on stderr and makes the exit status 1. false: the baseline computes
// differently (glibc's expf, OpenBLAS's FMA order, contraction), with the count of "differing"
// elements. null: the baseline is another kernel (the *_vs_f32 cases). On vulkan each GLSL case
// adds a line with "metric": "checks_ms": the same halfway kernel generated without checks as the
// baseline, so its ratio (below 1) is the share of the time the checks take. README.md lists the
// cases, their sizes and the baselines.
//
// usage: workloads_bench [--quick] [--threads N] [--runs R] [--interp-runs R] [--case SUBSTRING]
//                        [--device interp|cpu|vulkan]
#include "baselines.hpp"
#include "examples.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/runtime/interp_device.hpp"
#include "halfway/support/thread_pool.hpp"
#include "timing.hpp"
#include "workload_baselines.hpp"

#ifdef HALFWAY_BENCH_VULKAN
#include "glsl.hpp"
#include "glsl_compare.hpp"
#include "halfway/runtime/vulkan/device.hpp"
#include "halfway/runtime/vulkan_api/environment.hpp"
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
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace halfway; // the DSL; its operator! takes any type, so pointers compare to nullptr
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

// y = exp(x), one lane per element: the exp workload (the examples have no such kernel).
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

rt::HostBuffer random_f16(size_t n, uint32_t seed, float lo, float hi) {
  rt::HostBuffer b(ScalarType::F16, n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (uint16_t& h : b.as<uint16_t>())
    h = std::bit_cast<uint16_t>(static_cast<_Float16>(d(rng)));
  return b;
}

// Random finite fp8 codes, four per u32 (element 0 lowest), as the fp8 GEMV reads them.
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

// Elements of `a` whose bits differ from the same-typed array at `b`.
size_t count_differing(const rt::HostBuffer& a, const void* b) {
  const size_t width = ir::bytes(a.type());
  const auto* pb = static_cast<const std::byte*>(b);
  size_t d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d += std::memcmp(a.data() + width * i, pb + width * i, width) != 0;
  return d;
}

// One launch of a workload: its kernel, grid and arguments, and the buffer it writes.
struct Launch {
  ir::VerifiedKernel kernel;
  rt::Grid grid;
  std::vector<rt::Arg> args;
  rt::HostBuffer* out;
};

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
#else
    std::fprintf(stderr, "workloads_bench: built without OpenBLAS (libopenblas-dev): the "
                         "*_vs_openblas cases are skipped\n");
#endif
#ifdef HALFWAY_BENCH_VULKAN
    if (want_device("vulkan")) {
      // Lavapipe runs compute on LP_NUM_THREADS threads (default: all cores): pinned like the
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
  }

  int run() {
#ifdef HALFWAY_HAVE_OPENBLAS
    print_line("threads", "count", threads_, openblas_get_num_threads(), "cpu",
               ", \"baseline_is\": \"OpenBLAS threads\"");
#else
    print_line("threads", "count", threads_, threads_, "cpu",
               ", \"baseline_is\": \"baseline pool threads\"");
#endif
    std::fprintf(stderr,
                 "workloads_bench: %u threads for halfway, the C++ baselines, OpenBLAS and "
                 "lavapipe (LP_NUM_THREADS=%s)%s\n",
                 threads_, std::getenv("LP_NUM_THREADS") ? std::getenv("LP_NUM_THREADS") : "unset",
                 c_.quick ? "; quick: small sizes, one run" : "");
    matmul();
    gemv_f32();
    group_norm_silu();
    exp_f32();
    attention();
    conv3x3();
    act_f16();
    act_f32();
    softmax_f16out();
    gemv_vs_f32<f16>("gemv_f16_vs_f32");
    gemv_vs_f32<e5m2>("gemv_e5m2_vs_f32");
    gemv_vs_f32<e4m3>("gemv_e4m3_vs_f32");
    return failures_ ? 1 : 0;
  }

private:
  bool want(const std::string& name) const {
    return name.find(c_.only) != std::string::npos;
  }
  bool want_device(const std::string& name) const {
    return name.rfind(c_.device, 0) == 0;
  }
  int runs_on(const rt::Device& d) const {
    return d.name() == "interp" ? c_.interp_runs : c_.runs;
  }
  rt::LaunchOptions opts() const {
    return {.threads = threads_};
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

  std::vector<rt::Device*> host_devices() {
    std::vector<rt::Device*> out;
    if (want_device("interp"))
      out.push_back(&interp_);
    if (want_device("cpu"))
      out.push_back(&cpu_);
    return out;
  }

  // `differing`: elements where halfway's output differs from the baseline's (0: bit exact,
  // compared); nullopt where the baseline is another kernel.
  std::string extra(const std::string& size, const std::string& baseline_is,
                    std::optional<size_t> differing) const {
    std::string s = ", \"threads\": " + std::to_string(threads_) + ", \"size\": \"" + size +
                    "\", \"baseline_is\": \"" + baseline_is + "\", \"bit_exact\": ";
    if (!differing.has_value())
      return s + "null";
    s += *differing ? "false" : "true";
    if (*differing)
      s += ", \"differing\": " + std::to_string(*differing);
    return s;
  }

  // Records a failure when an output that must equal the reference does not.
  size_t expect_same(const std::string& what, const rt::HostBuffer& got, const void* want) {
    const size_t d = count_differing(got, want);
    if (d) {
      std::fprintf(stderr, "workloads_bench: %s: %zu of %zu elements differ\n", what.c_str(), d,
                   got.size());
      ++failures_;
    }
    return d;
  }

  // Halfway on interp and cpu against a C++ baseline that writes `theirs`. `comparable`: the
  // baseline claims halfway's bits, so a difference is a failure.
  void host_rows(const std::string& name, const std::string& size, Launch& l,
                 const std::function<void()>& baseline, const rt::HostBuffer& theirs,
                 const std::string& baseline_is, bool comparable) {
    for (rt::Device* d : host_devices()) {
      Pair p = time_pair(
          runs_on(*d), [&] { d->launch(l.kernel, l.grid, l.args, opts()); }, baseline);
      const size_t differing =
          comparable ? expect_same(name + " on " + d->name() + " against " + baseline_is, *l.out,
                                   theirs.data())
                     : count_differing(*l.out, theirs.data());
      print_line(name, "ms", p.halfway_ms, p.baseline_ms, d->name(),
                 extra(size, baseline_is, differing));
    }
  }

  // The relaxed-accumulation opt-in on cpu against a baseline with the same freedom.
  void relaxed_row(const std::string& name, const std::string& size, Launch& l,
                   const std::function<void()>& baseline, const rt::HostBuffer& theirs,
                   const std::string& baseline_is) {
    if (!want_device("cpu"))
      return;
    Pair p = time_pair(
        c_.runs, [&] { cpu_relaxed_.launch(l.kernel, l.grid, l.args, opts()); }, baseline);
    print_line(name, "ms", p.halfway_ms, p.baseline_ms, "cpu:relaxed",
               extra(size, baseline_is, count_differing(*l.out, theirs.data())));
  }

#ifdef HALFWAY_BENCH_VULKAN
  // Halfway's kernel against its GLSL twin on the Vulkan device (glsl_compare.hpp), which also
  // checks that both produce the same bits. `glsl_push` follows total_groups.
  void glsl_row(const std::string& name, const std::string& size, Launch& l, const char* glsl,
                uint64_t items, std::vector<uint32_t> glsl_push, bool multi_dimensional = false) {
    if (vulkan_ == nullptr)
      return;
    const ir::Kernel& k = l.kernel.kernel();
    GlslCase c{name,  &l.kernel, glsl, k.workgroup[0] * k.workgroup[1] * k.workgroup[2],
               items, {},        {},   std::move(glsl_push),
               0};
    for (size_t i = 0; i < k.params.size(); ++i) {
      const rt::Arg& a = l.args[i];
      c.scalars.push_back(a.buffer ? 0 : a.scalar);
      if (a.buffer == nullptr)
        continue;
      if (a.buffer == l.out)
        c.compare_binding = c.inputs.size();
      c.inputs.emplace_back(a.buffer->data(), a.buffer->data() + a.buffer->size_bytes());
    }
    if (multi_dimensional)
      c.groups = l.grid.groups;
    try {
      GlslComparison r = compare_with_glsl(*vulkan_, c, c_.runs);
      print_line(name, "ms", r.halfway_ms, r.glsl_ms, vulkan_->name(),
                 extra(size, "hand GLSL via shaderc", 0));
      // What the checks cost (bounds checks, cancel polls, lavapipe's loop count): the same
      // kernel generated without them, timed in the same rounds; below 1, that share of the time.
      print_line(name, "checks_ms", r.halfway_ms, r.unchecked_ms, vulkan_->name(),
                 extra(size, "halfway's kernel generated without checks", 0));
    } catch (const std::runtime_error& e) {
      std::fprintf(stderr, "workloads_bench: %s\n", e.what());
      ++failures_;
    }
  }
#endif

  // ---- matmul_512: C = A·B at 512³ (matmul_tiled), 16 x 16 workgroups on a 2-D grid ----------
  void matmul() {
    const uint32_t m = c_.quick ? 40 : 512, n = m, k = m;
    const std::string size = std::to_string(m) + "^3";
    rt::HostBuffer a = random_floats(size_t{m} * k, 11, -1, 1);
    rt::HostBuffer b = random_floats(size_t{k} * n, 12, -1, 1);
    rt::HostBuffer c(ScalarType::F32, size_t{m} * n), cb(ScalarType::F32, size_t{m} * n);
    Launch l{examples::matmul_tiled(),
             rt::Grid{{(n + 15) / 16, (m + 15) / 16, 1}},
             {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(c), rt::Arg::u32(m), rt::Arg::u32(n),
              rt::Arg::u32(k)},
             &c};
    using Loop = void (*)(const float*, const float*, float*, uint32_t, uint32_t, size_t, size_t);
    auto loop = [&](Loop f) {
      return [&, f] {
        parallel(m, [&](uint64_t r0, uint64_t r1) {
          f(a.as<float>().data(), b.as<float>().data(), cb.as<float>().data(), n, k, r0, r1);
        });
      };
    };
    if (want("matmul_512")) {
      host_rows("matmul_512", size, l, loop(&workloads::matmul), cb,
                "C++ 4x64 register tiles, -ffp-contract=off, same order", true);
      relaxed_row("matmul_512", size, l, loop(&workloads::fast::matmul), cb,
                  "C++ i-k-j loop, fast-math (contract, reassociate)");
#ifdef HALFWAY_BENCH_VULKAN
      glsl_row("matmul_512", size, l, workloads::kMatmul, uint64_t{m} * n, {m, n, k}, true);
#endif
    }
#ifdef HALFWAY_HAVE_OPENBLAS
    auto sgemm = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
                  static_cast<int>(n), static_cast<int>(k), 1.0f, a.as<float>().data(),
                  static_cast<int>(k), b.as<float>().data(), static_cast<int>(n), 0.0f,
                  cb.as<float>().data(), static_cast<int>(n));
    };
    blas_rows("matmul_512", size, l, sgemm, cb, "OpenBLAS cblas_sgemm");
#endif
  }

#ifdef HALFWAY_HAVE_OPENBLAS
  // <name>_vs_openblas (strict cpu) and <name>_relaxed_vs_openblas (the relaxed-accumulation
  // opt-in) against one BLAS call.
  void blas_rows(const std::string& name, const std::string& size, Launch& l,
                 const std::function<void()>& blas, const rt::HostBuffer& theirs,
                 const std::string& baseline_is) {
    if (!want_device("cpu"))
      return;
    const std::pair<std::string, rt::CpuDevice*> variants[] = {
        {name + "_vs_openblas", &cpu_}, {name + "_relaxed_vs_openblas", &cpu_relaxed_}};
    for (const auto& [case_name, device] : variants) {
      if (!want(case_name))
        continue;
      rt::CpuDevice& d = *device;
      Pair p = time_pair(
          c_.runs, [&] { d.launch(l.kernel, l.grid, l.args, opts()); }, blas);
      print_line(case_name, "ms", p.halfway_ms, p.baseline_ms,
                 device == &cpu_ ? "cpu" : "cpu:relaxed",
                 extra(size, baseline_is, count_differing(*l.out, theirs.data())));
    }
  }
#endif

  // ---- gemv_f32_4096: y = W x at 4096 x 4096 (gemv_f32: a 64-lane workgroup per row) ---------
  void gemv_f32() {
    const uint32_t rows = c_.quick ? 256 : 4096, cols = rows;
    const std::string size = std::to_string(rows) + "x" + std::to_string(cols);
    rt::HostBuffer w = random_floats(size_t{rows} * cols, 21, -1, 1);
    rt::HostBuffer x = random_floats(cols, 22, -1, 1);
    rt::HostBuffer y(ScalarType::F32, rows), yb(ScalarType::F32, rows);
    Launch l{examples::gemv_f32(),
             rt::Grid{{rows, 1, 1}},
             {rt::Arg::of(w), rt::Arg::of(x), rt::Arg::of(y), rt::Arg::u32(cols)},
             &y};
    using Loop = void (*)(const float*, const float*, float*, uint32_t, size_t, size_t);
    auto loop = [&](Loop f) {
      return [&, f] {
        parallel(rows, [&](uint64_t r0, uint64_t r1) {
          f(w.as<float>().data(), x.as<float>().data(), yb.as<float>().data(), cols, r0, r1);
        });
      };
    };
    if (want("gemv_f32_4096")) {
      host_rows("gemv_f32_4096", size, l, loop(&workloads::gemv_split), yb,
                "C++ loop, -ffp-contract=off, same order", true);
      relaxed_row("gemv_f32_4096", size, l, loop(&workloads::fast::gemv_split), yb,
                  "C++ dot per row, fast-math (contract, reassociate)");
#ifdef HALFWAY_BENCH_VULKAN
      glsl_row("gemv_f32_4096", size, l, workloads::kGemvF32, uint64_t{rows} * 64, {rows, cols});
#endif
    }
#ifdef HALFWAY_HAVE_OPENBLAS
    auto sgemv = [&] {
      cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(rows), static_cast<int>(cols), 1.0f,
                  w.as<float>().data(), static_cast<int>(cols), x.as<float>().data(), 1, 0.0f,
                  yb.as<float>().data(), 1);
    };
    blas_rows("gemv_f32_4096", size, l, sgemv, yb, "OpenBLAS cblas_sgemv");
#endif
  }

  // ---- group_norm_silu: batch 2, 320 channels in 32 groups, 64 x 64 pixels ------------------
  void group_norm_silu() {
    const std::string name = "group_norm_silu";
    if (!want(name))
      return;
    const uint32_t batch = c_.quick ? 1 : 2, channels = c_.quick ? 32 : 320,
                   groups = c_.quick ? 8 : 32, hw = c_.quick ? 81 : 64 * 64;
    const std::string size = std::to_string(batch) + "x" + std::to_string(channels) + "x" +
                             std::to_string(hw) + " in " + std::to_string(groups) + " groups";
    const size_t n = size_t{batch} * channels * hw;
    const float eps = 1e-5f;
    rt::HostBuffer x = random_floats(n, 31, -3, 3);
    rt::HostBuffer gamma = random_floats(channels, 32, 0.5f, 1.5f);
    rt::HostBuffer beta = random_floats(channels, 33, -0.5f, 0.5f);
    rt::HostBuffer y(ScalarType::F32, n), yb(ScalarType::F32, n);
    const uint32_t instances = batch * groups;
    Launch l{examples::group_norm_silu(),
             rt::Grid{{instances, 1, 1}},
             {rt::Arg::of(x), rt::Arg::of(gamma), rt::Arg::of(beta), rt::Arg::of(y),
              rt::Arg::u32(channels), rt::Arg::u32(groups), rt::Arg::u32(hw), rt::Arg::f32(eps)},
             &y};
    auto baseline = [&] {
      parallel(instances, [&](uint64_t b, uint64_t e) {
        workloads::group_norm_silu(x.as<float>().data(), gamma.as<float>().data(),
                                   beta.as<float>().data(), yb.as<float>().data(), channels, groups,
                                   hw, eps, b, e);
      });
    };
    host_rows(name, size, l, baseline, yb, "C++ loop, same order, glibc expf", false);
#ifdef HALFWAY_BENCH_VULKAN
    glsl_row(name, size, l, workloads::kGroupNormSilu, uint64_t{instances} * 256,
             {channels, groups, hw, std::bit_cast<uint32_t>(eps), static_cast<uint32_t>(n)});
#endif
  }

  // ---- exp_f32: y = exp(x) over 2^24 elements ----------------------------------------------
  void exp_f32() {
    const std::string name = "exp_f32";
    if (!want(name))
      return;
    const size_t n = c_.quick ? size_t{1} << 16 : size_t{1} << 24;
    const std::string size = c_.quick ? "2^16" : "2^24";
    // The range where expf is finite and normal.
    rt::HostBuffer x = random_floats(n, 41, -87.0f, 88.0f);
    rt::HostBuffer y(ScalarType::F32, n), yb(ScalarType::F32, n);
    Launch l{exp_f32_kernel(), {}, {rt::Arg::of(x), rt::Arg::of(y)}, &y};
    l.grid = rt::Grid::for_lanes(l.kernel.kernel(), n);
    auto baseline = [&] {
      parallel(n, [&](uint64_t b, uint64_t e) {
        workloads::exp_f32(x.as<float>().data(), yb.as<float>().data(), b, e);
      });
    };
    host_rows(name, size, l, baseline, yb, "C++ glibc expf loop", false);
#ifdef HALFWAY_BENCH_VULKAN
    glsl_row(name, size, l, workloads::kExpF32, n, {static_cast<uint32_t>(n)});
#endif
  }

  // ---- attention: 8 heads x 512 queries and keys, head_dim 64 ------------------------------
  void attention() {
    const std::string name = "attention";
    if (!want(name))
      return;
    const uint32_t heads = c_.quick ? 2 : 8, seq = c_.quick ? 37 : 512;
    const std::string size =
        std::to_string(heads) + " heads x " + std::to_string(seq) + " tokens x 64";
    const size_t n = size_t{heads} * seq * 64;
    const float scale = 0.125f; // 1 / sqrt(64)
    rt::HostBuffer q = random_floats(n, 51, -2, 2), k = random_floats(n, 52, -2, 2),
                   v = random_floats(n, 53, -2, 2);
    rt::HostBuffer o(ScalarType::F32, n), ob(ScalarType::F32, n);
    const uint32_t lanes = heads * seq;
    Launch l{examples::attention(),
             rt::Grid{{(lanes + 63) / 64, 1, 1}},
             {rt::Arg::of(q), rt::Arg::of(k), rt::Arg::of(v), rt::Arg::of(o), rt::Arg::u32(seq),
              rt::Arg::f32(scale)},
             &o};
    auto baseline = [&] {
      parallel(lanes, [&](uint64_t b, uint64_t e) {
        workloads::attention(q.as<float>().data(), k.as<float>().data(), v.as<float>().data(),
                             ob.as<float>().data(), seq, scale, b, e);
      });
    };
    host_rows(name, size, l, baseline, ob, "C++ loop, same order, glibc expf", false);
#ifdef HALFWAY_BENCH_VULKAN
    // lavapipe ends every loop by itself after 65,535 back edges per invocation (halfway's Vulkan
    // device refuses such a launch: "device limit exceeded"); 512 keys take 511 x 128 of them.
    // The vulkan row runs 16 heads x 256 tokens: the same lanes and buffers, half the keys.
    const uint32_t vk_seq = c_.quick ? seq : 256;
    Launch lv{l.kernel, l.grid, l.args, l.out};
    lv.args[4] = rt::Arg::u32(vk_seq);
    glsl_row(name,
             std::to_string(lanes / vk_seq) + " heads x " + std::to_string(vk_seq) + " tokens x 64",
             lv, workloads::kAttention, lanes, {vk_seq, std::bit_cast<uint32_t>(scale), lanes});
#endif
  }

  // ---- conv3x3: 64 -> 64 channels over 64 x 64 pixels --------------------------------------
  void conv3x3() {
    const std::string name = "conv3x3";
    if (!want(name))
      return;
    const uint32_t cin = c_.quick ? 5 : 64, cout = c_.quick ? 10 : 64, h = c_.quick ? 7 : 64,
                   wd = c_.quick ? 13 : 64;
    const std::string size = std::to_string(cin) + "->" + std::to_string(cout) + " channels, " +
                             std::to_string(h) + "x" + std::to_string(wd);
    rt::HostBuffer x = random_floats(size_t{cin} * h * wd, 61, -2, 2);
    rt::HostBuffer w = random_floats(size_t{cout} * cin * 9, 62, -0.25f, 0.25f);
    rt::HostBuffer bias = random_floats(cout, 63, -0.25f, 0.25f);
    rt::HostBuffer y(ScalarType::F32, size_t{cout} * h * wd),
        yb(ScalarType::F32, size_t{cout} * h * wd);
    const uint32_t lanes = (wd + 3) / 4 * h * ((cout + 3) / 4);
    Launch l{examples::conv3x3(),
             rt::Grid{{(lanes + 63) / 64, 1, 1}},
             {rt::Arg::of(x), rt::Arg::of(w), rt::Arg::of(bias), rt::Arg::of(y), rt::Arg::u32(cin),
              rt::Arg::u32(cout), rt::Arg::u32(h), rt::Arg::u32(wd)},
             &y};
    auto baseline = [&] {
      parallel(uint64_t{cout} * h, [&](uint64_t b, uint64_t e) {
        workloads::conv3x3(x.as<float>().data(), w.as<float>().data(), bias.as<float>().data(),
                           yb.as<float>().data(), cin, h, wd, b, e);
      });
    };
    host_rows(name, size, l, baseline, yb, "C++ loop, -ffp-contract=off, same order", true);
#ifdef HALFWAY_BENCH_VULKAN
    glsl_row(name, size, l, workloads::kConv3x3, lanes,
             {cin, cout, h, wd, static_cast<uint32_t>(x.size())});
#endif
  }

  // ---- act_f16 / act_f32: o = |w·w − 1| + clamp(w, 0, 1) over 2^24 elements ------------------
  void act_f16() {
    const std::string name = "act_f16";
    if (!want(name))
      return;
    const size_t n = c_.quick ? size_t{1} << 16 : size_t{1} << 24;
    const std::string size = c_.quick ? "2^16" : "2^24";
    rt::HostBuffer w = random_f16(n, 71, -4, 4);
    rt::HostBuffer o(ScalarType::F16, n), ob(ScalarType::F16, n);
    Launch l{examples::act<f16>(), {}, {rt::Arg::of(w), rt::Arg::of(o)}, &o};
    l.grid = rt::Grid::for_lanes(l.kernel.kernel(), n);
    auto baseline = [&] {
      parallel(n, [&](uint64_t b, uint64_t e) {
        workloads::act_f16(w.as<uint16_t>().data(), ob.as<uint16_t>().data(), b, e);
      });
    };
    host_rows(name, size, l, baseline, ob, "C++ loop, f32 ops rounded to f16 by F16C", true);
#ifdef HALFWAY_BENCH_VULKAN
    glsl_row(name, size, l, workloads::kActF16, n, {static_cast<uint32_t>(n)});
#endif
  }

  void act_f32() {
    const std::string name = "act_f32";
    if (!want(name))
      return;
    const size_t n = c_.quick ? size_t{1} << 16 : size_t{1} << 24;
    const std::string size = c_.quick ? "2^16" : "2^24";
    rt::HostBuffer w = random_floats(n, 72, -4, 4);
    rt::HostBuffer o(ScalarType::F32, n), ob(ScalarType::F32, n);
    Launch l{examples::act<float>(), {}, {rt::Arg::of(w), rt::Arg::of(o)}, &o};
    l.grid = rt::Grid::for_lanes(l.kernel.kernel(), n);
    auto baseline = [&] {
      parallel(n, [&](uint64_t b, uint64_t e) {
        workloads::act_f32(w.as<float>().data(), ob.as<float>().data(), b, e);
      });
    };
    host_rows(name, size, l, baseline, ob, "C++ loop, -ffp-contract=off", true);
#ifdef HALFWAY_BENCH_VULKAN
    glsl_row(name, size, l, workloads::kActF32, n, {static_cast<uint32_t>(n)});
#endif
  }

  // ---- softmax_f16out: 4096 rows of 1024 logits, f16 output -------------------------------
  void softmax_f16out() {
    const std::string name = "softmax_f16out";
    if (!want(name))
      return;
    const uint32_t rows = c_.quick ? 9 : 4096, cols = c_.quick ? 203 : 1024;
    const std::string size = std::to_string(rows) + "x" + std::to_string(cols);
    const size_t n = size_t{rows} * cols;
    rt::HostBuffer x = random_floats(n, 81, -8, 8);
    rt::HostBuffer y(ScalarType::F16, n), yb(ScalarType::F16, n);
    Launch l{examples::softmax_f16out(),
             rt::Grid{{rows, 1, 1}},
             {rt::Arg::of(x), rt::Arg::of(y), rt::Arg::u32(cols)},
             &y};
    auto baseline = [&] {
      parallel(rows, [&](uint64_t b, uint64_t e) {
        workloads::softmax_f16out(x.as<float>().data(), yb.as<uint16_t>().data(), cols, b, e);
      });
    };
    host_rows(name, size, l, baseline, yb, "C++ loop, same order, glibc expf", false);
#ifdef HALFWAY_BENCH_VULKAN
    glsl_row(name, size, l, workloads::kSoftmaxF16Out, uint64_t{rows} * 64,
             {cols, static_cast<uint32_t>(n)});
#endif
  }

  // ---- gemv_<format>_vs_f32: the same GEMV design with f16 or fp8 weights against f32 ---------
  // At 4096 x 4096 on every device; on vulkan each side's GPU timestamps (LaunchResult::device_ms),
  // without the copies. The low-precision kernel's results on cpu and vulkan must equal the
  // interpreter's (where it ran): strict GEMVs are bit-exact everywhere.
  template <class TW> void gemv_vs_f32(const std::string& name) {
    if (!want(name))
      return;
    const uint32_t rows = c_.quick ? 256 : 4096, cols = rows;
    const std::string size = std::to_string(rows) + "x" + std::to_string(cols);
    rt::HostBuffer wl;
    ir::VerifiedKernel kl = [&] {
      if constexpr (std::is_same_v<TW, f16>) {
        wl = random_f16(size_t{rows} * cols, 91, -2, 2);
        return examples::gemv_f16();
      } else {
        wl = random_fp8_words<TW>(size_t{rows} * cols / 4, 91);
        return examples::gemv_fp8<TW>();
      }
    }();
    rt::HostBuffer w32 = random_floats(size_t{rows} * cols, 92, -2, 2);
    rt::HostBuffer x = random_floats(cols, 93, -1, 1);
    rt::HostBuffer yl(ScalarType::F32, rows), y32(ScalarType::F32, rows);
    const rt::Grid grid{{rows, 1, 1}};
    Launch low{std::move(kl),
               grid,
               {rt::Arg::of(wl), rt::Arg::of(x), rt::Arg::of(yl), rt::Arg::u32(cols)},
               &yl};
    Launch f32{examples::gemv_f32(),
               grid,
               {rt::Arg::of(w32), rt::Arg::of(x), rt::Arg::of(y32), rt::Arg::u32(cols)},
               &y32};
    std::vector<rt::Device*> devices = host_devices();
#ifdef HALFWAY_BENCH_VULKAN
    if (vulkan_)
      devices.push_back(vulkan_.get());
#endif
    std::optional<std::vector<std::byte>> reference; // the interpreter's result
    for (rt::Device* d : devices) {
      const bool gpu = d != &interp_ && d != &cpu_;
      auto side = [&, d, gpu](Launch& l) {
        return [&, d, gpu] {
          const auto t0 = std::chrono::steady_clock::now();
          const rt::LaunchResult r = d->launch(l.kernel, l.grid, l.args, opts());
          return gpu ? r.device_ms
                     : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                                 t0)
                           .count();
        };
      };
      Pair p = time_pair_measured(runs_on(*d), side(low), side(f32));
      if (d == &interp_)
        reference.emplace(yl.data(), yl.data() + yl.size_bytes());
      else if (reference)
        expect_same(name + " on " + d->name() + " against the interpreter", yl, reference->data());
      print_line(name, "ms", p.halfway_ms, p.baseline_ms, d->name(),
                 extra(size, "halfway gemv_f32, same design, same device", std::nullopt));
    }
  }

  Config c_;
  support::ThreadPool pool_;
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
  // OpenBLAS's worker threads spin for about 2^28 cycles after each call before they sleep; in
  // interleaved runs they spun through halfway's next launch on the same cores (halfway's matmul
  // measured 7 to 14 ms in the *_vs_openblas rows while the row before it, against C++, measured
  // 6.7-7.0 ms). OpenBLAS reads OPENBLAS_THREAD_TIMEOUT when it loads, so the bench sets the
  // shortest spin (2^4 cycles) and runs itself again; a value already set is kept.
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr) {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    execv("/proc/self/exe", argv);
    std::fprintf(stderr, "workloads_bench: could not rerun itself with OPENBLAS_THREAD_TIMEOUT=4; "
                         "OpenBLAS's spinning threads may slow halfway's rows\n");
  }
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
  // stdout carries the JSON lines only: the library's logs (the opt-in's acceptance) go to stderr.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("workloads_bench"));
  try {
    return Bench(c).run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "workloads_bench: %s\n", e.what());
    return 2;
  }
}
