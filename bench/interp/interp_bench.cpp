// The interpreter's speed against hand-written C++ loops on 2^24 elements: saxpy over f32, saxpy
// with f16 storage, and the workgroup reduction. Prints one JSON line per case:
//   {"case", "device", "metric", "value", "baseline", "ratio", "threads", "elements"}
// value and baseline are elements per second (medians of --runs interleaved runs), ratio =
// baseline time / halfway time (above 1, halfway is faster). Both sides use the same number of
// threads (all cores unless --threads N). Each case first checks that the interpreter and the
// baseline agree bit for bit.
//
// usage: interp_bench [--elements N] [--runs R] [--threads T] [--case
// saxpy_f32|saxpy_f16|reduce_sum]
#include "baselines.hpp"
#include "examples.hpp"
#include "halfway/dsl.hpp"
#include "halfway/interp/interp.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>

using namespace halfway;
using ir::ScalarType;

namespace {

struct Config {
  size_t elements = size_t{1} << 24;
  int runs = 7;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::string only; // run only this case
};

double seconds(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times both sides, interleaved, and prints the JSON line.
void report(const char* name, const Config& c, const std::function<void()>& halfway_run,
            const std::function<void()>& baseline_run) {
  halfway_run(); // warm up: page in buffers, caches, thread start-up paths
  baseline_run();
  std::vector<double> h, b;
  for (int r = 0; r < c.runs; ++r) {
    h.push_back(seconds(halfway_run));
    b.push_back(seconds(baseline_run));
  }
  const double n = static_cast<double>(c.elements);
  const double hv = n / median(h), bv = n / median(b);
  std::printf("{\"case\":\"%s\",\"device\":\"interp\",\"metric\":\"elements_per_second\","
              "\"value\":%.4g,\"baseline\":%.4g,\"ratio\":%.4g,\"threads\":%u,\"elements\":%zu}\n",
              name, hv, bv, hv / bv, c.threads, c.elements);
  std::fflush(stdout);
}

template <class T> rt::HostBuffer make(ScalarType t, const std::vector<T>& v) {
  rt::HostBuffer b(t, v.size());
  std::memcpy(b.data(), v.data(), b.size_bytes());
  return b;
}

bool same(const rt::HostBuffer& b, const void* data) {
  return std::memcmp(b.data(), data, b.size_bytes()) == 0;
}

ir::VerifiedKernel saxpy_f16_kernel() {
  return kernel("saxpy_f16", {64}, {"x", "y", "a"}, [](In<f16> x, InOut<f16> y, Scalar<float> a) {
    Var i(global_id(0), "i");
    If(i < x.size(), [&] { y[i] = narrow<f16>(a * to_f32(x[i]) + to_f32(y[i])); });
  });
}

void saxpy_f32(const Config& c, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> x(c.elements), y(c.elements);
  for (size_t i = 0; i < c.elements; ++i)
    x[i] = d(rng), y[i] = d(rng);
  const float a = 0.5f;
  auto bx = make(ScalarType::F32, x), by = make(ScalarType::F32, y);
  auto k = examples::saxpy();
  interp::Options o;
  o.threads = c.threads;
  rt::Arg args[] = {rt::Arg::of(bx), rt::Arg::of(by), rt::Arg::f32(a)};
  auto grid = rt::Grid::for_lanes(k.kernel(), c.elements);
  interp::run(k, grid, args, o);
  bench::saxpy_f32(x.data(), y.data(), a, c.elements, c.threads);
  if (!same(by, y.data()))
    std::fprintf(stderr, "saxpy_f32: interpreter and baseline differ\n");
  report(
      "saxpy_f32", c, [&] { interp::run(k, grid, args, o); },
      [&] { bench::saxpy_f32(x.data(), y.data(), a, c.elements, c.threads); });
}

void saxpy_f16(const Config& c, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<uint16_t> x(c.elements), y(c.elements);
  for (size_t i = 0; i < c.elements; ++i) {
    x[i] = std::bit_cast<uint16_t>(static_cast<_Float16>(d(rng)));
    y[i] = std::bit_cast<uint16_t>(static_cast<_Float16>(d(rng)));
  }
  const float a = 0.5f;
  auto bx = make(ScalarType::F16, x), by = make(ScalarType::F16, y);
  auto k = saxpy_f16_kernel();
  interp::Options o;
  o.threads = c.threads;
  rt::Arg args[] = {rt::Arg::of(bx), rt::Arg::of(by), rt::Arg::f32(a)};
  auto grid = rt::Grid::for_lanes(k.kernel(), c.elements);
  interp::run(k, grid, args, o);
  bench::saxpy_f16(x.data(), y.data(), a, c.elements, c.threads);
  if (!same(by, y.data()))
    std::fprintf(stderr, "saxpy_f16: interpreter and baseline differ\n");
  report(
      "saxpy_f16", c, [&] { interp::run(k, grid, args, o); },
      [&] { bench::saxpy_f16(x.data(), y.data(), a, c.elements, c.threads); });
}

void reduce_sum(const Config& c, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> x(c.elements);
  for (float& v : x)
    v = d(rng);
  const size_t groups = (c.elements + 255) / 256;
  std::vector<float> out(groups);
  auto bx = make(ScalarType::F32, x);
  rt::HostBuffer bout(ScalarType::F32, groups);
  auto k = examples::reduce_sum();
  interp::Options o;
  o.threads = c.threads;
  rt::Arg args[] = {rt::Arg::of(bx), rt::Arg::of(bout)};
  auto grid = rt::Grid::for_lanes(k.kernel(), groups * 256);
  interp::run(k, grid, args, o);
  bench::reduce_sum(x.data(), out.data(), c.elements, c.threads);
  if (!same(bout, out.data()))
    std::fprintf(stderr, "reduce_sum: interpreter and baseline differ\n");
  report(
      "reduce_sum", c, [&] { interp::run(k, grid, args, o); },
      [&] { bench::reduce_sum(x.data(), out.data(), c.elements, c.threads); });
}

} // namespace

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--elements")
      c.elements = std::stoull(argv[i + 1]);
    else if (flag == "--runs")
      c.runs = std::stoi(argv[i + 1]);
    else if (flag == "--threads")
      c.threads = static_cast<unsigned>(std::stoul(argv[i + 1]));
    else if (flag == "--case")
      c.only = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--elements N] [--runs R] [--threads T] [--case NAME]\n",
                   argv[0]);
      return 2;
    }
  }
  std::mt19937 rng(42);
  const std::pair<const char*, void (*)(const Config&, std::mt19937&)> cases[] = {
      {"saxpy_f32", saxpy_f32}, {"saxpy_f16", saxpy_f16}, {"reduce_sum", reduce_sum}};
  for (const auto& [name, fn] : cases)
    if (c.only.empty() || c.only == name)
      fn(c, rng);
  return 0;
}
