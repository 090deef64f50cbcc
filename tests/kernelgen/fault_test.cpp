// Proof that the campaign can fail: with each test-only fault of a code generator injected (the
// CPU device's codegen/llvm/fault.hpp, the Vulkan device's codegen/spirv/fault.hpp), a campaign of
// at most 2,000 kernels on that device finds an unexplained mismatch, the reducer shrinks that
// kernel to at most 10 statements that still mismatch, and the reduced kernel matches again once
// the fault is removed: the find is the fault's, not noise.
#include "halfway/ir/printer.hpp"
#include "halfway/kernelgen/campaign.hpp"
#include "halfway/kernelgen/reduce.hpp"
#include "halfway/policy/registry.hpp"

#ifdef HALFWAY_FAULT_LLVM
#include "halfway/codegen/llvm/fault.hpp"
#endif
#ifdef HALFWAY_FAULT_SPIRV
#include "halfway/codegen/spirv/codegen.hpp"
#include "halfway/codegen/spirv/fault.hpp"
#include "halfway/text/kernel_file.hpp"
#endif

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <gtest/gtest.h>

namespace halfway::kernelgen {
namespace {

// One fault of one backend: the device it shows on, how to inject it and how to remove it.
struct InjectedFault {
  std::string name, device;
  std::function<void(bool)> set; // true: inject, false: back to no fault
  uint64_t seed = 5;
};

void PrintTo(const InjectedFault& f, std::ostream* os) {
  *os << f.name;
}

struct FaultGuard {
  explicit FaultGuard(const InjectedFault& f) : f_(f) { f_.set(true); }
  ~FaultGuard() { f_.set(false); }
  const InjectedFault& f_;
};

class Faults : public ::testing::TestWithParam<InjectedFault> {};

TEST_P(Faults, CampaignFindsItAndReduceShrinksIt) {
  const InjectedFault& fault = GetParam();
  // lavapipe's shader cache on disk must not hand a module compiled under one fault setting to
  // a device made under another.
  ::setenv("MESA_SHADER_CACHE_DISABLE", "true", 1);
  const auto names = rt::device_names();
  if (std::find(names.begin(), names.end(), fault.device) == names.end())
    GTEST_SKIP() << "no " << fault.device << " device in this build";
  std::optional<Finding> find;
  {
    FaultGuard guard(fault);
    CampaignOptions o;
    o.seed = fault.seed;
    o.count = 2000;
    o.devices = {fault.device};
    o.stop_after_unexplained = 1;
    o.timeout = std::chrono::seconds(20);
    const CampaignResult r = run_campaign(o);
    ASSERT_EQ(r.unexplained, 1u) << "no kernel of 2000 found the fault";
    for (const Finding& f : r.findings)
      if (f.check.outcome == Outcome::Unexplained)
        find = f;
    ASSERT_TRUE(find);
    std::cerr << "found by kernel " << find->index << " after " << r.kernels << " kernels\n";
  }
  const Generated g = generate(fault.seed, find->index);
  RunSetup setup = setup_of(g);
  // A candidate the reducer makes may loop for ever (a loop whose exit it removed): the timeout
  // ends it as an error, which is not the mismatch looked for. It also covers lavapipe compiling
  // the kernel on a loaded machine, hence 10 s (as the CLI's reducer).
  setup.timeout = std::chrono::seconds(10);
  policy::Registry registry;
  apply_opt_in(registry, g.kernel.name, setup);
  // The mismatch itself: an unexplained check whose cause is a mismatch, not an error. A device
  // is made per fault setting: the Vulkan device's memo does not key on the fault.
  auto outcome = [&](rt::Device& device, const ir::Kernel& k, const Lanes& lanes) {
    RunSetup s = setup;
    s.lanes = lanes[0];
    s.lanes_y = lanes[1];
    s.lanes_z = lanes[2];
    const Check c = check(k, device, fault.device, s, registry);
    return c.outcome == Outcome::Unexplained && c.cause != "mismatch" ? Outcome::Match : c.outcome;
  };
  {
    auto clean = rt::make_device(fault.device, &registry);
    EXPECT_NE(outcome(*clean, g.kernel, {setup.lanes, setup.lanes_y, setup.lanes_z}),
              Outcome::Unexplained)
        << "mismatch without the fault";
  }
  Reduced r;
  {
    FaultGuard guard(fault);
    auto faulty = rt::make_device(fault.device, &registry);
    {
      const Check c = check(g.kernel, *faulty, fault.device, setup, registry);
      ASSERT_EQ(c.outcome, Outcome::Unexplained) << name(c.outcome) << " " << c.cause << "\n"
                                                 << c.report;
    }
    ReduceOptions ro;
    ro.max_attempts = 3000;
    ro.expressions = false; // statements are what is counted; the CLI runs the expression pass too
    r = reduce(
        g.kernel, {setup.lanes, setup.lanes_y, setup.lanes_z},
        [&](const ir::VerifiedKernel& k, const Lanes& lanes) {
          return outcome(*faulty, k.kernel(), lanes) == Outcome::Unexplained;
        },
        ro);
    std::cerr << "reduced from " << r.statements_before << " to " << r.statements
              << " statements in " << r.attempts << " runs:\n"
              << ir::print(r.kernel);
    EXPECT_LE(r.statements, 10u);
    EXPECT_LT(r.statements, r.statements_before);
    EXPECT_EQ(outcome(*faulty, r.kernel, r.lanes), Outcome::Unexplained);
  }
  auto clean = rt::make_device(fault.device, &registry);
  const Outcome after = outcome(*clean, r.kernel, r.lanes);
  EXPECT_TRUE(after == Outcome::Match || after == Outcome::Inconclusive)
      << "the reduced kernel mismatches without the fault: " << name(after);
}

#ifdef HALFWAY_FAULT_SPIRV
// A fault no lavapipe campaign can find, checked in the module: the narrowing site's producers
// lose NoContraction (and keep it without the fault).
TEST(SpirvFault, DropNoContractionLeavesTheSiteUndecorated) {
  const text::KernelFile f(R"(kernel site workgroup(1, 1, 1) {
    param a: buffer<f32, read>;
    param y: buffer<f16, write>;
    y[global_id(0)] = narrow<f16>(add(mul(a[global_id(0)], a[global_id(0)]), 1.0:f32));
  })",
                           "site.hk");
  const ir::VerifiedKernel k = f.verify(size_t{0});
  auto count = [&] {
    return codegen::spirv::generate(k, policy::Budget{}, codegen::spirv::Target::lavapipe(), {})
        .no_contraction;
  };
  EXPECT_EQ(count(), 2u);
  codegen::spirv::testing::inject_fault(codegen::spirv::testing::Fault::DropNoContraction);
  const uint32_t faulty = count();
  codegen::spirv::testing::inject_fault(codegen::spirv::testing::Fault::None);
  EXPECT_EQ(faulty, 0u);
}
#endif

