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
#include "halfway/codegen/spirv/codegen.hpp"
#include "halfway/runtime/vkdevice/vulkan_device.hpp"
#include "halfway/runtime/vulkan/environment.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <shaderc/shaderc.hpp>
#include <string>

using namespace halfway;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
  uint64_t elements = uint64_t{1} << 24;
  int runs = 7;
  std::string only;
  std::string device;
};

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<uint32_t> compile_glsl(const char* name, const char* source, double* ms) {
  auto t = Clock::now();
  shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  options.SetOptimizationLevel(shaderc_optimization_level_performance);
  auto r = compiler.CompileGlslToSpv(source, shaderc_compute_shader, name, options);
  if (r.GetCompilationStatus() != shaderc_compilation_status_success)
    throw std::runtime_error("shaderc: " + r.GetErrorMessage());
  *ms = ms_since(t);
  return {r.cbegin(), r.cend()};
}

void line(const std::string& name, const std::string& device, const char* metric, double value,
          double baseline, const std::string& extra = {}) {
  std::printf(
      "{\"case\":\"%s\",\"device\":\"%s\",\"metric\":\"%s\",\"value\":%.5g,\"baseline\":%.5g,"
      "\"ratio\":%.4g%s}\n",
      name.c_str(), device.c_str(), metric, value, baseline, baseline / value, extra.c_str());
  std::fflush(stdout);
}

struct Side {
  vk::Program program;
  std::vector<std::byte> push;
  vk::Pipeline* pipeline = nullptr;
  double first_ms = 0;
  std::vector<vk::Buffer*> bound;
};

// One case: the halfway kernel and its GLSL twin over the same device buffers.
struct Case {
  std::string name;
  const ir::VerifiedKernel* kernel;
  const char* glsl;
  uint32_t lanes;                             // workgroup size of both
  uint64_t items;                             // lanes to run (elements, or rows for gemv)
  std::vector<uint64_t> scalars;              // halfway scalars by parameter
  std::vector<std::vector<std::byte>> inputs; // initial contents, by buffer binding
  std::vector<uint32_t> glsl_push;            // after total_groups
  size_t compare_binding;                     // the output both must agree on
};

