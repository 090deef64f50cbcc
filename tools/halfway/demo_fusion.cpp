#include "demo_fusion.hpp"

#include "cli_util.hpp"
#include "halfway/pipeline/fuse.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/support/error.hpp"
#include "pipelines.hpp"

#include <chrono>
#include <cstdio>

namespace halfway::cli {

namespace {

constexpr uint64_t kElements = uint64_t{1} << 18;

pipeline::Buffers inputs(const pipeline::Pipeline& p) {
  return examples::elementwise_chain_inputs(p, 5);
}

// Elements of `y` equal, bit for bit, to the reference's.
uint64_t equal(const rt::HostBuffer& y, const rt::HostBuffer& reference) {
  uint64_t n = 0;
  for (size_t i = 0; i < y.size(); ++i)
    n += y.get_bits(i) == reference.get_bits(i);
  return n;
}

} // namespace

std::string demo_fusion(const rt::LaunchOptions& launch, bool& ok) {
  policy::Registry strict;
  const pipeline::Pipeline p = examples::elementwise_chain(kElements);
  const pipeline::FuseResult fused = pipeline::fuse(p, &strict);
  const std::string name = fused.pipeline.launches.front().kernel.name();
  auto reference = inputs(p);
  {
    auto interp = rt::make_device("interp", &strict);
    pipeline::run(p, *interp, reference, launch);
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-34s %9s %12s %12s %10s %10s\n", "device", "elements",
                "exact (3)", "exact (1)", "ms (3)", "ms (1)");
  std::string out = "\nFusion: pipeline " + p.name + ", " + std::to_string(p.launches.size()) +
                    " elementwise kernels through two f16 temporaries, fused into one kernel,\n" +
                    name +
                    "; each output compared with the unfused pipeline on the interpreter, "
                    "bit for bit.\n\n" +
                    line;
  for (const auto& device_name : rt::device_names()) {
    std::unique_ptr<rt::Device> device;
    try {
      device = rt::make_device(device_name, &strict);
    } catch (const Error& e) {
      out += device_name + " unavailable: " + e.what() + "\n";
      continue;
    }
    auto unfused_io = inputs(p), fused_io = inputs(p);
    auto t0 = std::chrono::steady_clock::now();
    pipeline::run(p, *device, unfused_io, launch);
    auto t1 = std::chrono::steady_clock::now();
    pipeline::run(fused.pipeline, *device, fused_io, launch);
    auto t2 = std::chrono::steady_clock::now();
    const uint64_t three = equal(unfused_io.at("y"), reference.at("y"));
    const uint64_t one = equal(fused_io.at("y"), reference.at("y"));
    ok = ok && three == kElements && one == kElements;
    std::snprintf(line, sizeof line, "%-34.34s %9llu %12llu %12llu %10.2f %10.2f\n",
                  device->name().c_str(), (unsigned long long)kElements, (unsigned long long)three,
                  (unsigned long long)one,
                  std::chrono::duration<double, std::milli>(t1 - t0).count(),
                  std::chrono::duration<double, std::milli>(t2 - t1).count());
    out += line;
  }
  return out + "(times include the first launch's compilation)\n";
}

} // namespace halfway::cli
