// The policy's rules, one Registry per test: refusals, first reason kept, scope order, the two
// opt-ins' independence, fused kernels, the budget and its key, logging and the report.

#include "halfway/ir/names.hpp"
#include "halfway/policy/policy.hpp"
#include "log_capture.hpp"

#include <gtest/gtest.h>
#include <map>
#include <tuple>

namespace halfway::policy {
namespace {

using testing::LogCapture;

const std::string kDefault(kDefaultKernelName);

struct PolicyTest : ::testing::Test {
  LogCapture log;
  Registry registry{log.logger()};
};

// --- refusals -------------------------------------------------------------------------------

TEST_F(PolicyTest, BlankReasonsAreRefusedAndRecordNothing) {
  for (const std::string& blank : std::vector<std::string>{
           "", " ", "   ", "\t", "\n", " \t\r\n\v\f ", "\xC2\xA0", "\xE2\x80\x8B",
           "\xE3\x80\x80 \xEF\xBB\xBF", std::string(3, '\0')}) {
    for (OptIn kind : kAllOptIns) {
      for (const Scope& scope : {Scope::all_kernels(), Scope::kernel("k")}) {
        AcceptOutcome outcome = registry.accept(kind, scope, blank);
        ASSERT_FALSE(outcome.ok());
        EXPECT_EQ(outcome.error(), Refusal::BlankReason);
      }
    }
  }
  EXPECT_EQ(registry.single_rounding_reason("k"), std::nullopt);
  EXPECT_EQ(registry.relaxed_accumulation_reason("k"), std::nullopt);
  EXPECT_EQ(registry.budget("k"), Budget{});
  EXPECT_EQ(log.count("info"), 0u);
  EXPECT_EQ(log.count("warning", "refused"), 10u * 2 * 2);
  // A later real reason is the first one kept: the refusals left nothing behind.
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "tolerance checked"));
  EXPECT_EQ(registry.single_rounding_reason("k"), "tolerance checked");
}

TEST_F(PolicyTest, VisibleTextIsNotBlank) {
  EXPECT_FALSE(is_blank_reason("x"));
  EXPECT_FALSE(is_blank_reason("  \t ok \n"));
  EXPECT_FALSE(is_blank_reason("\xC3\xA9"));             // é
  EXPECT_FALSE(is_blank_reason("\xC2\xA0\xE2\x82\xAC")); // NBSP then €
  EXPECT_FALSE(is_blank_reason("\xC0\xA0")); // overlong space: not valid UTF-8, so visible
  EXPECT_FALSE(is_blank_reason("\xE2\x80")); // truncated
  EXPECT_TRUE(is_blank_reason(""));
  EXPECT_TRUE(is_blank_reason("\xE2\x80\xA8\xE2\x80\xA9")); // line and paragraph separators
}

TEST_F(PolicyTest, DefaultKernelNameIsRefusedAndRecordsNothing) {
  for (OptIn kind : kAllOptIns) {
    AcceptOutcome outcome = registry.accept(kind, Scope::kernel(kDefault), "looks harmless");
    ASSERT_FALSE(outcome);
    EXPECT_EQ(outcome.error(), Refusal::DefaultKernelName);
    EXPECT_EQ(registry.reason(kind, kDefault), std::nullopt);
  }
  EXPECT_EQ(registry.budget(kDefault), Budget{});
  EXPECT_EQ(log.count("info"), 0u);
  EXPECT_EQ(log.count("warning", "refused single rounding for kernel '" + kDefault + "'"), 1u);
  EXPECT_EQ(log.count("warning", "refused relaxed accumulation for kernel '" + kDefault + "'"), 1u);
  // Only the exact name is reserved.
  EXPECT_TRUE(registry.accept_single_rounding(Scope::kernel(kDefault + "_2"), "named"));
  EXPECT_EQ(registry.single_rounding_reason(kDefault), std::nullopt);
}

TEST_F(PolicyTest, UnnamedKernelsAreCoveredOnlyByAllKernels) {
  ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "everything is bounded"));
  EXPECT_EQ(registry.single_rounding_reason(kDefault), "everything is bounded");
}

