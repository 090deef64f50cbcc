// Lane parts that are one `for` loop with the same bounds in every lane run several lanes'
// bodies in one loop (codegen/llvm/src/lower_lanes.cpp). Each lane's operations and their order
// are unchanged, so the results must stay bit-identical to the interpreter's.
#include "gemv.hpp" // examples: the split-k GEMVs, lanes in step with a loop per lane
#include "halfway/numerics/fast_math.hpp"
#include "halfway/numerics/math.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/text/parse.hpp"
#include "harness.hpp"
#include "reduce_sum.hpp" // reduce_chunks, the benchmark that motivated the interleaving
#include "tie_inputs.hpp"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <optional>
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

void expect_same_as_interpreter(const ir::VerifiedKernel& k, const Launch& in,
                                rt::CpuDevice* device = nullptr) {
  policy::Registry registry;
  std::optional<rt::CpuDevice> own;
  rt::CpuDevice& cpu = device ? *device : own.emplace(&registry);
  Launch want = run_interp(k, in);
  Launch got = run_device(cpu, k, in);
  EXPECT_EQ(compare_bits(k.kernel(), want, got), "") << k.name();
}

TEST(CpuLaneJam, ReduceChunksMatchesTheInterpreter) {
  auto k = examples::reduce_chunks();
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

// The split-k GEMVs: each lane's loop starts at its own lane id, so lanes in step keep a loop
// variable per lane, run while every lane of the group goes on, and finish the rest lane by
// lane. Column counts whose chunk count is not a multiple of 64 (and fewer chunks than lanes)
// give lanes of one step different trip counts; a grid past the last row takes the uniform
// `if (row < rows)` around the loop both ways.
TEST(CpuLaneJam, SplitKGemvsWithRaggedLanesMatchTheInterpreter) {
  const ir::VerifiedKernel kernels[] = {examples::gemv_f32(), examples::gemv_f16(),
                                        examples::gemv_fp8<e4m3>(), examples::gemv_fp8<e5m2>()};
  policy::Registry registry;
  rt::CpuDevice cpu(&registry); // one device: each kernel compiles once
  for (const auto& k : kernels)
    for (uint32_t chunks : {1u, 5u, 63u, 64u, 97u, 200u}) {
      SCOPED_TRACE(k.name() + ", " + std::to_string(chunks) + " chunks");
      const uint32_t rows = 11, cols = 4 * chunks;
      const ir::Kernel& kk = k.kernel();
      Launch in(kk);
      const ScalarType wt = kk.params[0].type;
      const size_t n = wt == ScalarType::U32 ? size_t{rows} * chunks : size_t{rows} * cols;
      std::vector<float> v = values(size_t{rows} * cols + 8, 40 + chunks);
      rt::HostBuffer w(wt, n);
      for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = std::bit_cast<uint32_t>(v[i]);
        // fp8 words: any four codes (NaNs and infinities of e5m2 included); f16: the f32's top
        // bits, so that every class of value appears.
        w.set_bits(i, wt == ScalarType::F32   ? bits
                      : wt == ScalarType::F16 ? (bits >> 16)
                                              : bits * 2654435761u);
      }
      in.buffer(kk, "w") = std::move(w);
      in.buffer(kk, "x") = make_buffer(ScalarType::F32, values(cols, 7 + chunks));
      in.buffer(kk, "y") = rt::HostBuffer(ScalarType::F32, rows);
      in.set_scalar(kk, "cols", cols);
      in.grid = rt::Grid{{rows + 3, 1, 1}};
      expect_same_as_interpreter(k, in, &cpu);
    }
}

