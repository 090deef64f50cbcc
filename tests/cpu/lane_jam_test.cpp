// Lane parts that are one `for` loop with the same bounds in every lane run several lanes'
// bodies in one loop (codegen/llvm/src/lower_lanes.cpp). Each lane's operations and their order
// are unchanged, so the results must stay bit-identical to the interpreter's.
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "harness.hpp"
#include "kernels.hpp" // bench/cpu: reduce_chunks, the benchmark that motivated the interleaving

#include <gtest/gtest.h>
#include <random>

using namespace halfway;
using namespace halfway::cpu_test;
using ir::ScalarType;

namespace {

std::vector<float> values(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> v(-4.0f, 4.0f);
  std::vector<float> out(n);
  for (auto& x : out)
    x = v(rng);
  // Cancellation-prone and special values, so that any reordering would show.
  for (size_t i = 0; i + 8 < n; i += 97) {
    out[i] = 1e30f;
    out[i + 1] = -1e30f;
    out[i + 2] = 1.0e-40f;
    out[i + 3] = -0.0f;
  }
  return out;
}

void expect_same_as_interpreter(const ir::VerifiedKernel& k, const Launch& in) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  Launch want = run_interp(k, in);
  Launch got = run_device(cpu, k, in);
  EXPECT_EQ(compare_bits(k.kernel(), want, got), "") << k.name();
}

TEST(CpuLaneJam, ReduceChunksMatchesTheInterpreter) {
  auto k = bench::reduce_chunks();
  const uint32_t per_lane = 37, groups = 5;
  Launch in(k.kernel());
  in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, values(256 * groups * per_lane, 3));
  in.buffer(k.kernel(), "out") = rt::HostBuffer(ScalarType::F32, groups);
  in.set_scalar(k.kernel(), "per_lane", per_lane);
  in.grid = rt::Grid{{groups, 1, 1}};
  expect_same_as_interpreter(k, in);
}

TEST(CpuLaneJam, PerLaneLoopsWithFmaNarrowingSignedBoundsAndSteps) {
  // Each lane: a signed loop from -n to n step 2 with an fma and a let inside, an integer
  // accumulator beside it, then a narrowing store. Odd lane counts exercise the remainder lanes.
  auto k = kernel("per_lane_loops", {24}, {"x", "y", "h", "count", "n"},
                  [](In<float> x, Out<float> y, Out<f16> h, Out<int32_t> count, Scalar<int32_t> n) {
                    Var lane(global_id(0), "lane");
                    Var acc(0.0f, "acc");
                    Var hits(0, "hits");
                    For(-n, n, 2, [&](Value<int32_t> j) {
                      Var v(x[convert<uint32_t>(j + n) + lane], "v");
                      acc = fma(v, v, acc);
                      hits = hits + select(v > 0.0f, Value<int32_t>(1), Value<int32_t>(0));
                    });
                    y[lane] = acc;
                    h[lane] = acc * 0.25f;
                    count[lane] = hits;
                  });
  for (int32_t n : {0, 1, 8, 21}) {
    const uint32_t lanes = 24 * 3;
    Launch in(k.kernel());
    in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, values(lanes + 2 * 21 + 1, 5 + n));
    in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, lanes);
    in.buffer(k.kernel(), "h") = rt::HostBuffer(ScalarType::F16, lanes);
    in.buffer(k.kernel(), "count") = rt::HostBuffer(ScalarType::I32, lanes);
    in.set_scalar(k.kernel(), "n", static_cast<uint32_t>(n));
    in.grid = rt::Grid{{3, 1, 1}};
    expect_same_as_interpreter(k, in);
  }
}

} // namespace
