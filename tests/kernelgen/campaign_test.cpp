// The campaign: deterministic sharding, the classification of mismatches, and the short campaign
// ctest runs on every device of the build (interp, cpu, vulkan where present).
//
// The 200-kernel campaign is one parameterised test per campaign shard (8 of them): GoogleTest's
// own sharding (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX) spreads those tests over its shards, and
// ctest runs each as its own test, so the campaign splits across processes and machines the same
// way the CLI's --shard I/N does.
#include "halfway/kernelgen/campaign.hpp"
#include "halfway/support/error.hpp"

#include <gtest/gtest.h>
#include <set>

namespace halfway::kernelgen {
namespace {

TEST(Campaign, ShardsPartitionTheKernels) {
  std::set<uint64_t> seen;
  size_t total = 0;
  for (uint64_t s = 0; s < 3; ++s)
    for (uint64_t i : shard_indices(10, s, 3)) {
      EXPECT_EQ(i % 3, s);
      seen.insert(i);
      ++total;
    }
  EXPECT_EQ(total, 10u);
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(*seen.rbegin(), 9u);
  EXPECT_THROW(shard_indices(10, 3, 3), Error);
  EXPECT_THROW(shard_indices(10, 0, 0), Error);
}

TEST(Campaign, ExplainsOnlyDocumentedCausesOnVulkan) {
  using ir::ScalarType;
  ir::Kernel k;
  k.name = "k";
  ir::Expr x;
  x.op = ir::Op::Const;
  x.type = ScalarType::F32;
  const ir::ExprId c = k.add(x);
  ir::Expr e;
  e.op = ir::Op::Exp;
  e.type = ScalarType::F32;
  e.nargs = 1;
  e.args[0] = c;
  k.add(e);
  // A loose op explains nothing by itself: the checker's intervals already passed every element
  // inside the device's precision, so what is left is outside it.
  EXPECT_EQ(explain(k, "vulkan", ScalarType::F32, 0x3f800000, 0x3f800001), std::nullopt);
  k.exprs[1].op = ir::Op::Copysign;
  k.exprs[1].nargs = 2;
  k.exprs[1].args[1] = c;
  // copysign: an element that differs in the sign bit alone, on Vulkan only.
  EXPECT_EQ(explain(k, "vulkan", ScalarType::F32, 0x41a00000, 0xc1a00000),
            "known device issue: NaN sign observed (copysign)");
  EXPECT_EQ(explain(k, "vulkan", ScalarType::F32, 0x41a00000, 0xc1a00001), std::nullopt);
  EXPECT_EQ(explain(k, "cpu", ScalarType::F32, 0x41a00000, 0xc1a00000), std::nullopt);
  EXPECT_EQ(explain(k, "interp", ScalarType::F32, 0x41a00000, 0xc1a00000), std::nullopt);
  // A bitcast of a float: both elements NaN patterns of the element's width or of its halves.
  k.exprs[1].op = ir::Op::Bitcast;
  k.exprs[1].type = ScalarType::U32;
  k.exprs[1].nargs = 1;
  const std::string bits = "known device issue: NaN sign or payload observed (bitcast, pack)";
  EXPECT_EQ(explain(k, "vulkan", ScalarType::U32, 0x7fc00000, 0xffc00001), bits);
  EXPECT_EQ(explain(k, "vulkan", ScalarType::U16, 0x7e01, 0x7e00), bits);         // f16 NaNs
  EXPECT_EQ(explain(k, "vulkan", ScalarType::U16, 0x7f81, 0xffc0), bits);         // bf16 NaNs
  EXPECT_EQ(explain(k, "vulkan", ScalarType::U32, 0x12347e01, 0x12347e00), bits); // a pack's half
  EXPECT_EQ(explain(k, "vulkan", ScalarType::U32, 0x12357e01, 0x12347e00), std::nullopt);
  EXPECT_EQ(explain(k, "vulkan", ScalarType::U16, 0x7e01, 0x7c00), std::nullopt); // NaN and inf
  EXPECT_EQ(explain(k, "vulkan", ScalarType::U64, 0x7ff8000000000001, 0xfff8000000000000), bits);
  EXPECT_EQ(explain(k, "cpu", ScalarType::U16, 0x7e01, 0x7e00), std::nullopt);
  // Without such an op, NaN patterns are not explained.
  k.exprs[1].op = ir::Op::Convert;
  EXPECT_EQ(explain(k, "vulkan", ScalarType::U32, 0x7fc00000, 0xffc00001), std::nullopt);
}

TEST(Campaign, DiffCommandCarriesTheSetup) {
  RunSetup s;
  s.lanes = 64;
  s.inputs = diff::inputs::Kind::Ties;
  s.input_seed = 42;
  s.single_rounding = true;
  s.exact_models = true;
  EXPECT_EQ(diff_command("k.hk", "fz_1_2", "cpu", s),
            "halfway diff k.hk --device cpu --grid 64 --inputs ties --seed 42 "
            "--accept-single-rounding=fz_1_2:fuzz --exact-models");
}

class ShortCampaign : public ::testing::TestWithParam<uint64_t> {};

constexpr uint64_t kShortCount = 200, kShortShards = 8;

TEST_P(ShortCampaign, NothingUnexplained) {
  CampaignOptions o;
  o.seed = 2026;
  o.count = kShortCount;
  o.shard = GetParam();
  o.shards = kShortShards;
  o.devices = rt::device_names(); // interp, cpu and vulkan where this build has them
  o.timeout = std::chrono::seconds(60);
  const CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.kernels, shard_indices(kShortCount, o.shard, o.shards).size());
  EXPECT_EQ(r.comparisons, r.kernels * o.devices.size());
  EXPECT_EQ(r.unexplained, 0u);
  for (const Finding& f : r.findings)
    if (f.check.outcome == Outcome::Unexplained)
      ADD_FAILURE() << "kernel " << f.index << " on " << f.device << ": " << f.check.cause << "\n"
                    << f.check.report << "\n"
                    << f.text;
  // Most comparisons prove something: a campaign of inconclusive runs would pass vacuously.
  EXPECT_LT(r.inconclusive + r.unsupported, r.comparisons / 2);
}

INSTANTIATE_TEST_SUITE_P(Shards, ShortCampaign, ::testing::Range<uint64_t>(0, kShortShards));

} // namespace
} // namespace halfway::kernelgen