TEST_F(PolicyTest, BlankReasonWinsWhenBothRefusalsApply) {
  AcceptOutcome outcome = registry.accept_single_rounding(Scope::kernel(kDefault), " ");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error(), Refusal::BlankReason);
}

TEST_F(PolicyTest, RefusalMessagesAreSentences) {
  for (Refusal r : {Refusal::BlankReason, Refusal::DefaultKernelName}) {
    std::string message = refusal_message(r);
    ASSERT_FALSE(message.empty());
    EXPECT_TRUE(std::isupper(static_cast<unsigned char>(message.front()))) << message;
    EXPECT_EQ(message.back(), '.') << message;
  }
  EXPECT_NE(refusal_message(Refusal::DefaultKernelName).find(kDefault), std::string::npos);
}

// --- recording and reading -------------------------------------------------------------------

TEST_F(PolicyTest, FirstReasonIsKept) {
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "first"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "second"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "all first"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "all second"));
  EXPECT_EQ(registry.single_rounding_reason("k"), "first");
  EXPECT_EQ(registry.single_rounding_reason("other"), "all first");
  // A refused later call does not disturb it either.
  EXPECT_FALSE(registry.accept_single_rounding(Scope::kernel("k"), ""));
  EXPECT_EQ(registry.single_rounding_reason("k"), "first");
}

TEST_F(PolicyTest, ReasonsAreKeptVerbatim) {
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "  padded: {braces} %s\t"));
  EXPECT_EQ(registry.single_rounding_reason("k"), "  padded: {braces} %s\t");
}

TEST_F(PolicyTest, NothingHoldsByDefault) {
  EXPECT_EQ(registry.single_rounding_reason("k"), std::nullopt);
  EXPECT_EQ(registry.relaxed_accumulation_reason("k"), std::nullopt);
  EXPECT_FALSE(registry.budget("k").holds_any());
  EXPECT_EQ(registry.budget_key("k"), 0u);
}

TEST_F(PolicyTest, KernelScopeComesBeforeAllKernels) {
  ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "all"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "mine"));
  EXPECT_EQ(registry.single_rounding_reason("k"), "mine");
  EXPECT_EQ(registry.single_rounding_reason("j"), "all");
}

TEST_F(PolicyTest, KernelNamesMatchExactly) {
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("dot"), "bounded"));
  EXPECT_EQ(registry.single_rounding_reason("dot"), "bounded");
  for (const char* near : {"Dot", "dot ", " dot", "dot2", "do", ""}) {
    EXPECT_EQ(registry.single_rounding_reason(near), std::nullopt) << '"' << near << '"';
  }
}

TEST_F(PolicyTest, TheTwoOptInsAreIndependent) {
  ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "single"));
  EXPECT_EQ(registry.relaxed_accumulation_reason("k"), std::nullopt);
  ASSERT_TRUE(registry.accept_relaxed_accumulation(Scope::kernel("k"), "relaxed"));
  EXPECT_EQ(registry.relaxed_accumulation_reason("k"), "relaxed");
  EXPECT_EQ(registry.relaxed_accumulation_reason("j"), std::nullopt);
  EXPECT_EQ(registry.single_rounding_reason("k"), "single");
  EXPECT_EQ(registry.budget("k"), (Budget{"single", "relaxed"}));
  EXPECT_EQ(registry.budget("j"), (Budget{"single", std::nullopt}));
}

// --- fused kernels ---------------------------------------------------------------------------

TEST_F(PolicyTest, FusedKernelHoldsWhenEveryPartDoes) {
  ASSERT_TRUE(registry.register_fused("a+b", {"a", "b"}));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("a"), "ra"));
  EXPECT_EQ(registry.single_rounding_reason("a+b"), std::nullopt);
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("b"), "rb"));
  EXPECT_EQ(registry.single_rounding_reason("a+b"), "fused from a, b: a: ra; b: rb");
  EXPECT_EQ(registry.budget("a+b").single_rounding, "fused from a, b: a: ra; b: rb");
  EXPECT_FALSE(registry.budget("a+b").relaxed_accumulation);
}

