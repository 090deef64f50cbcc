// The CLI form of an opt-in: --accept-single-rounding[=KERNEL]:REASON.

#include "halfway/policy/flag.hpp"
#include "halfway/policy/registry.hpp"
#include "log_capture.hpp"

#include <gtest/gtest.h>

namespace halfway::policy {
namespace {

TEST(PolicyFlag, AllKernels) {
  auto parsed = parse_opt_in_flag("--accept-single-rounding:checked: within bound");
  ASSERT_TRUE(parsed) << parsed.error;
  EXPECT_EQ(*parsed.flag,
            (OptInFlag{OptIn::SingleRounding, Scope::all_kernels(), "checked: within bound"}));
}

TEST(PolicyFlag, OneKernel) {
  auto parsed = parse_opt_in_flag("--accept-relaxed-accumulation=dot:reduction order is free");
  ASSERT_TRUE(parsed) << parsed.error;
  EXPECT_EQ(*parsed.flag, (OptInFlag{OptIn::RelaxedAccumulation, Scope::kernel("dot"),
                                     "reduction order is free"}));
}

TEST(PolicyFlag, BlankReasonParsesAndTheRegistryRefusesIt) {
  auto parsed = parse_opt_in_flag("--accept-single-rounding=dot:");
  ASSERT_TRUE(parsed) << parsed.error;
  EXPECT_EQ(parsed.flag->reason, "");
  testing::LogCapture log;
  Registry registry(log.logger());
  auto outcome = registry.accept(parsed.flag->kind, parsed.flag->scope, parsed.flag->reason);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error(), Refusal::BlankReason);
}

TEST(PolicyFlag, Malformed) {
  for (const char* bad : {"--accept-single-rounding", "--accept-single-rounding=dot",
                          "--accept-single-rounding=:reason", "--accept-relaxed-accumulation="}) {
    EXPECT_TRUE(is_opt_in_flag(bad)) << bad;
    auto parsed = parse_opt_in_flag(bad);
    EXPECT_FALSE(parsed) << bad;
    EXPECT_FALSE(parsed.error.empty()) << bad;
  }
  EXPECT_NE(parse_opt_in_flag("--accept-single-rounding=:r").error.find("names no kernel"),
            std::string::npos);
}

TEST(PolicyFlag, OtherArguments) {
  for (const char* other : {"--accept-single-roundingx:r", "--accept", "-accept-single-rounding:r",
                            "dot", "", "--accept-single-rounding-now:r"}) {
    EXPECT_FALSE(is_opt_in_flag(other)) << other;
    EXPECT_FALSE(parse_opt_in_flag(other)) << other;
  }
}

TEST(PolicyFlag, RoundTrips) {
  for (const OptInFlag& flag :
       {OptInFlag{OptIn::SingleRounding, Scope::all_kernels(), "a: b"},
        OptInFlag{OptIn::RelaxedAccumulation, Scope::kernel("dot"), "sum: any order"}}) {
    std::string arg = to_flag(flag);
    auto parsed = parse_opt_in_flag(arg);
    ASSERT_TRUE(parsed) << arg << ": " << parsed.error;
    EXPECT_EQ(*parsed.flag, flag);
  }
  EXPECT_EQ(to_flag({OptIn::SingleRounding, Scope::kernel("k"), "r"}),
            "--accept-single-rounding=k:r");
}

} // namespace
} // namespace halfway::policy
