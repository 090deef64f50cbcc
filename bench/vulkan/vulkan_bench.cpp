// The Vulkan device's generated SPIR-V against hand-written GLSL compiled with shaderc, on the same
// device in the same run: saxpy, the f16 narrowing store, the workgroup reduction and the fp8
// GEMV. Both sides run through the same runtime with the same buffers; each case first checks
// that they agree bit for bit. One JSON line per measurement:
//   {"case", "device", "metric", "value", "baseline", "ratio", ...}
// metrics:
//   dispatch_ms           median of --runs interleaved dispatches (GPU timestamps); ratio =
//                         baseline / value, above 1: halfway is faster
//   first_dispatch_ms     the first dispatch, which includes Mesa's lazy shader compile (the shader
//                         cache is disabled, so these are cold numbers)
//   pipeline_creation_ms  vkCreateShaderModule through vkCreateComputePipelines
//   codegen_ms            halfway's SPIR-V generation against shaderc's GLSL -> SPIR-V compile
//   checks_dispatch_ms    the checked module (the default: bounds checks, cancel polls, lavapipe's
//                         loop count) against the same kernel generated unchecked
//                         (codegen::spirv::Options::checks = false), interleaved in the same run;
//                         ratio = unchecked / checked, below 1: what the checks cost
//
// usage: vulkan_bench [--elements N] [--runs R] [--case saxpy|narrow_f16|reduce_sum|gemv_fp8]
//                     [--device SELECTOR]

#include "examples.hpp"
#include "gemv_fp8_rows.hpp"
#include "glsl_baselines.hpp"
#include "glsl_compare.hpp"
#include "halfway/runtime/vulkan/device.hpp"
#include "halfway/runtime/vulkan_api/environment.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

using namespace halfway;

namespace {

struct Config {
  uint64_t elements = uint64_t{1} << 24;
  int runs = 7;
  std::string only;
  std::string device;
};

void line(const std::string& name, const std::string& device, const char* metric, double value,
          double baseline, const std::string& extra = {}) {
  std::printf(
      "{\"case\":\"%s\",\"device\":\"%s\",\"metric\":\"%s\",\"value\":%.5g,\"baseline\":%.5g,"
      "\"ratio\":%.4g%s}\n",
      name.c_str(), device.c_str(), metric, value, baseline, baseline / value, extra.c_str());
  std::fflush(stdout);
}

using Case = bench::GlslCase;

int run_case(rt::VulkanDevice& device, const Case& c, const Config& cfg) {
  const std::string dev = device.vulkan_info().name;
  bench::GlslComparison r;
  try {
    r = bench::compare_with_glsl(device, c, cfg.runs);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  char extra[96];
  std::snprintf(extra, sizeof extra, ",\"items\":%llu,\"runs\":%d",
                static_cast<unsigned long long>(c.items), cfg.runs);
  line(c.name, dev, "dispatch_ms", r.halfway_ms, r.glsl_ms, extra);
  char sites[96];
  std::snprintf(sites, sizeof sites, ",\"checked_sites\":%zu,\"elided\":%u", r.checked_sites,
                r.elided_checks);
  line(c.name, dev, "checks_dispatch_ms", r.halfway_ms, r.unchecked_ms, sites);
  line(c.name, dev, "first_dispatch_ms", r.halfway_first_ms, r.glsl_first_ms);
  line(c.name, dev, "pipeline_creation_ms", r.halfway_pipeline_ms, r.glsl_pipeline_ms);
  line(c.name, dev, "codegen_ms", r.codegen_ms, r.shaderc_ms);
  return 0;
}

template <class T> std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<float> random_floats(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto& x : v)
    x = dist(rng);
  return v;
}

} // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--elements")
      cfg.elements = std::stoull(argv[i + 1]);
    else if (a == "--runs")
      cfg.runs = std::stoi(argv[i + 1]);
    else if (a == "--case")
      cfg.only = argv[i + 1];
    else if (a == "--device")
      cfg.device = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  // Cold numbers: Mesa compiles lazily at the first dispatch and would otherwise read
  // ~/.cache/mesa_shader_cache (docs/measured.md).
  vk::configure_mesa_shader_cache(vk::ShaderCache::Disabled);
  try {
    rt::VulkanDeviceOptions options;
    options.runtime.device = cfg.device;
    rt::VulkanDevice device(nullptr, options);
    // The one-lane-per-row GEMV: the shape the hand-written GLSL baseline has.
    auto all = examples::all();
    all.push_back(examples::gemv_fp8_rows<e4m3>());
    auto find = [&](const std::string& name) -> const ir::VerifiedKernel& {
      for (const auto& k : all)
        if (k.name() == name)
          return k;
      throw std::runtime_error("no example " + name);
    };
    const uint64_t n = cfg.elements;
    std::vector<Case> cases;
    {
      Case c{"saxpy",
             &find("saxpy"),
             bench::kSaxpy,
             64,
             n,
             {0, 0, std::bit_cast<uint32_t>(1.7f)},
             {bytes_of(random_floats(n, 1)), bytes_of(random_floats(n, 2))},
             {static_cast<uint32_t>(n), std::bit_cast<uint32_t>(1.7f)},
             1};
      cases.push_back(std::move(c));
    }
    {
      std::vector<std::byte> out(n * 2);
      Case c{"narrow_f16",
             &find("narrow_f16"),
             bench::kNarrowF16,
             64,
             n,
             {0, 0, 0, 0},
             {bytes_of(random_floats(n, 3)), bytes_of(random_floats(n, 4)),
              bytes_of(random_floats(n, 5)), out},
             {static_cast<uint32_t>(n)},
             3};
      cases.push_back(std::move(c));
    }
    {
      std::vector<float> sums(n,
                              0.0f); // the example writes one sum per group into an n-long buffer
      Case c{"reduce_sum",
             &find("reduce_sum"),
             bench::kReduce,
             256,
             n,
             {0, 0},
             {bytes_of(random_floats(n, 6)), bytes_of(sums)},
             {static_cast<uint32_t>(n)},
             1};
      cases.push_back(std::move(c));
    }
    {
      const uint32_t cols = 256;
      const uint64_t rows = std::max<uint64_t>(64, n / cols);
      std::mt19937_64 rng(7);
      std::vector<uint32_t> w(rows * cols / 4);
      for (auto& word : w) {
        word = 0;
        for (int lane = 0; lane < 4; ++lane) {
          uint32_t byte = static_cast<uint32_t>(rng() & 0xff);
          if ((byte & 0x7f) == 0x7f)
            byte &= 0xfe; // no NaN weights: payloads are not compared
          word |= byte << (8 * lane);
        }
      }
      Case c{"gemv_fp8",
             &find("gemv_fp8_rows<e4m3>"),
             bench::kGemvE4M3,
             64,
             rows,
             {0, 0, 0, cols},
             {bytes_of(w), bytes_of(random_floats(cols, 8)), std::vector<std::byte>(rows * 4)},
             {static_cast<uint32_t>(rows), cols},
             2};
      cases.push_back(std::move(c));
    }
    int failures = 0;
    for (const Case& c : cases)
      if (cfg.only.empty() || cfg.only == c.name)
        failures += run_case(device, c, cfg);
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vulkan_bench: %s\n", e.what());
    return 2;
  }
}