TEST_F(PolicyTest, FusedKernelDoesNotHoldWhenOnePartIsMissing) {
  ASSERT_TRUE(registry.register_fused("f", {"a", "b", "c"}));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("a"), "ra"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("c"), "rc"));
  ASSERT_TRUE(registry.accept_relaxed_accumulation(Scope::kernel("b"), "relaxed b"));
  EXPECT_EQ(registry.single_rounding_reason("f"), std::nullopt);
  EXPECT_EQ(registry.budget("f"), Budget{});
  EXPECT_EQ(registry.budget_key("f"), 0u);
}

TEST_F(PolicyTest, AllKernelsCoversFusedKernelsThroughTheirParts) {
  ASSERT_TRUE(registry.register_fused("f", {"a", "b"}));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "all"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("b"), "rb"));
  EXPECT_EQ(registry.single_rounding_reason("f"), "fused from a, b: a: all; b: rb");
}

TEST_F(PolicyTest, NestedFusionIsFlattenedToDistinctLeaves) {
  ASSERT_TRUE(registry.register_fused("ab", {"a", "b"}));
  ASSERT_TRUE(registry.register_fused("bc", {"b", "c"}));
  ASSERT_TRUE(registry.register_fused("top", {"ab", "bc", "d"}));
  for (const char* k : {"a", "b", "c"}) {
    ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel(k), std::string("r") + k));
  }
  EXPECT_EQ(registry.single_rounding_reason("ab"), "fused from a, b: a: ra; b: rb");
  EXPECT_EQ(registry.single_rounding_reason("top"), std::nullopt); // d is missing
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("d"), "rd"));
  EXPECT_EQ(registry.single_rounding_reason("top"),
            "fused from a, b, c, d: a: ra; b: rb; c: rc; d: rd");
  EXPECT_EQ(registry.budget_key("top"), 1u);
}

TEST_F(PolicyTest, PartRegisteredAsFusedLaterIsReadThroughItsParts) {
  ASSERT_TRUE(registry.register_fused("top", {"mid", "c"}));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("mid"), "mid's own"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("c"), "rc"));
  EXPECT_EQ(registry.single_rounding_reason("top"), "fused from mid, c: mid: mid's own; c: rc");
  ASSERT_TRUE(registry.register_fused("mid", {"a"}));
  EXPECT_EQ(registry.single_rounding_reason("top"), std::nullopt);
  EXPECT_EQ(log.count("warning", "opt-ins naming kernel 'mid' now cover nothing"), 1u);
}

TEST_F(PolicyTest, ScopeNamingAFusedKernelCoversNothing) {
  ASSERT_TRUE(registry.register_fused("fused_ab", {"a", "b"}));
  // Recorded (and reported), but it covers nothing: the parts decide.
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("fused_ab"), "I want it fast"));
  EXPECT_EQ(registry.single_rounding_reason("fused_ab"), std::nullopt);
  EXPECT_EQ(registry.budget_key("fused_ab"), 0u);
  EXPECT_EQ(log.count("warning", "kernel 'fused_ab' is a fused kernel"), 1u);
  EXPECT_NE(registry.report().find("I want it fast (covers nothing: a fused kernel)"),
            std::string::npos);
  // The same when the scope was accepted before the name was registered.
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("fused_cd"), "early"));
  EXPECT_EQ(registry.single_rounding_reason("fused_cd"), "early");
  ASSERT_TRUE(registry.register_fused("fused_cd", {"c", "d"}));
  EXPECT_EQ(registry.single_rounding_reason("fused_cd"), std::nullopt);
  // Once the parts hold it, the fused kernel holds it with the parts' reasons only.
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("a"), "ra"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("b"), "rb"));
  EXPECT_EQ(registry.single_rounding_reason("fused_ab"), "fused from a, b: a: ra; b: rb");
}