int run_case(rt::VulkanDevice& device, const Case& c, const Config& cfg) {
  const std::string dev = device.vulkan_info().name;
  const ir::Kernel& k = c.kernel->kernel();
  // Halfway's module (timed without validation) and GLSL's.
  codegen::spirv::Options o;
  o.validate = false;
  double codegen_ms = 1e9;
  codegen::spirv::Shader shader;
  const codegen::spirv::Target target = device.target();
  for (int r = 0; r < 20; ++r) {
    shader = codegen::spirv::generate(*c.kernel, {}, target, o);
    codegen_ms = std::min(codegen_ms, shader.codegen_ms);
  }
  codegen::spirv::Options plain = o;
  plain.checks = false;
  const codegen::spirv::Shader unchecked_shader =
      codegen::spirv::generate(*c.kernel, {}, target, plain);
  double shaderc_ms = 0;
  std::vector<uint32_t> glsl_words = compile_glsl(c.name.c_str(), c.glsl, &shaderc_ms);

  const uint64_t groups = (c.items + c.lanes - 1) / c.lanes;
  vk::GroupGrid grid =
      vk::plan_groups(groups, device.vulkan_info().limits.max_compute_work_group_count, c.name);

  Side ours, theirs, unchecked;
  ours.program = {.kernel_name = c.name,
                  .spirv = shader.words,
                  .entry = shader.entry,
                  .num_storage_buffers = static_cast<uint32_t>(shader.bindings.size() + 1),
                  .push_constant_bytes = shader.push_bytes,
                  .needs = rt::vulkan_features(shader.needs)};
  unchecked.program = {.kernel_name = c.name + "_unchecked",
                       .spirv = unchecked_shader.words,
                       .entry = unchecked_shader.entry,
                       .num_storage_buffers =
                           static_cast<uint32_t>(unchecked_shader.bindings.size()),
                       .push_constant_bytes = unchecked_shader.push_bytes,
                       .needs = rt::vulkan_features(shader.needs)};
  theirs.program = {.kernel_name = c.name + "_glsl",
                    .spirv = glsl_words,
                    .num_storage_buffers = static_cast<uint32_t>(shader.bindings.size()),
                    .push_constant_bytes = static_cast<uint32_t>(4 * (1 + c.glsl_push.size())),
                    .needs = rt::vulkan_features(shader.needs)};
  // Both run on the device with halfway's feature set (GLSL needs a subset of it).
  vk::Device& d = device.runtime().device(ours.program.needs, c.name);

  std::vector<uint64_t> lengths(k.params.size(), 0);
  std::vector<vk::Buffer> buffers;
  std::vector<vk::Buffer*> bound;
  size_t b = 0;
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (!k.params[i].is_buffer())
      continue;
    lengths[i] = c.inputs[b].size() / ir::bytes(k.params[i].type);
    buffers.push_back(d.create_buffer(std::max<uint64_t>(4, c.inputs[b].size()), k.params[i].name));
    ++b;
  }
  for (auto& buf : buffers)
    bound.push_back(&buf);
  // The checked module's control buffer (codegen.hpp): no fault, no target, no cancel.
  vk::Buffer control = d.create_mapped_buffer(codegen::spirv::control::kWords * 4, "control");
  std::vector<uint32_t> words(codegen::spirv::control::kWords, 0);
  words[codegen::spirv::control::kWorkgroup] = words[codegen::spirv::control::kKey] =
      words[codegen::spirv::control::kTargetGroup] = words[codegen::spirv::control::kTargetKey] =
          codegen::spirv::control::kNone;
  control.upload(words);
  ours.bound = bound;
  ours.bound.push_back(&control);
  theirs.bound = unchecked.bound = bound;
  auto reset = [&] {
    for (size_t i = 0; i < buffers.size(); ++i)
      buffers[i].upload(std::span<const std::byte>(c.inputs[i]));
  };
  ours.push.resize(shader.push_bytes);
  const std::array<uint32_t, 3> logical{static_cast<uint32_t>(groups), 1, 1};
  const codegen::spirv::Dispatch plan = codegen::spirv::plan_dispatch(
      logical, device.vulkan_info().limits.max_compute_work_group_count, c.name);
  codegen::spirv::write_push_constants(shader, k, c.scalars, lengths, logical, plan, ours.push);
  unchecked.push.resize(unchecked_shader.push_bytes);
  codegen::spirv::write_push_constants(unchecked_shader, k, c.scalars, lengths, logical, plan,
                                       unchecked.push);
  const vk::GroupGrid our_grid{plan.physical[0], plan.physical[1], plan.physical[2]};
  std::vector<uint32_t> gp{static_cast<uint32_t>(groups)};
  gp.insert(gp.end(), c.glsl_push.begin(), c.glsl_push.end());
  theirs.push.resize(gp.size() * 4);
  std::memcpy(theirs.push.data(), gp.data(), theirs.push.size());

  ours.pipeline = &d.pipeline(0x1000 + std::hash<std::string>{}(c.name), ours.program);
  theirs.pipeline = &d.pipeline(0x2000 + std::hash<std::string>{}(c.name), theirs.program);
  unchecked.pipeline = &d.pipeline(0x3000 + std::hash<std::string>{}(c.name), unchecked.program);

  auto dispatch = [&](Side& s) {
    vk::LaunchTiming t = d.dispatch(*s.pipeline, s.bound, s.push, &s == &theirs ? grid : our_grid);
    return t.device_ns ? static_cast<double>(*t.device_ns) / 1e6
                       : static_cast<double>(t.wall_ns) / 1e6;
  };
  // First dispatches (cold compile), then the bit-for-bit check.
  reset();
  auto t0 = Clock::now();
  dispatch(ours);
  ours.first_ms = ms_since(t0);
  std::vector<std::byte> mine(c.inputs[c.compare_binding].size());
  buffers[c.compare_binding].download(std::span<std::byte>(mine));
  reset();
  t0 = Clock::now();
  dispatch(theirs);
  theirs.first_ms = ms_since(t0);
  std::vector<std::byte> glsl(mine.size());
  buffers[c.compare_binding].download(std::span<std::byte>(glsl));
  reset();
  dispatch(unchecked);
  std::vector<std::byte> plain_result(mine.size());
  buffers[c.compare_binding].download(std::span<std::byte>(plain_result));
  if (mine != glsl || mine != plain_result) {
    size_t at = 0;
    while (at < mine.size() && mine[at] == glsl[at] && mine[at] == plain_result[at])
      ++at;
    std::fprintf(stderr,
                 "%s: generated (checked), generated (unchecked) and GLSL results differ (first "
                 "at byte %zu)\n",
                 c.name.c_str(), at);
    return 1;
  }

  std::vector<double> h, g, u;
  for (int r = 0; r < cfg.runs; ++r) {
    h.push_back(dispatch(ours));
    g.push_back(dispatch(theirs));
    u.push_back(dispatch(unchecked));
  }
  char extra[96];
  std::snprintf(extra, sizeof extra, ",\"items\":%llu,\"runs\":%d",
                static_cast<unsigned long long>(c.items), cfg.runs);
  line(c.name, dev, "dispatch_ms", median(h), median(g), extra);
  char sites[96];
  std::snprintf(sites, sizeof sites, ",\"checked_sites\":%zu,\"elided\":%u", shader.sites.size(),
                shader.elided_checks);
  line(c.name, dev, "checks_dispatch_ms", median(h), median(u), sites);
  line(c.name, dev, "first_dispatch_ms", ours.first_ms, theirs.first_ms);
  line(c.name, dev, "pipeline_creation_ms", static_cast<double>(ours.pipeline->creation_ns()) / 1e6,
       static_cast<double>(theirs.pipeline->creation_ns()) / 1e6);
  line(c.name, dev, "codegen_ms", codegen_ms, shaderc_ms);
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