TEST(CpuLaneJam, LoopsWithLaneDependentBoundsAndStepsMatchTheInterpreter) {
  // Start, end and step all depend on the lane (signed, negative starts, a step of 1 to 3), with
  // statements before and after the loop inside a uniform if, a narrowing store after it. The
  // shared array and the barrier keep the kernel out of flat mode (one loop over the whole row),
  // which runs lanes one by one.
  auto k = kernel("ragged", {16}, {"x", "y", "h", "n"},
                  [](In<float> x, Out<float> y, Out<f16> h, Scalar<int32_t> n) {
                    Shared<float> mirror("mirror", 16);
                    Var lane(global_id(0), "lane");
                    Var lid(convert<int32_t>(local_id(0)), "lid");
                    Var acc(0.0f, "acc");
                    Var last(0, "last");
                    If(n > 2, [&] {
                      Var scale(x[lane] * 0.5f, "scale");
                      For(lid - 7, n + lid % 5, lid % 3 + 1, [&](Value<int32_t> j) {
                        Var v(x[convert<uint32_t>(j + 7)], "v");
                        acc = acc + v * scale;
                        last = j;
                      });
                      acc = acc * scale;
                    });
                    mirror[local_id(0)] = acc;
                    h[lane] = acc;
                    Barrier();
                    y[lane] = mirror[15u - local_id(0)] + convert<float>(last);
                  });
  for (int32_t n : {0, 3, 9, 40}) {
    SCOPED_TRACE(n);
    const uint32_t lanes = 16 * 2;
    Launch in(k.kernel());
    in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, values(lanes + 40 + 16, 9 + n));
    in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, lanes);
    in.buffer(k.kernel(), "h") = rt::HostBuffer(ScalarType::F16, lanes);
    in.set_scalar(k.kernel(), "n", static_cast<uint32_t>(n));
    in.grid = rt::Grid{{2, 1, 1}};
    expect_same_as_interpreter(k, in);
  }
}

// Lockstep (split-k loops `for j = lid + u to n step s`, u, n, s uniform): one iteration of
// every lane at a time while all lanes go on, then each lane alone. Offsets near 2^32 wrap some
// lanes' starts past zero (those lanes loop, the others do not), signed starts are negative, and
// the step does not divide the range; relaxed accumulation runs in lockstep too.
TEST(CpuLaneJam, LockstepSplitKLoopsMatchTheInterpreter) {
  auto k = kernel("split_k", {32}, {"x", "y", "off", "n", "step"},
                  [](In<float> x, Out<float> y, Scalar<uint32_t> off, Scalar<uint32_t> n,
                     Scalar<uint32_t> step) {
                    Shared<float> mirror("mirror", 32);
                    Private<float, 3> part("part"); // per lane, element-major in the scratch
                    Var lid(local_id(0), "lid");
                    Var acc(0.0f, "acc");
                    Var sq(0.0f, "sq");
                    If(n > 0u, [&] {
                      For(lid + off, n, step, [&](Value<uint32_t> j) {
                        Var v(x[j], "v");
                        acc = acc + v;
                        sq = sq + v * v * 0.5f;
                      });
                    });
                    mirror[lid] = acc - sq;
                    Barrier();
                    y[global_id(0)] = mirror[31u - lid];
                  });
  struct Case {
    uint32_t off, n, step;
  };
  const Case cases[] = {
      {0, 0, 32}, {0, 1, 32},           {0, 200, 32},          {5, 200, 32}, {0, 200, 7},
      {3, 31, 1}, {0xfffffff0u, 40, 9}, {0xffffffe0u, 64, 32}, {0, 999, 64}, {100, 150, 0x10000}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.off) + " " + std::to_string(c.n) + " " + std::to_string(c.step));
    for (bool relaxed : {false, true}) {
      policy::Registry registry;
      if (relaxed) {
        ASSERT_TRUE(registry.accept_relaxed_accumulation(policy::Scope::kernel("split_k"),
                                                         "test: lockstep with reassociation"));
      }
      rt::CpuDevice cpu(&registry);
      Launch in(k.kernel());
      // Strict: values with cancellations, so any reordering shows; relaxed: values in [-4, 4].
      std::vector<float> xs = values(1000, 11 + c.n);
      if (relaxed)
        for (float& v : xs)
          v = std::isfinite(v) && std::abs(v) <= 4.0f ? v : 1.0f;
      in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, xs);
      in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, 64);
      in.set_scalar(k.kernel(), "off", c.off);
      in.set_scalar(k.kernel(), "n", c.n);
      in.set_scalar(k.kernel(), "step", c.step);
      in.grid = rt::Grid{{2, 1, 1}};
      Launch got = run_device(cpu, k, in);
      if (!relaxed) {
        EXPECT_EQ(compare_bits(k.kernel(), run_interp(k, in), got), "");
        continue;
      }
      // Relaxed: each lane's two sums in any order, so within a bound of the strict ones.
      Launch want = run_interp(k, in);
      auto a = contents<float>(want.buffer(k.kernel(), "y"));
      auto b = contents<float>(got.buffer(k.kernel(), "y"));
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_NEAR(a[i], b[i], 1e-3f * (1.0f + std::abs(a[i]))) << i;
    }
  }
}

