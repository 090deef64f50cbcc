// fusion_bench: pipelines unfused against what the fusion pass makes of them (specs/fusion.md),
// on the CPU device and on Vulkan, as JSON lines like bench/workloads':
//   {"case", "device", "metric": "ms", "value": fused, "baseline": unfused,
//    "ratio": unfused / fused, "launches": [unfused, fused], "unfused_launch_ms": [each launch's
//    wall time in the last unfused run], "size", "bit_exact"}
// Times are medians of interleaved runs (one warm-up of each, which also compiles) of the wall
// time of the whole pipeline::run: every launch, with the temporaries' allocation and, on Vulkan,
// the copies to and from the device that each launch makes. bit_exact: the two outputs compared
// and identical; a difference is reported on stderr and makes the exit status 1 (a strict fused
// pipeline must equal the unfused one bit for bit).
//
// Cases: group_norm_silu, GroupNorm then SiLU as two kernels at 1x320x64x64 in 32 groups; chain3,
// three elementwise kernels through two f16 temporaries over 2^22 elements.
//
// usage: fusion_bench [--quick] [--runs R] [--device cpu|vulkan] [--case SUBSTRING]
#include "halfway/pipeline/fuse.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/support/error.hpp"
#include "pipelines.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <string>
#include <vector>

using namespace halfway;

namespace {

struct Config {
  bool quick = false;
  int runs = 7;
  std::string device; // prefix; empty: all
  std::string only;   // case substring
};

struct Case {
  std::string name, size;
  pipeline::Pipeline pipeline;
  std::function<pipeline::Buffers(const pipeline::Pipeline&)> inputs;
  std::string output;
};

// The wall time of one run; `launches` gets each launch's wall time.
double run_ms(const pipeline::Pipeline& p, rt::Device& device, pipeline::Buffers& io,
              std::vector<double>* launches = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  auto result = pipeline::run(p, device, io);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (launches) {
    launches->clear();
    for (const auto& l : result.launches)
      launches->push_back(l.wall_ms);
  }
  return ms;
}

std::string list(const std::vector<double>& v) {
  std::string out;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%.4g", x);
    out += (out.empty() ? "" : ", ") + std::string(buf);
  }
  return "[" + out + "]";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<Case> cases(const Config& c) {
  const uint32_t hw = c.quick ? 16 * 16 : 64 * 64, channels = c.quick ? 64 : 320;
  const uint64_t chain_n = c.quick ? uint64_t{1} << 14 : uint64_t{1} << 22;
  std::vector<Case> out;
  out.push_back({"group_norm_silu",
                 "1x" + std::to_string(channels) + "x" + std::to_string(hw) + " in 32 groups",
                 examples::group_norm_then_silu(1, channels, 32, hw),
                 [](const pipeline::Pipeline& p) { return examples::group_norm_inputs(p); }, "y"});
  out.push_back(
      {"chain3", std::to_string(chain_n), examples::elementwise_chain(chain_n),
       [](const pipeline::Pipeline& p) { return examples::elementwise_chain_inputs(p, 1); }, "y"});
  return out;
}

} // namespace

int main(int argc, char** argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fusion_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick")
      config.quick = true;
    else if (a == "--runs")
      config.runs = std::max(1, std::atoi(value().c_str()));
    else if (a == "--device")
      config.device = value();
    else if (a == "--case")
      config.only = value();
    else {
      std::fprintf(stderr, "usage: fusion_bench [--quick] [--runs R] [--device cpu|vulkan] "
                           "[--case SUBSTRING]\n");
      return 2;
    }
  }
  if (config.quick)
    config.runs = 1;
  // stdout carries the JSON lines only.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("fusion_bench"));
  int status = 0;
  try {
    policy::Registry registry;
    for (const std::string& name : rt::device_names()) {
      if (name == "interp" || name.rfind(config.device, 0) != 0)
        continue;
      auto device = rt::make_device(name, &registry);
      for (Case& c : cases(config)) {
        if (c.name.find(config.only) == std::string::npos)
          continue;
        const auto fused = pipeline::fuse(c.pipeline, &registry);
        for (const auto& r : fused.refused)
          std::fprintf(stderr, "fusion_bench: %s: refused %s + %s: %s\n", c.name.c_str(),
                       r.producer.c_str(), r.consumer.c_str(), r.reason.c_str());
        auto unfused_io = c.inputs(c.pipeline), fused_io = c.inputs(c.pipeline);
        run_ms(c.pipeline, *device, unfused_io); // warm-up and compilation
        run_ms(fused.pipeline, *device, fused_io);
        std::vector<double> unfused_ms, fused_ms, per_launch;
        for (int r = 0; r < config.runs; ++r) {
          unfused_ms.push_back(run_ms(c.pipeline, *device, unfused_io, &per_launch));
          fused_ms.push_back(run_ms(fused.pipeline, *device, fused_io));
        }
        const bool exact = unfused_io.at(c.output) == fused_io.at(c.output);
        if (!exact) {
          std::fprintf(stderr, "fusion_bench: %s on %s: the fused pipeline's %s differs\n",
                       c.name.c_str(), device->name().c_str(), c.output.c_str());
          status = 1;
        }
        const double value = median(fused_ms), baseline = median(unfused_ms);
        std::printf("{\"case\": \"%s\", \"device\": \"%s\", \"metric\": \"ms\", \"value\": %.4g, "
                    "\"baseline\": %.4g, \"ratio\": %.3f, \"launches\": [%zu, %zu], "
                    "\"unfused_launch_ms\": %s, \"size\": \"%s\", "
                    "\"baseline_is\": \"the unfused pipeline\", \"bit_exact\": %s}\n",
                    c.name.c_str(), device->name().c_str(), value, baseline, baseline / value,
                    c.pipeline.launches.size(), fused.pipeline.launches.size(),
                    list(per_launch).c_str(), c.size.c_str(), exact ? "true" : "false");
        std::fflush(stdout);
      }
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "fusion_bench: %s\n", e.what());
    return 2;
  }
  return status;
}