std::vector<InjectedFault> faults() {
  std::vector<InjectedFault> out;
#ifdef HALFWAY_FAULT_LLVM
  {
    namespace t = codegen::llvm::testing;
    for (auto [n, f] : {std::pair{"DropBarrier", t::Fault::DropBarrier},
                        std::pair{"NarrowTowardZero", t::Fault::NarrowTowardZero},
                        std::pair{"SwapSub", t::Fault::SwapSub}})
      out.push_back({std::string("Cpu") + n, "cpu",
                     [f](bool on) { t::inject_fault(on ? f : t::Fault::None); }});
  }
#endif
#ifdef HALFWAY_FAULT_SPIRV
  {
    namespace t = codegen::spirv::testing;
    // DropNoContraction is left out: lavapipe never fuses, so no campaign finds it there
    // (SpirvFault.DropNoContractionLeavesTheSiteUndecorated checks the module instead).
    for (auto [n, f] : {std::pair{"LogicalShiftRight", t::Fault::LogicalShiftRight},
                        std::pair{"NarrowTowardZero", t::Fault::NarrowTowardZero},
                        std::pair{"SwapSub", t::Fault::SwapSub}})
      out.push_back({std::string("Vulkan") + n, "vulkan",
                     [f](bool on) { t::inject_fault(on ? f : t::Fault::None); }});
  }
#endif
  return out;
}

INSTANTIATE_TEST_SUITE_P(Injected, Faults, ::testing::ValuesIn(faults()),
                         [](const ::testing::TestParamInfo<InjectedFault>& info) {
                           return info.param.name;
                         });

} // namespace
} // namespace halfway::kernelgen