// Lockstep loops with stores and exp in the body (group_norm_silu's and softmax's last loops):
// y[j] = v / (1 + exp(-v)), an f16 narrowing of a*b + c with inputs within an f32 ulp of a
// binary16 midpoint (two-step rounding differs from one rounding there), and a strict sum of the
// exps beside them and sums of x into a private array. Inputs the inline exp cannot decide sit at
// varied positions, so the masked fallback runs for single lanes of the vector loop. Lanes get
// different trip counts (n not a multiple of the workgroup, of 16 or of the step; starts wrapping
// past 2^32). A second kernel guards the stores with a lane-dependent if (a fused epilogue's shape,
// also lockstep), and a third has a lane-dependent break in the loop (not lockstep: it runs lane
// after lane).
TEST(CpuLaneJam, LockstepLoopsWithStoresAndExpMatchTheInterpreter) {
  enum class Shape { Plain, Guarded, Break };
  auto make = [](Shape shape) {
    return kernel(shape == Shape::Plain     ? "lockstep_store"
                  : shape == Shape::Guarded ? "lockstep_guarded"
                                            : "lockstep_break",
                  {32}, {"x", "a", "b", "c", "y", "h", "s", "off", "n", "step"},
                  [shape](In<float> x, In<float> a, In<float> b, In<float> c, Out<float> y,
                          Out<f16> h, Out<float> s, Scalar<uint32_t> off, Scalar<uint32_t> n,
                          Scalar<uint32_t> step) {
                    // The barrier keeps the kernel out of flat mode (one loop over the whole
                    // row of workgroups, lanes one by one).
                    Shared<float> mirror("mirror", 32);
                    Private<float, 3> part("part"); // per lane, element-major in the scratch
                    Var lid(local_id(0), "lid");
                    Var acc(0.0f, "acc");
                    If(n > 0u, [&] {
                      For(lid + off, n, step, [&](Value<uint32_t> j) {
                        Var at(group_id(0) * n + j, "at");
                        Var v(x[j], "v");
                        Var e(exp(-v), "e");
                        if (shape == Shape::Break)
                          If(v > 80.0f, [] { Break(); });
                        auto store = [&] {
                          y[at] = v / (1.0f + e);
                          h[at] = a[j] * b[j] + c[j];
                        };
                        if (shape == Shape::Guarded)
                          If(v < 1e20f, store); // lanes diverge (the inputs hold +-1e30)
                        else
                          store();
                        acc = acc + e;
                        part[j % 3u] = part[j % 3u] + v;
                      });
                    });
                    mirror[lid] = acc + (part[0u] - part[1u]) * part[2u];
                    Barrier();
                    s[global_id(0)] = mirror[31u - lid];
                  });
  };
  const ir::VerifiedKernel kernels[] = {make(Shape::Plain), make(Shape::Guarded),
                                        make(Shape::Break)};
  // Undecided exp(-v) inputs: a scan of (-2, -1] finds a few.
  std::vector<float> hard;
  for (uint32_t bits = num::f32_bits(1.0f); bits < num::f32_bits(1.0f) + (1u << 23); ++bits)
    if (!num::fast::decide(num::MathFn::Exp, num::Format::F32, num::f32_from_bits(bits)))
      hard.push_back(-num::f32_from_bits(bits));
  ASSERT_FALSE(hard.empty()) << "no undecided input found: the fallback is untested";
  struct Case {
    uint32_t off, n, step;
  };
  const Case cases[] = {{0, 0, 32},   {0, 1, 32}, {0, 1000, 32},          {5, 999, 32},
                        {0, 333, 7},  {3, 47, 1}, {0xfffffff0u, 400, 41}, {0, 1000, 64},
                        {7, 1000, 16}};
  policy::Registry registry;
  rt::CpuDevice cpu(&registry); // one device: each kernel compiles once
  for (const auto& k : kernels)
    for (const Case& cs : cases) {
      SCOPED_TRACE(k.name() + " " + std::to_string(cs.off) + " " + std::to_string(cs.n) + " " +
                   std::to_string(cs.step));
      const ir::Kernel& kk = k.kernel();
      const size_t len = 1000, groups = 2;
      std::vector<float> xs = values(len, 21 + cs.n);
      for (size_t i = 0; i < hard.size() && i * 37 + 11 < len; ++i)
        xs[i * 37 + 11] = hard[i];
      xs[500] = 88.0f; // the break (exp(-88) is near the subnormal range)
      const MulAddInputs t = tie_mul_add(len, 5 + cs.n);
      Launch in(kk);
      in.buffer(kk, "x") = make_buffer(ScalarType::F32, xs);
      in.buffer(kk, "a") = make_buffer(ScalarType::F32, t.a);
      in.buffer(kk, "b") = make_buffer(ScalarType::F32, t.b);
      in.buffer(kk, "c") = make_buffer(ScalarType::F32, t.c);
      in.buffer(kk, "y") = rt::HostBuffer(ScalarType::F32, groups * len);
      in.buffer(kk, "h") = rt::HostBuffer(ScalarType::F16, groups * len);
      in.buffer(kk, "s") = rt::HostBuffer(ScalarType::F32, groups * 32);
      in.set_scalar(kk, "off", cs.off);
      in.set_scalar(kk, "n", cs.n);
      in.set_scalar(kk, "step", cs.step);
      in.grid = rt::Grid{{static_cast<uint32_t>(groups), 1, 1}};
      Launch want = run_interp(k, in);
      Launch got = run_device(cpu, k, in);
      EXPECT_EQ(compare_bits(kk, want, got), "");
      // The stores ran in both groups: x[2] is 1e-40, silu of it half that.
      if (cs.n > 2 && cs.off == 0) {
        auto y = contents<float>(got.buffer(kk, "y"));
        EXPECT_EQ(y[2], 5e-41f);
        EXPECT_EQ(y[cs.n + 2], 5e-41f);
      }
    }
}

