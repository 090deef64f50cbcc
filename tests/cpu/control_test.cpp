// Control flow and memory on the CPU device against the interpreter: barriers in uniform loops
// with uniform break / continue / return, values kept per lane across barriers, divergent loops
// inside a part, 2-D and 3-D workgroups with every builtin, shared memory and atomics.
#include "halfway/dsl.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "harness.hpp"

#include <gtest/gtest.h>
#include <random>

using namespace halfway;
using namespace halfway::cpu_test;
using ir::ScalarType;

namespace {

rt::HostBuffer random_floats(size_t n, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<float> v(n);
  for (float& f : v)
    f = d(rng);
  return make_buffer(ScalarType::F32, v);
}

rt::HostBuffer random_u32(size_t n, uint32_t bound, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<uint32_t> v(n);
  for (uint32_t& u : v)
    u = rng() % bound;
  return make_buffer(ScalarType::U32, v);
}

void expect_matches(const ir::VerifiedKernel& k, const Launch& in) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  Launch want = run_interp(k, in);
  EXPECT_EQ(compare_bits(k.kernel(), want, run_device(cpu, k, in)), "") << k.name();
  EXPECT_EQ(compare_bits(k.kernel(), want, run_device(cpu, k, in, {.check_bounds = true})), "")
      << k.name() << " (checked)";
}

TEST(CpuControl, BarriersInUniformLoopsWithBreakAndContinue) {
  auto k = kernel("uniform_loop", {32}, {"x", "y", "n"},
                  [](In<float> x, Out<float> y, Scalar<uint32_t> n) {
                    Shared<float> s("s", 32);
                    Var l(local_id(0), "l");
                    Var acc(0.0f, "acc");
                    For(0u, n, [&](Value<uint32_t> j) {
                      s[l] = x[(group_id(0) * n + j) * 32u + l];
                      Barrier();
                      If(j == 3u, [&] { Continue(); });
                      acc = acc + s[(l + j) % 32u] * 0.5f;
                      Barrier();
                      If(j == 6u, [&] { Break(); });
                    });
                    y[global_id(0)] = acc;
                  });
  const uint32_t groups = 5, n = 9;
  Launch in(k.kernel(), rt::Grid{{groups, 1, 1}});
  in.buffer(k.kernel(), "x") = random_floats(groups * n * 32, 1);
  in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, groups * 32);
  in.set_scalar(k.kernel(), "n", n);
  expect_matches(k, in);
}

TEST(CpuControl, UniformWhileAndReturn) {
  auto k = kernel("uniform_return", {16}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Shared<float> s("s", 16);
    Var l(local_id(0), "l");
    Var g(global_id(0), "g");
    Var v(x[g] * 2.0f, "v"); // lives across barriers: kept per lane
    If(group_id(0) % 3u == 1u, [&] { Return(); });
    Var stride(8u, "stride");
    s[l] = v;
    Barrier();
    While([&] { return stride > 0u; },
          [&] {
            If(l < stride, [&] { s[l] = s[l] + s[l + stride]; });
            Barrier();
            If(stride == 2u, [&] { If(group_id(0) == 4u, [&] { Return(); }); });
            stride = stride >> 1u;
          });
    y[g] = v + s[0u];
  });
  Launch in(k.kernel(), rt::Grid{{7, 1, 1}});
  in.buffer(k.kernel(), "x") = random_floats(7 * 16, 2);
  in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, std::vector<float>(7 * 16, -1.0f));
  expect_matches(k, in);
}

TEST(CpuControl, DivergentLoopsInsideAPart) {
  auto k = kernel("divergent", {64}, {"x", "y"}, [](In<uint32_t> x, Out<uint32_t> y) {
    Var i(global_id(0), "i");
    If(i >= y.size(), [&] { Return(); });
    Var v(x[i], "v");
    Var steps(0u, "steps");
    While([&] { return v != 1u; },
          [&] {
            If(steps > 40u, [&] { Break(); });
            steps = steps + 1u;
            If((v & 1u) == 0u, [&] {
              v = v >> 1u;
              Continue();
            });
            v = v * 3u + 1u;
          });
    For(0u, i % 5u, [&](Value<uint32_t> j) {
      If(j == 2u, [&] { Continue(); });
      steps = steps + j;
    });
    y[i] = steps;
  });
  const size_t n = 1000;
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), n));
  in.buffer(k.kernel(), "x") = random_u32(n, 1000, 3);
  in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::U32, n);
  expect_matches(k, in);
}

