// Edge guards (codegen/llvm/src/edge_guard.hpp): a lane loop whose ifs bound the x coordinate runs
// in two versions, the guards taken as true when a test before the row proves every lane of the
// row takes them. A wrong test would show as a lane that took the wrong branch, so every kernel
// here writes something different in each branch, and the grids put the edge inside rows, at
// their ends, and past them, with offsets that wrap around 2^32 inside a row.
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/text/parse.hpp"
#include "harness.hpp"
#include "matmul_tiled.hpp"
#include "tie_inputs.hpp"

#include <gtest/gtest.h>

using namespace halfway;
using namespace halfway::cpu_test;
using ir::ScalarType;

namespace {

ir::VerifiedKernel parse(const std::string& text) {
  return std::move(text::parse_verified(text, "edge_guard_test.hk").at(0));
}

void expect_same(rt::CpuDevice& cpu, const ir::VerifiedKernel& k, const Launch& in,
                 const std::string& what) {
  Launch want = run_interp(k, in);
  for (bool check : {false, true}) {
    rt::LaunchOptions options;
    options.check_bounds = check;
    Launch got = run_device(cpu, k, in, options);
    EXPECT_EQ(compare_bits(k.kernel(), want, got), "") << what << (check ? ", checked" : "");
  }
}

// Both bounds, an offset that may wrap, global ids in x and y, and an else branch.
const char* kWindow = R"(
kernel window workgroup(8, 4, 1) {
  param y: buffer<u32, write>;
  param lo: u32;
  param hi: u32;
  param off: u32;
  param w: u32;
  let gx: u32 = global_id(0);
  let i: u32 = add(mul(global_id(1), w), gx);
  let c: u32 = add(gx, off);
  if and(lt(c, hi), ge(sub(c, 0:u32), lo)) {
    y[i] = c;
  } else {
    y[i] = 7:u32;
  }
}
)";

TEST(CpuEdgeGuard, WindowsMatchTheInterpreterAtEveryEdge) {
  const auto k = parse(kWindow);
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  const uint32_t groups_x = 3, groups_y = 2, w = 8 * groups_x;
  struct Case {
    uint32_t lo, hi, off;
  };
  const Case cases[] = {
      {0, 1000, 0},                       // every lane inside
      {0, 13, 0},                         // the edge inside the second row of workgroups
      {0, 16, 0},                         // the edge at a workgroup's end
      {3, 1000, 0},                       // a lower bound inside the first workgroup
      {8, 1000, 0},                       // a lower bound at a workgroup's start
      {0, 0xffffffffu, 0xfffffffdu},      // wraps inside the first row: both ends pass
      {0, 0xfffffff0u, 0xfffffff0u - 20}, // reaches the bound inside the last workgroup
      {5, 4, 0},                          // empty window
  };
  for (const Case& c : cases) {
    Launch in(k.kernel());
    in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::U32, size_t{w} * 4 * groups_y);
    in.set_scalar(k.kernel(), "lo", c.lo);
    in.set_scalar(k.kernel(), "hi", c.hi);
    in.set_scalar(k.kernel(), "off", c.off);
    in.set_scalar(k.kernel(), "w", w);
    in.grid = rt::Grid{{groups_x, groups_y, 1}};
    expect_same(cpu, k, in,
                "lo " + std::to_string(c.lo) + " hi " + std::to_string(c.hi) + " off " +
                    std::to_string(c.off));
  }
}