// Workgroups of several rows: `factor` rows of lanes run one loop in step while the x loop stays
// the vectorised one (JamPlan::rows). Loops with constant bounds (unrolled whole), parameter
// bounds, and a start per row (each row then finishes alone), under a uniform if, in 2-D and 3-D
// workgroups whose rows are a multiple of 4, of 2, or odd (no jam); sums whose order would show.
TEST(CpuLaneJam, RowsInStepMatchTheInterpreter) {
  const char* loops[] = {
      "for j: u32 = 0:u32 to 16:u32 step 1:u32",
      "for j: u32 = 0:u32 to n step 1:u32",
      "for j: u32 = local_id(1) to n step 3:u32",
  };
  const uint32_t shapes[][3] = {{8, 4, 2}, {16, 2, 1}, {8, 3, 1}, {4, 8, 1}};
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  for (const char* loop : loops)
    for (const auto& wg : shapes) {
      const std::string text = "kernel rows workgroup(" + std::to_string(wg[0]) + ", " +
                               std::to_string(wg[1]) + ", " + std::to_string(wg[2]) + R"() {
  param x: buffer<f32, read>;
  param y: buffer<f32, write>;
  param n: u32;
  param w: u32;
  let gx: u32 = global_id(0);
  let r: u32 = add(mul(global_id(2), 64:u32), global_id(1));
  let acc: f32 = 0.0:f32;
  let t: f32 = x[gx];
  if lt(n, 1000:u32) {
    )" + loop + R"( {
      let v: f32 = x[add(mul(r, w), add(j, gx))];
      acc = add(acc, mul(v, x[add(j, gx)]));
    }
  }
  y[add(mul(r, w), gx)] = add(acc, t);
}
)";
      SCOPED_TRACE(text);
      const auto k = std::move(text::parse_verified(text, "rows.hk").at(0));
      const uint32_t groups[3] = {2, 2, 2};
      const uint32_t lanes_x = wg[0] * groups[0];
      const uint32_t rows = 64 * (wg[2] * groups[2] - 1) + wg[1] * groups[1];
      for (uint32_t n : {16u, 21u}) {
        const uint32_t w = lanes_x + 16 + n;
        Launch in(k.kernel());
        in.buffer(k.kernel(), "x") =
            make_buffer(ScalarType::F32, values(size_t{rows} * w + w, 60 + n));
        in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, size_t{rows} * w);
        in.set_scalar(k.kernel(), "n", n);
        in.set_scalar(k.kernel(), "w", w);
        in.grid = rt::Grid{{groups[0], groups[1], groups[2]}};
        expect_same_as_interpreter(k, in, &cpu);
      }
    }
}

} // namespace