TEST_F(PolicyTest, RegisteringFusedKernelsFailsWithValues) {
  ASSERT_TRUE(registry.register_fused("f", {"a", "b"}));
  EXPECT_TRUE(registry.register_fused("f", {"a", "b"})); // same parts: nothing changes
  auto conflict = registry.register_fused("f", {"a", "c"});
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error(), FuseError::Conflict);
  EXPECT_EQ(registry.fused_parts("f"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(registry.register_fused("g", {}).error(), FuseError::NoParts);
  EXPECT_EQ(registry.register_fused("", {"a"}).error(), FuseError::ReservedName);
  EXPECT_EQ(registry.register_fused(kDefault, {"a"}).error(), FuseError::ReservedName);
  EXPECT_EQ(registry.register_fused("self", {"a", "self"}).error(), FuseError::Cycle);
  ASSERT_TRUE(registry.register_fused("x", {"y"}));
  EXPECT_EQ(registry.register_fused("y", {"x"}).error(), FuseError::Cycle);
  EXPECT_EQ(registry.register_fused("z", {"w"}).ok(), true);
  EXPECT_EQ(registry.register_fused("w", {"q", "f", "z"}).error(), FuseError::Cycle);
  EXPECT_EQ(registry.fused_parts("g"), std::nullopt);
  EXPECT_EQ(registry.fused_parts("y"), std::nullopt);
  EXPECT_EQ(log.count("warning", "cannot register fused kernel"), 7u);
  for (FuseError e :
       {FuseError::ReservedName, FuseError::NoParts, FuseError::Conflict, FuseError::Cycle}) {
    EXPECT_EQ(fuse_error_message(e).back(), '.');
  }
}

TEST_F(PolicyTest, DefaultNamedKernelMayBeAPart) {
  ASSERT_TRUE(registry.register_fused("f", {kDefault, "b"}));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("b"), "rb"));
  EXPECT_EQ(registry.single_rounding_reason("f"), std::nullopt);
  ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "all"));
  EXPECT_EQ(registry.single_rounding_reason("f"),
            "fused from " + kDefault + ", b: " + kDefault + ": all; b: rb");
}

// --- budget ----------------------------------------------------------------------------------

TEST_F(PolicyTest, BudgetKeyChangesWhenAnOptInStartsHolding) {
  uint64_t before = registry.budget("k").key();
  EXPECT_EQ(before, 0u);
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "bounded"));
  uint64_t single = registry.budget("k").key();
  EXPECT_NE(single, before);
  EXPECT_EQ(single, 1u);
  EXPECT_EQ(registry.budget_key("k"), single);
  ASSERT_TRUE(registry.accept_relaxed_accumulation(Scope::all_kernels(), "reductions"));
  uint64_t both = registry.budget("k").key();
  EXPECT_EQ(both, 3u);
  EXPECT_EQ(registry.budget_key("k"), both);
  EXPECT_EQ(registry.budget("other").key(), 2u);
  EXPECT_EQ(registry.budget_key("other"), 2u);
}

TEST_F(PolicyTest, BudgetKeyIgnoresReasonsButEqualityDoesNot) {
  Budget a{"one reason", std::nullopt}, b{"another", std::nullopt};
  EXPECT_EQ(a.key(), b.key());
  EXPECT_NE(a, b);
  EXPECT_TRUE(a.holds(OptIn::SingleRounding));
  EXPECT_FALSE(a.holds(OptIn::RelaxedAccumulation));
  EXPECT_EQ(to_string(a), "single rounding: held (one reason)\nrelaxed accumulation: not held");
}

// A stand-in for the launch memo: compiled code keyed on (structural hash, device, budget key).
TEST_F(PolicyTest, LaunchMemoEntryIsRegeneratedAfterAnOptIn) {
  std::map<std::tuple<uint64_t, std::string, uint64_t>, std::string> memo;
  int generated = 0;
  auto launch = [&](const std::string& kernel) {
    auto key = std::make_tuple(uint64_t{0x1234}, std::string("cpu"), registry.budget_key(kernel));
    auto [it, fresh] = memo.try_emplace(key);
    if (fresh) {
      ++generated;
      it->second = registry.budget(kernel).single_rounding ? "no barriers" : "barriers";
    }
    return it->second;
  };
  EXPECT_EQ(launch("k"), "barriers");
  EXPECT_EQ(launch("k"), "barriers");
  EXPECT_EQ(generated, 1);
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "bounded"));
  EXPECT_EQ(launch("k"), "no barriers");
  EXPECT_EQ(generated, 2);
  EXPECT_EQ(launch("k"), "no barriers");
  EXPECT_EQ(generated, 2);
}

// --- logging and report ----------------------------------------------------------------------