// A guard that reads a let of the same part whose expression reads a barrier loop's variable,
// guards nested in a per-lane loop and around a return, and ifs that are not guards (one compares
// with `ne`); a load under a guard past x's end must fail as on the interpreter.
const char* kTiles = R"(
kernel tiles workgroup(16, 2, 1) {
  param x: buffer<f32, read>;
  param y: buffer<f32, write>;
  param z: buffer<f32, write>;
  param n: u32;
  param steps: u32;
  param skip: u32;
  shared s: f32[2][16];
  let tx: u32 = local_id(0);
  let ty: u32 = local_id(1);
  let row: u32 = add(mul(group_id(1), 2:u32), ty);
  let acc: f32 = 0.0:f32;
  for t: u32 = 0:u32 to steps step 1:u32 {
    let j: u32 = add(mul(t, 16:u32), tx);
    if lt(j, n) {
      s[ty][tx] = x[add(mul(row, n), j)];
    } else {
      s[ty][tx] = 0.5:f32;
    }
    barrier;
    for u: u32 = 0:u32 to 16:u32 step 1:u32 {
      if lt(add(tx, mul(t, 3:u32)), 20:u32) {
        acc = add(acc, mul(s[ty][u], 1.5:f32));
      }
      if ne(tx, skip) {
        acc = add(acc, 0.25:f32);
      }
    }
    barrier;
  }
  if lt(global_id(0), n) {
    y[add(mul(row, n), global_id(0))] = acc;
    return;
  }
  if lt(global_id(0), add(n, 3:u32)) {
    z[add(mul(row, 3:u32), sub(global_id(0), n))] = neg(acc);
  }
}
)";

TEST(CpuEdgeGuard, TilesWithLetsNestedGuardsAndReturnsMatchTheInterpreter) {
  const auto k = parse(kTiles);
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  for (uint32_t n : {16u, 29u, 32u, 45u}) {
    const uint32_t groups_x = 3, groups_y = 2, rows = 2 * groups_y;
    const uint32_t steps = (n + 15) / 16;
    Launch in(k.kernel());
    in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, tie_floats(size_t{rows} * n, n));
    in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, size_t{rows} * n);
    in.buffer(k.kernel(), "z") = rt::HostBuffer(ScalarType::F32, size_t{rows} * 3);
    in.set_scalar(k.kernel(), "n", n);
    in.set_scalar(k.kernel(), "steps", steps);
    in.set_scalar(k.kernel(), "skip", 5);
    in.grid = rt::Grid{{groups_x, groups_y, 1}};
    expect_same(cpu, k, in, "n " + std::to_string(n));
    // x one element short: the guard passes for the last row's last element, past x's end.
    Launch past = in.clone();
    past.buffer(k.kernel(), "x") =
        make_buffer(ScalarType::F32, tie_floats(size_t{rows} * n - 1, n));
    const auto want = interp_error(k, past);
    const auto got = device_error(cpu, k, past);
    ASSERT_TRUE(want && got) << "n " << n;
    EXPECT_EQ(std::string(want->what()), std::string(got->what())) << "n " << n;
  }
}

// The tiled matmul at sizes whose edges fall inside tiles and on them, with ties.
TEST(CpuEdgeGuard, MatmulAtRaggedSizesMatchesTheInterpreter) {
  const auto k = examples::matmul_tiled();
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  struct Size {
    uint32_t m, n, k;
  };
  for (const Size s : {Size{16, 16, 16}, Size{37, 45, 29}, Size{32, 17, 48}, Size{5, 64, 3}}) {
    const ir::Kernel& kk = k.kernel();
    Launch in(kk);
    in.buffer(kk, "a") = make_buffer(ScalarType::F32, tie_floats(size_t{s.m} * s.k, s.m));
    in.buffer(kk, "b") = make_buffer(ScalarType::F32, tie_floats(size_t{s.k} * s.n, s.n));
    in.buffer(kk, "c") = rt::HostBuffer(ScalarType::F32, size_t{s.m} * s.n);
    in.set_scalar(kk, "m", s.m);
    in.set_scalar(kk, "n", s.n);
    in.set_scalar(kk, "k", s.k);
    in.grid = rt::Grid{{(s.n + 15) / 16, (s.m + 15) / 16, 1}};
    expect_same(cpu, k, in,
                std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k));
  }
}

} // namespace
