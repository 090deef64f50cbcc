// The differential checker's cost under the single-rounding opt-in: `diff::run` of narrow_f16 on
// the CPU device over 2^24 tie-stressing elements, with the opt-in (shadow records, the §4 bound
// and the four rounding models per element; once with the bound deciding, once with exact models)
// against the strict diff of the same kernel and inputs (bit for bit, no shadow). Prints one JSON
// line per case:
//   {"case", "device", "metric", "value", "baseline", "ratio", "elements", "runs"}
// value and baseline are seconds per diff (medians of --runs interleaved runs), ratio = baseline
// time / halfway time: the opt-in diff is within 2x of the strict one when ratio >= 0.5. Each case
// first checks that its report is OK and counted every element.
//
// A third case measures the interval shadow (specs/device-precision.md): the diff of y = exp(x)
// over the same number of elements against a device that advertises the Vulkan math profile (the
// CPU device's launches, so the device's time is the same), which makes the reference run keep
// an interval per value, against the strict diff of the same kernel on the CPU device as it is
// (correctly rounded: no intervals). The target is ratio >= 1/3 (within 3x).
//
// usage: diff_bench [--elements N] [--runs R] [--only narrow|exp]
#include "examples.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/dsl.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <string>
#include <vector>

using namespace halfway;

namespace {

struct Config {
  size_t elements = size_t{1} << 24;
  int runs = 5;
  bool narrow = true, exp = true; // --only narrow|exp: one of the two kernels
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times one diff::run and checks what it found.
double timed_diff(rt::Device& device, const diff::inputs::KernelInputs& in, const diff::Options& o,
                  bool models) {
  const auto t0 = std::chrono::steady_clock::now();
  diff::Report r = diff::run(examples::narrow_f16(), device, in.grid, in.args, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const diff::BufferReport& b = r.buffers.at(0);
  if (!r.ok() || (models && b.models.elements != b.size)) {
    std::fprintf(stderr, "diff_bench: unexpected report\n%s", diff::to_text(r).c_str());
    std::exit(1);
  }
  return s;
}

Kernel exp_kernel() {
  return kernel("exp_f32", {64}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] { y[i] = exp(x[i]); });
  });
}

// The CPU device's launches under the Vulkan math profile: the checker then runs the interval
// shadow, and the device's own work is unchanged.
class VulkanProfile : public rt::Device {
public:
  explicit VulkanProfile(rt::Device& inner) : inner_(inner), info_(inner.info()) {
    info_.math = ir::MathProfile::Vulkan;
  }
  const rt::DeviceInfo& info() const override { return info_; }
  rt::LaunchResult launch(const ir::VerifiedKernel& kernel, const rt::Grid& grid,
                          std::span<const rt::Arg> args,
                          const rt::LaunchOptions& options = {}) override {
    return inner_.launch(kernel, grid, args, options);
  }

private:
  rt::Device& inner_;
  rt::DeviceInfo info_;
};

double timed_exp_diff(rt::Device& device, const ir::VerifiedKernel& k,
                      const diff::inputs::KernelInputs& in, const diff::Options& o,
                      bool intervals) {
  const auto t0 = std::chrono::steady_clock::now();
  diff::Report r = diff::run(k, device, in.grid, in.args, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok() || r.intervals != intervals) {
    std::fprintf(stderr, "diff_bench: unexpected report\n%s", diff::to_text(r).c_str());
    std::exit(1);
  }
  return s;
}

} // namespace

int main(int argc, char** argv) {
  // stdout carries the JSON lines only: the policy's log of the opt-ins goes to stderr.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("diff_bench"));
  Config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--elements"))
      c.elements = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--runs"))
      c.runs = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--only") && !std::strcmp(argv[i + 1], "narrow"))
      c.exp = false;
    else if (!std::strcmp(argv[i], "--only") && !std::strcmp(argv[i + 1], "exp"))
      c.narrow = false;
    else {
      std::fprintf(stderr, "usage: diff_bench [--elements N] [--runs R] [--only narrow|exp]\n");
      return 2;
    }
  }
  policy::Registry strict_registry, held_registry;
  if (!held_registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"), "diff_bench")) {
    std::fprintf(stderr, "diff_bench: the registry refused the opt-in\n");
    return 1;
  }
  rt::CpuDevice strict(&strict_registry), held(&held_registry);
  diff::Options strict_options;
  strict_options.registry = &strict_registry;
  if (c.narrow) {
    const auto in = diff::inputs::make_inputs(examples::narrow_f16().kernel(), c.elements,
                                              diff::inputs::Kind::Ties, 1);
    diff::Options bound_options, exact_options;
    bound_options.registry = exact_options.registry = &held_registry;
    exact_options.exact_models = true;

    // Warm up: compile both kernels, page in the buffers.
    timed_diff(strict, in, strict_options, false);
    timed_diff(held, in, bound_options, true);
    std::vector<double> base, bound, exact;
    for (int r = 0; r < c.runs; ++r) {
      base.push_back(timed_diff(strict, in, strict_options, false));
      bound.push_back(timed_diff(held, in, bound_options, true));
      exact.push_back(timed_diff(held, in, exact_options, true));
    }
    const double b = median(base);
    for (auto [name, times] : {std::pair{"diff_narrow_f16_single_rounding", &bound},
                               std::pair{"diff_narrow_f16_exact_models", &exact}}) {
      const double h = median(*times);
      std::printf("{\"case\":\"%s\",\"device\":\"cpu\",\"metric\":\"seconds\",\"value\":%.4g,"
                  "\"baseline\":%.4g,\"ratio\":%.4g,\"elements\":%zu,\"runs\":%d}\n",
                  name, h, b, b / h, c.elements, c.runs);
    }
  }
  if (c.exp) {
    const ir::VerifiedKernel exp_k = exp_kernel();
    const auto exp_in =
        diff::inputs::make_inputs(exp_k.kernel(), c.elements, diff::inputs::Kind::Random, 1);
    VulkanProfile vulkan_profile(strict);
    timed_exp_diff(strict, exp_k, exp_in, strict_options, false);
    timed_exp_diff(vulkan_profile, exp_k, exp_in, strict_options, true);
    std::vector<double> exp_base, exp_intervals;
    for (int r = 0; r < c.runs; ++r) {
      exp_base.push_back(timed_exp_diff(strict, exp_k, exp_in, strict_options, false));
      exp_intervals.push_back(timed_exp_diff(vulkan_profile, exp_k, exp_in, strict_options, true));
    }
    const double eb = median(exp_base), eh = median(exp_intervals);
    std::printf("{\"case\":\"diff_exp_intervals\",\"device\":\"cpu\",\"metric\":\"seconds\","
                "\"value\":%.4g,\"baseline\":%.4g,\"ratio\":%.4g,\"elements\":%zu,\"runs\":%d}\n",
                eh, eb, eb / eh, c.elements, c.runs);
  }
  return 0;
}
