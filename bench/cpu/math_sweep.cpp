// The exhaustive f32 proof of the exp/exp2 fast paths, run by hand (minutes; too long for the
// test suite, which checks every f16 and bf16 input and 10^7 random f32 ones):
//
//   math_sweep numerics [--threads N]   every f32 input: num::math (fast path) against
//                                       num::math_without_fast_path (glibc bracket and MPFR);
//                                       prints the inputs the fast path leaves undecided
//   math_sweep cpu [--threads N]        every f32 input: the CPU device's inline exp/exp2
//                                       against num::math
//
// One JSON line per function: {"sweep", "fn", "inputs", "undecided", "mismatches", "seconds"}.
// Exit status 1 on any mismatch.
#include "halfway/numerics/fast_math.hpp"
#include "halfway/numerics/math.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/text/parse.hpp"

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

using namespace halfway;

namespace {

constexpr uint64_t kInputs = uint64_t{1} << 32;
constexpr num::MathFn kFns[] = {num::MathFn::Exp, num::MathFn::Exp2};

struct Tally {
  std::atomic<uint64_t> undecided{0}, mismatches{0};
  std::mutex print;
};

void report(const char* sweep, num::MathFn fn, const Tally& t, double seconds) {
  std::printf("{\"sweep\": \"%s\", \"fn\": \"%s\", \"inputs\": %" PRIu64 ", \"undecided\": %" PRIu64
              ", \"mismatches\": %" PRIu64 ", \"seconds\": %.1f}\n",
              sweep, num::math_info(fn).name, kInputs, t.undecided.load(), t.mismatches.load(),
              seconds);
  std::fflush(stdout);
}

void mismatch(Tally& t, num::MathFn fn, uint32_t x, uint64_t want, uint64_t got) {
  if (t.mismatches++ < 20) {
    std::lock_guard lock(t.print);
    std::fprintf(stderr, "MISMATCH %s(0x%08x): want 0x%08" PRIx64 " got 0x%08" PRIx64 "\n",
                 num::math_info(fn).name, x, want, got);
  }
}

void sweep_numerics(num::MathFn fn, unsigned threads, Tally& t) {
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      for (uint64_t b = w; b < kInputs; b += threads) {
        const auto x = static_cast<uint32_t>(b);
        if (!num::fast::decide(fn, num::Format::F32, num::f32_from_bits(x))) {
          ++t.undecided;
          std::lock_guard lock(t.print);
          std::printf("undecided %s 0x%08x\n", num::math_info(fn).name, x);
          continue; // math() runs the general routine itself here
        }
        const uint64_t want = num::math_without_fast_path(fn, num::Format::F32, x);
        const uint64_t got = num::math(fn, num::Format::F32, x);
        if (got != want)
          mismatch(t, fn, x, want, got);
      }
    });
  }
  for (auto& th : pool)
    th.join();
}

void sweep_cpu(num::MathFn fn, unsigned threads, Tally& t) {
  const std::string name = num::math_info(fn).name;
  const std::string text = "kernel k workgroup(256, 1, 1) {\n  param x: buffer<f32, read>;\n"
                           "  param y: buffer<f32, write>;\n  let i: u32 = global_id(0);\n"
                           "  if lt(i, len(y)) {\n    y[i] = " +
                           name + "(x[i]);\n  }\n}\n";
  ir::VerifiedKernel k = std::move(text::parse_verified(text, "math_sweep.hk").at(0));
  policy::Registry registry;
  rt::CpuDevice cpu(&registry, {.threads = threads});
  constexpr uint64_t kChunk = uint64_t{1} << 24;
  rt::HostBuffer x(ir::ScalarType::F32, kChunk), y(ir::ScalarType::F32, kChunk);
  const std::span<uint32_t> xs = x.as<uint32_t>();
  const std::span<uint32_t> ys = y.as<uint32_t>();
  for (uint64_t base = 0; base < kInputs; base += kChunk) {
    for (uint64_t i = 0; i < kChunk; ++i)
      xs[i] = static_cast<uint32_t>(base + i);
    const rt::Arg args[] = {rt::Arg::of(x), rt::Arg::of(y)};
    cpu.launch(k, rt::Grid::for_lanes(k.kernel(), kChunk), args);
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < threads; ++w) {
      pool.emplace_back([&, w] {
        for (uint64_t i = w; i < kChunk; i += threads) {
          const uint64_t want = num::math(fn, num::Format::F32, xs[i]);
          if (ys[i] != want)
            mismatch(t, fn, xs[i], want, ys[i]);
        }
      });
    }
    for (auto& th : pool)
      th.join();
  }
}

} // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0)
      threads = static_cast<unsigned>(std::max(1, std::atoi(argv[i + 1])));
  }
  if (mode != "numerics" && mode != "cpu") {
    std::fprintf(stderr, "usage: math_sweep numerics|cpu [--threads N]\n");
    return 2;
  }
  bool ok = true;
  for (num::MathFn fn : kFns) {
    Tally t;
    const auto start = std::chrono::steady_clock::now();
    if (mode == "numerics")
      sweep_numerics(fn, threads, t);
    else
      sweep_cpu(fn, threads, t);
    report(mode.c_str(), fn, t,
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ok = ok && t.mismatches == 0;
  }
  return ok ? 0 : 1;
}
