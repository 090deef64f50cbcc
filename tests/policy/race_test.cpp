// 64 threads racing accepts, registrations and reads on one Registry. Built twice: into
// policy_test, and with the policy sources under ThreadSanitizer into policy_tsan_test.
//
// Worker threads only record what they saw; every check runs after they are joined, so the
// uninstrumented GoogleTest is never entered concurrently.

#include "halfway/policy/registry.hpp"
#include "log_capture.hpp"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <latch>
#include <map>
#include <random>
#include <set>
#include <thread>

namespace halfway::policy {
namespace {

constexpr int kThreads = 64;
constexpr int kRounds = 4;
constexpr int kShared = 4; // kernels s0..s3, raced by every thread

using Seen = std::optional<std::string>;

std::string shared_kernel(int j) {
  return "s" + std::to_string(j);
}
std::string offer(int thread, const std::string& scope) {
  return "thread " + std::to_string(thread) + " for " + scope;
}

// What one thread saw, per reader, in order.
struct Observations {
  std::map<std::string, std::vector<Seen>> seen;
  std::vector<uint64_t> fused_keys;
  std::vector<std::string> failures; // unexpected outcomes, checked after the join
};

void work(Registry& registry, int t, std::latch& start, Observations& obs) {
  std::mt19937 rng(static_cast<unsigned>(t) * 7919u + 1);
  // The writes this thread makes, in a thread-specific order.
  std::vector<std::function<void()>> writes;
  for (int j = 0; j < kShared; ++j) {
    if (j == 2)
      continue; // s2 only gets blank reasons, below
    writes.push_back([&, j] {
      if (!registry.accept_single_rounding(Scope::kernel(shared_kernel(j)),
                                           offer(t, shared_kernel(j)))) {
        obs.failures.push_back("shared accept refused");
      }
    });
  }
  writes.push_back([&] {
    if (!registry.accept_relaxed_accumulation(Scope::all_kernels(), offer(t, "all")))
      obs.failures.push_back("all-kernels accept refused");
  });
  writes.push_back([&] {
    if (!registry.accept_relaxed_accumulation(Scope::kernel("s0"), offer(t, "relaxed s0")))
      obs.failures.push_back("relaxed s0 accept refused");
  });
  writes.push_back([&] {
    std::string solo = "solo" + std::to_string(t);
    if (!registry.accept_single_rounding(Scope::kernel(solo), offer(t, solo)))
      obs.failures.push_back("solo accept refused");
    // Nobody else writes this scope, so the thread reads its own reason straight back.
    if (registry.single_rounding_reason(solo) != offer(t, solo))
      obs.failures.push_back("solo reason not read back");
  });
  writes.push_back([&] {
    if (registry.accept_single_rounding(Scope::kernel("s2"), t % 2 ? " \t" : ""))
      obs.failures.push_back("blank reason accepted");
  });
  writes.push_back([&] {
    if (!registry.register_fused("fused", {"s0", "s1"}))
      obs.failures.push_back("same fused registration refused");
  });
  std::shuffle(writes.begin(), writes.end(), rng);

  auto read_all = [&] {
    for (int j = 0; j < kShared; ++j) {
      obs.seen[shared_kernel(j)].push_back(registry.single_rounding_reason(shared_kernel(j)));
    }
    obs.seen["relaxed plain"].push_back(registry.relaxed_accumulation_reason("plain"));
    obs.seen["relaxed s0"].push_back(registry.budget("s0").relaxed_accumulation);
    obs.seen["fused"].push_back(registry.single_rounding_reason("fused"));
    obs.fused_keys.push_back(registry.budget_key("fused"));
  };

  start.arrive_and_wait();
  for (auto& write : writes) {
    read_all();
    write();
  }
  read_all();
}

// Every value is none or `final`, and once a reader saw `final` it never sees none again.
void expect_none_then(const std::vector<Seen>& seen, const std::string& final,
                      const std::string& what) {
  bool held = false;
  for (const Seen& s : seen) {
    if (s) {
      ASSERT_EQ(*s, final) << what;
      held = true;
    } else {
      ASSERT_FALSE(held) << what << ": an opt-in stopped holding";
    }
  }
}

// policy_tsan_test names the suite differently, so that ctest sees two distinct tests.
#ifndef HALFWAY_RACE_SUITE
#define HALFWAY_RACE_SUITE PolicyRace
#endif

TEST(HALFWAY_RACE_SUITE, SixtyFourThreadsAcceptAndRead) {
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    testing::LogCapture log;
    Registry registry(log.logger());
    std::latch start(kThreads);
    std::vector<Observations> obs(kThreads);
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] { work(registry, t, start, obs[t]); });
      }
    }

    for (int t = 0; t < kThreads; ++t) {
      EXPECT_EQ(obs[t].failures, std::vector<std::string>{}) << "thread " << t;
    }

    // Shared scopes: exactly one of the offered reasons, and readers saw none or that one.
    std::map<std::string, std::string> final;
    for (int j = 0; j < kShared; ++j) {
      std::string k = shared_kernel(j);
      if (j == 2) {
        // s2 was only ever offered blank reasons: nothing recorded.
        EXPECT_EQ(registry.single_rounding_reason(k), std::nullopt);
        for (const auto& o : obs)
          expect_none_then(o.seen.at(k), "", k);
        continue;
      }
      auto got = registry.single_rounding_reason(k);
      ASSERT_TRUE(got) << k;
      std::set<std::string> offered;
      for (int t = 0; t < kThreads; ++t)
        offered.insert(offer(t, k));
      EXPECT_TRUE(offered.contains(*got)) << *got;
      final[k] = *got;
      for (const auto& o : obs)
        expect_none_then(o.seen.at(k), *got, k);
    }

    // All kernels, read through a kernel without a scope of its own.
    auto all = registry.relaxed_accumulation_reason("plain");
    ASSERT_TRUE(all);
    EXPECT_EQ(all->rfind("thread ", 0), 0u);
    EXPECT_TRUE(all->ends_with(" for all")) << *all;
    for (const auto& o : obs)
      expect_none_then(o.seen.at("relaxed plain"), *all, "plain");

    // s0: none, then possibly the all-kernels reason, then its own; never backwards.
    auto own = registry.relaxed_accumulation_reason("s0");
    ASSERT_TRUE(own);
    EXPECT_TRUE(own->ends_with(" for relaxed s0")) << *own;
    for (const auto& o : obs) {
      int stage = 0;
      for (const Seen& s : o.seen.at("relaxed s0")) {
        int now = !s ? 0 : *s == *all ? 1 : *s == *own ? 2 : -1;
        ASSERT_NE(now, -1) << *s;
        ASSERT_GE(now, stage);
        stage = now;
      }
    }

    // Different scopes: each thread's own reason.
    for (int t = 0; t < kThreads; ++t) {
      std::string solo = "solo" + std::to_string(t);
      EXPECT_EQ(registry.single_rounding_reason(solo), offer(t, solo));
    }

    // The fused kernel: none until both parts hold, then the meet of their final reasons.
    std::string meet = "fused from s0, s1: s0: " + final["s0"] + "; s1: " + final["s1"];
    EXPECT_EQ(registry.single_rounding_reason("fused"), meet);
    for (const auto& o : obs) {
      expect_none_then(o.seen.at("fused"), meet, "fused");
      EXPECT_TRUE(std::is_sorted(o.fused_keys.begin(), o.fused_keys.end()));
    }

    // Logged once per recorded scope: s0, s1, s3, relaxed all, relaxed s0, and 64 solo scopes.
    EXPECT_EQ(log.count("info"), 3u + 2u + kThreads);
    EXPECT_EQ(log.count("warning", "refused single rounding for kernel 's2'"), size_t{kThreads});
    EXPECT_EQ(log.count("warning"), size_t{kThreads});
  }
}

} // namespace
} // namespace halfway::policy
