// The CPU device under relaxed accumulation, through the checker: examples::gemv_fp8_rows is either
// bit-exact or within the §5 bound on every element, and nothing is left unchecked.
#include "gemv_fp8_rows.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/device.hpp"

#include <bit>
#include <gtest/gtest.h>
#include <random>

using namespace halfway;
using namespace halfway::diff;
using ir::ScalarType;

namespace {

TEST(CpuRelaxedAccumulation, GemvFp8HasNoViolationsAndNothingUnchecked) {
  const ir::VerifiedKernel k = examples::gemv_fp8_rows<e4m3>();
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_relaxed_accumulation(policy::Scope::kernel(k.name()),
                                                   "the CPU may vectorise the dot products"));
  std::unique_ptr<rt::Device> cpu = rt::make_device("cpu", &registry);
  const uint32_t rows = 1000, cols = 512;
  rt::HostBuffer w(ScalarType::U32, rows * cols / 4), x(ScalarType::F32, cols),
      y(ScalarType::F32, rows);
  std::mt19937 rng(3);
  for (size_t i = 0; i < w.size(); ++i) {
    auto v = static_cast<uint32_t>(rng());
    for (int b = 0; b < 4; ++b) // no NaN weights
      if (((v >> (8 * b)) & 0x7f) == 0x7f)
        v &= ~(uint32_t{1} << (8 * b));
    w.set_bits(i, v);
  }
  inputs::fill_random(x, 4, {-3, 1});
  std::vector<rt::Arg> args{rt::Arg::of(w), rt::Arg::of(x), rt::Arg::of(y), rt::Arg::u32(cols)};
  Options o;
  o.registry = &registry;
  const Report r = run(k, *cpu, rt::Grid::for_lanes(k.kernel(), rows), args, o);
  EXPECT_TRUE(r.ok()) << to_text(r);
  ASSERT_EQ(r.buffers.size(), 1u);
  EXPECT_EQ(r.buffers[0].violations, 0u) << to_text(r);
  EXPECT_EQ(r.buffers[0].unchecked, 0u) << to_text(r);
  EXPECT_EQ(r.buffers[0].exact + r.buffers[0].within_bound, rows);
  std::printf("gemv_fp8_rows<e4m3> on cpu, relaxed accumulation: %llu exact, %llu within bound, "
              "largest difference %llu ulps\n",
              static_cast<unsigned long long>(r.buffers[0].exact),
              static_cast<unsigned long long>(r.buffers[0].within_bound),
              static_cast<unsigned long long>(r.buffers[0].max_ulps));
}

} // namespace
