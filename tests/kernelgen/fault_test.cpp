// Proof that the campaign can fail: with each test-only fault of the CPU code generator injected
// (codegen/llvm/fault.hpp), a campaign of at most 2,000 kernels on the CPU device finds an
// unexplained mismatch, the reducer shrinks that kernel to at most 10 statements that still
// mismatch, and the reduced kernel matches again once the fault is removed: the find is the
// fault's, not noise.
#include "halfway/codegen/llvm/fault.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/kernelgen/campaign.hpp"
#include "halfway/kernelgen/reduce.hpp"
#include "halfway/policy/registry.hpp"

#include <gtest/gtest.h>

namespace halfway::kernelgen {
namespace {

using codegen::testing::Fault;

struct FaultGuard {
  explicit FaultGuard(Fault f) { codegen::testing::inject_fault(f); }
  ~FaultGuard() { codegen::testing::inject_fault(Fault::None); }
};

class InjectedFault : public ::testing::TestWithParam<Fault> {};

TEST_P(InjectedFault, CampaignFindsItAndReduceShrinksIt) {
  constexpr uint64_t kSeed = 5;
  std::optional<Finding> find;
  {
    FaultGuard fault(GetParam());
    CampaignOptions o;
    o.seed = kSeed;
    o.count = 2000;
    o.devices = {"cpu"};
    o.stop_after_unexplained = 1;
    const CampaignResult r = run_campaign(o);
    ASSERT_EQ(r.unexplained, 1u) << "no kernel of 2000 found the fault";
    for (const Finding& f : r.findings)
      if (f.check.outcome == Outcome::Unexplained)
        find = f;
    ASSERT_TRUE(find);
    std::cerr << "found by kernel " << find->index << " after " << r.kernels << " kernels\n";
  }
  const Generated g = generate(kSeed, find->index);
  RunSetup setup = setup_of(g);
  // A candidate the reducer makes may loop for ever (a loop whose exit it removed): the timeout
  // ends it as an error, which is not the mismatch looked for.
  setup.timeout = std::chrono::seconds(2);
  policy::Registry registry;
  apply_opt_in(registry, g.kernel.name, setup);
  auto device = rt::make_device("cpu", &registry);
  // The mismatch itself: an unexplained check whose cause is a mismatch, not an error.
  auto outcome = [&](const ir::Kernel& k, uint32_t lanes) {
    RunSetup s = setup;
    s.lanes = lanes;
    const Check c = check(k, *device, "cpu", s, registry);
    return c.outcome == Outcome::Unexplained && c.cause != "mismatch" ? Outcome::Match : c.outcome;
  };
  EXPECT_NE(outcome(g.kernel, setup.lanes), Outcome::Unexplained) << "mismatch without the fault";

  FaultGuard fault(GetParam());
  ASSERT_EQ(outcome(g.kernel, setup.lanes), Outcome::Unexplained);
  ReduceOptions ro;
  ro.max_attempts = 3000;
  ro.expressions = false; // statements are what is counted; the CLI runs the expression pass too
  const Reduced r = reduce(
      g.kernel, setup.lanes,
      [&](const ir::VerifiedKernel& k, uint32_t lanes) {
        return outcome(k.kernel(), lanes) == Outcome::Unexplained;
      },
      ro);
  std::cerr << "reduced from " << r.statements_before << " to " << r.statements << " statements in "
            << r.attempts << " runs:\n"
            << ir::print(r.kernel);
  EXPECT_LE(r.statements, 10u);
  EXPECT_LT(r.statements, r.statements_before);
  EXPECT_EQ(outcome(r.kernel, r.lanes), Outcome::Unexplained);
  codegen::testing::inject_fault(Fault::None);
  const Outcome clean = outcome(r.kernel, r.lanes);
  EXPECT_TRUE(clean == Outcome::Match || clean == Outcome::Inconclusive)
      << "the reduced kernel mismatches without the fault: " << name(clean);
}

std::string fault_name(const ::testing::TestParamInfo<Fault>& info) {
  switch (info.param) {
  case Fault::None:
    return "None";
  case Fault::DropBarrier:
    return "DropBarrier";
  case Fault::NarrowTowardZero:
    return "NarrowTowardZero";
  case Fault::SwapSub:
    return "SwapSub";
  }
  return "Unknown";
}

INSTANTIATE_TEST_SUITE_P(Faults, InjectedFault,
                         ::testing::Values(Fault::DropBarrier, Fault::NarrowTowardZero,
                                           Fault::SwapSub),
                         fault_name);

} // namespace
} // namespace halfway::kernelgen
