// The launch memo: a second launch reuses the compiled code; an opt-in (a new budget key), checked
// mode or overlapping buffers (new code variants) compile anew; an opt-in for another kernel does
// not.
#include "example_inputs.hpp"
#include "examples.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"

#include <gtest/gtest.h>
#include <thread>

using namespace halfway;
using namespace halfway::cpu_test;

namespace {

rt::LaunchResult launch(rt::CpuDevice& cpu, const ir::VerifiedKernel& k, Launch& in,
                        const rt::LaunchOptions& o = {}) {
  auto args = in.args();
  return cpu.launch(k, in.grid, args, o);
}

TEST(CpuMemo, SecondLaunchIsAHit) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = examples::saxpy();
  Launch in = example_inputs(k, 1);
  rt::LaunchResult first = launch(cpu, k, in);
  EXPECT_FALSE(first.memo_hit);
  EXPECT_GT(first.compile_ms, 0);
  rt::LaunchResult second = launch(cpu, k, in);
  EXPECT_TRUE(second.memo_hit);
  EXPECT_EQ(second.compile_ms, 0);
  EXPECT_EQ(cpu.memo_size(), 1u);
  // The same kernel built again has the same structural hash: still a hit.
  EXPECT_TRUE(launch(cpu, examples::saxpy(), in).memo_hit);
}

TEST(CpuMemo, OptInRegeneratesWithoutBarriers) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = examples::narrow_f16();
  Launch in = example_inputs(k, 2);
  Launch strict = in.clone();
  rt::LaunchResult before = launch(cpu, k, strict);
  EXPECT_FALSE(before.budget.holds(policy::OptIn::SingleRounding));
  EXPECT_TRUE(launch(cpu, k, strict).memo_hit);

  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"), "bounded"));
  Launch fused = in.clone();
  rt::LaunchResult after = launch(cpu, k, fused);
  EXPECT_FALSE(after.memo_hit) << "the budget changed: the code must be regenerated";
  EXPECT_TRUE(after.budget.holds(policy::OptIn::SingleRounding));
  EXPECT_EQ(after.budget.single_rounding, "bounded");
  EXPECT_NE(compare_bits(k.kernel(), strict, fused), "") << "regenerated code still has barriers";
  EXPECT_TRUE(launch(cpu, k, fused).memo_hit);
  EXPECT_EQ(cpu.memo_size(), 2u);
}

TEST(CpuMemo, OptInForAnotherKernelKeepsTheEntry) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = examples::narrow_f16();
  Launch in = example_inputs(k, 3);
  launch(cpu, k, in);
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("saxpy"), "elsewhere"));
  EXPECT_TRUE(launch(cpu, k, in).memo_hit);
}

TEST(CpuMemo, VariantsAreSeparateEntries) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = examples::saxpy();
  Launch in = example_inputs(k, 4);
  EXPECT_FALSE(launch(cpu, k, in).memo_hit);
  EXPECT_FALSE(launch(cpu, k, in, {.check_bounds = true}).memo_hit);
  EXPECT_TRUE(launch(cpu, k, in, {.check_bounds = true}).memo_hit);
  EXPECT_TRUE(launch(cpu, k, in, {.deterministic = true, .threads = 1}).memo_hit)
      << "threading does not change the code";
  cpu.clear_memo();
  EXPECT_FALSE(launch(cpu, k, in).memo_hit);
}

// One buffer bound to two parameters: the code must not assume they are distinct.
TEST(CpuMemo, OverlappingBuffersGetOtherCode) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = examples::linear<float>();
  Launch in = example_inputs(k, 5);
  launch(cpu, k, in);
  Launch alias = in.clone();
  const ir::Kernel& kk = k.kernel();
  std::vector<rt::Arg> args = alias.args();
  args[kk.find_param("w")] = rt::Arg::of(alias.buffer(kk, "x")); // y = x * x + b
  rt::LaunchResult r = cpu.launch(k, alias.grid, args);
  EXPECT_FALSE(r.memo_hit);

  Launch want_in = in.clone();
  want_in.buffer(kk, "w") = want_in.buffer(kk, "x").clone();
  Launch want = run_interp(k, want_in);
  EXPECT_TRUE(want.buffer(kk, "y") == alias.buffer(kk, "y"));
}

} // namespace

namespace {

// Launches from several threads at once share the memo, the JIT and the pool.
TEST(CpuMemo, ConcurrentLaunches) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  std::vector<ir::VerifiedKernel> kernels = {examples::saxpy(), examples::narrow_f16(),
                                             examples::reduce_sum(), examples::linear<f16>()};
  std::vector<Launch> inputs, wants;
  for (auto& k : kernels) {
    inputs.push_back(example_inputs(k, 9));
    wants.push_back(run_interp(k, inputs.back()));
  }
  std::vector<std::string> problems(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < problems.size(); ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 5; ++r) {
        size_t i = (t + r) % kernels.size();
        Launch got = run_device(cpu, kernels[i], inputs[i]);
        problems[t] += compare_bits(kernels[i].kernel(), wants[i], got);
      }
    });
  for (auto& t : threads)
    t.join();
  for (const std::string& p : problems)
    EXPECT_EQ(p, "");
  EXPECT_EQ(cpu.memo_size(), kernels.size());
}

} // namespace