TEST(CpuControl, ThreeDimensionalWorkgroups) {
  auto k = kernel("ids", {8, 4, 2}, {"y"}, [](Out<uint32_t> y) {
    Var gx(global_id(0), "gx");
    Var gy(global_id(1), "gy");
    Var gz(global_id(2), "gz");
    Var w(num_groups(0) * group_size(0), "w");
    Var h(num_groups(1) * group_size(1), "h");
    Var at((gz * h + gy) * w + gx, "at");
    y[at] = local_id(0) + local_id(1) * 10u + local_id(2) * 100u + group_id(0) * 1000u +
            group_id(1) * 10000u + group_id(2) * 100000u;
  });
  const rt::Grid grid{{3, 2, 5}};
  Launch in(k.kernel(), grid);
  in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::U32, 3 * 8 * 2 * 4 * 5 * 2);
  expect_matches(k, in);
}

// Barrier-free 1-D kernels run each row of workgroups as one loop (flat mode), with the
// `if (global_id(0) < n)` guard turned into the loop's range; multi-dimensional grids, partial and
// empty ranges, and ranges past the grid must all come out as on the interpreter.
TEST(CpuControl, FlatRowsAndLaneGuards) {
  auto k = kernel("flat_rows", {32}, {"y", "n"}, [](Out<uint32_t> y, Scalar<uint32_t> n) {
    Var i(global_id(0), "i");
    If(i < n, [&] {
      Var at((global_id(2) * num_groups(1) + global_id(1)) * num_groups(0) * 32u + i, "at");
      y[at] = i + group_id(0) * 7u + local_id(0) * 1000u + group_id(1) * 100000u +
              group_id(2) * 1000000u;
    });
  });
  const rt::Grid grid{{3, 4, 2}};
  for (uint32_t n : {0u, 1u, 45u, 96u, 500u}) {
    Launch in(k.kernel(), grid);
    in.buffer(k.kernel(), "y") =
        make_buffer(ScalarType::U32, std::vector<uint32_t>(3 * 32 * 4 * 2, 7));
    in.set_scalar(k.kernel(), "n", n);
    expect_matches(k, in);
  }
}

TEST(CpuControl, LocalGuardsInBarrierKernels) {
  auto k = kernel("local_guard", {64}, {"x", "y", "m"},
                  [](In<float> x, Out<float> y, Scalar<uint32_t> m) {
                    Shared<float> s("s", 64);
                    Var l(local_id(0), "l");
                    s[l] = x[global_id(0)];
                    Barrier();
                    If(l < m, [&] { s[l] = s[l] * 2.0f; });
                    Barrier();
                    y[global_id(0)] = s[l];
                  });
  for (uint32_t m : {0u, 5u, 64u, 1000u}) {
    Launch in(k.kernel(), rt::Grid{{3, 1, 1}});
    in.buffer(k.kernel(), "x") = random_floats(3 * 64, 9);
    in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, 3 * 64);
    in.set_scalar(k.kernel(), "m", m);
    expect_matches(k, in);
  }
}

TEST(CpuControl, SharedAndBufferAtomics) {
  auto k = kernel("atomics", {64}, {"keys", "hist", "hi", "lo", "bits", "local_old"},
                  [](In<uint32_t> keys, InOut<uint32_t> hist, InOut<int32_t> hi, InOut<int32_t> lo,
                     InOut<uint32_t> bits, Out<uint32_t> local_old) {
                    Shared<uint32_t> counts("counts", 8);
                    Var i(global_id(0), "i");
                    Var key(keys[i], "key");
                    atomic_add(hist[key % 16u], 1u);
                    atomic_max(hi[0u], convert<int32_t>(key) - 500);
                    atomic_min(lo[0u], convert<int32_t>(key) - 500);
                    atomic_or(bits[0u], 1u << (key % 32u));
                    atomic_xor(bits[1u], key);
                    // Each statement's shared atomics apply in lane order, so their old values
                    // are deterministic; between statements a barrier orders them (without one,
                    // GPUs leave the interleaving open, and the interpreter and the CPU device
                    // interleave differently: statement by statement, lane by lane).
                    Var old(atomic_add(counts[key % 8u], key), "old");
                    Barrier();
                    Var swapped(atomic_compare_exchange(counts[0u], old, 7u), "swapped");
                    Barrier();
                    Var was(atomic_exchange(counts[1u], i), "was");
                    Barrier();
                    local_old[i] = old + swapped * 3u + was + counts[local_id(0) % 8u];
                  });
  const size_t n = 64 * 20;
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), n));
  in.buffer(k.kernel(), "keys") = random_u32(n, 1000, 4);
  in.buffer(k.kernel(), "hist") = rt::HostBuffer(ScalarType::U32, 16);
  in.buffer(k.kernel(), "hi") = make_buffer(ScalarType::I32, std::vector<int32_t>{-1000});
  in.buffer(k.kernel(), "lo") = make_buffer(ScalarType::I32, std::vector<int32_t>{1000});
  in.buffer(k.kernel(), "bits") = rt::HostBuffer(ScalarType::U32, 2);
  in.buffer(k.kernel(), "local_old") = rt::HostBuffer(ScalarType::U32, n);
  expect_matches(k, in);
}

} // namespace