TEST_F(PolicyTest, EachAcceptedOptInIsLoggedOnce) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "r" + std::to_string(i)));
    ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "all"));
    ASSERT_TRUE(registry.accept_relaxed_accumulation(Scope::kernel("k"), "acc"));
  }
  EXPECT_EQ(log.count("info"), 3u);
  EXPECT_EQ(log.count("info", "accepted single rounding for kernel 'k': r0"), 1u);
  EXPECT_EQ(log.count("info", "accepted single rounding for all kernels: all"), 1u);
  EXPECT_EQ(log.count("info", "accepted relaxed accumulation for kernel 'k': acc"), 1u);
  EXPECT_EQ(log.count("warning"), 0u);
}

TEST_F(PolicyTest, ReportListsOptInsAndFusedKernels) {
  EXPECT_EQ(registry.report(),
            "precision policy\n  opt-ins in force: none\n  fused kernels: none\n");
  ASSERT_TRUE(registry.accept_single_rounding(Scope::kernel("k"), "mine"));
  ASSERT_TRUE(registry.accept_single_rounding(Scope::all_kernels(), "all"));
  ASSERT_TRUE(registry.accept_relaxed_accumulation(Scope::kernel("dot"), "reduction"));
  ASSERT_FALSE(registry.accept_relaxed_accumulation(Scope::kernel("refused"), ""));
  ASSERT_TRUE(registry.register_fused("f", {"a", "b"}));
  EXPECT_EQ(registry.report(), "precision policy\n"
                               "  opt-ins in force:\n"
                               "    single rounding, all kernels: all\n"
                               "    single rounding, kernel 'k': mine\n"
                               "    relaxed accumulation, kernel 'dot': reduction\n"
                               "  fused kernels:\n"
                               "    'f' from a, b\n");
}

TEST(PolicyScope, ToStringAndOrder) {
  EXPECT_EQ(to_string(Scope::all_kernels()), "all kernels");
  EXPECT_EQ(to_string(Scope::kernel("dot")), "kernel 'dot'");
  EXPECT_LT(Scope::all_kernels(), Scope::kernel(""));
  EXPECT_LT(Scope::kernel("a"), Scope::kernel("b"));
  EXPECT_EQ(Scope::kernel("a"), Scope::kernel("a"));
  EXPECT_NE(Scope::kernel(""), Scope::all_kernels());
  EXPECT_EQ(opt_in_name(OptIn::SingleRounding), "single rounding");
  EXPECT_EQ(opt_in_name(OptIn::RelaxedAccumulation), "relaxed accumulation");
}

// --- the process-wide registry ---------------------------------------------------------------

TEST(PolicyGlobal, FreeFunctionsForwardToTheGlobalRegistry) {
  // Names no other test uses: the global registry lives as long as the process.
  EXPECT_EQ(&global_registry(), &global_registry());
  EXPECT_EQ(single_rounding_reason("policy_test_never_accepted"), std::nullopt);
  ASSERT_TRUE(accept_single_rounding(Scope::kernel("policy_test_global"), "global reason"));
  EXPECT_EQ(single_rounding_reason("policy_test_global"), "global reason");
  EXPECT_EQ(global_registry().single_rounding_reason("policy_test_global"), "global reason");
  EXPECT_EQ(relaxed_accumulation_reason("policy_test_global"), std::nullopt);
  EXPECT_EQ(accept_relaxed_accumulation(Scope::kernel(kDefault), "x").error(),
            Refusal::DefaultKernelName);
  ASSERT_TRUE(accept(OptIn::RelaxedAccumulation, Scope::kernel("policy_test_global_2"), "acc"));
  EXPECT_EQ(reason(OptIn::RelaxedAccumulation, "policy_test_global_2"), "acc");
  ASSERT_TRUE(register_fused("policy_test_global_f", {"policy_test_global", "policy_test_g3"}));
  EXPECT_EQ(budget_key("policy_test_global_f"), 0u);
  EXPECT_EQ(budget("policy_test_global").key(), 1u);
  EXPECT_NE(report().find("kernel 'policy_test_global': global reason"), std::string::npos);
}

} // namespace
} // namespace halfway::policy
