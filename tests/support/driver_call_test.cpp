#include "halfway/support/driver_call.hpp"

#include <gtest/gtest.h>
#include <string>
#include <thread>

using halfway::support::driver_call_in_flight;
using halfway::support::DriverCall;

TEST(DriverCall, NamesTheCallInFlightAndNothingAfterIt) {
  EXPECT_EQ(driver_call_in_flight(), nullptr);
  {
    const DriverCall call("linear<f16>", "Vulkan device llvmpipe", "compiling its pipeline");
    const auto* r = driver_call_in_flight();
    ASSERT_NE(r, nullptr);
    EXPECT_STREQ(r->kernel, "linear<f16>");
    EXPECT_STREQ(r->device, "Vulkan device llvmpipe");
    EXPECT_STREQ(r->doing, "compiling its pipeline");
    {
      const DriverCall inner("linear<f16>", "Vulkan device llvmpipe", "running its dispatch");
      EXPECT_STREQ(driver_call_in_flight()->doing, "running its dispatch");
    }
    // The enclosing call is this thread's again.
    EXPECT_STREQ(driver_call_in_flight()->doing, "compiling its pipeline");
  }
  EXPECT_EQ(driver_call_in_flight(), nullptr);
}

TEST(DriverCall, LongNamesAreCutAndTerminated) {
  const std::string long_name(1000, 'k');
  const DriverCall call(long_name, std::string(500, 'd'), std::string(200, 'x'));
  const auto* r = driver_call_in_flight();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(std::string(r->kernel), std::string(sizeof r->kernel - 1, 'k'));
  EXPECT_EQ(std::string(r->device), std::string(sizeof r->device - 1, 'd'));
  EXPECT_EQ(std::string(r->doing), std::string(sizeof r->doing - 1, 'x'));
}

// A dispatch runs on the driver's threads: a crash there finds the latest call of any thread.
TEST(DriverCall, ThreadsWithoutACallSeeTheLatestOfAnother) {
  const DriverCall call("k", "dev", "running its dispatch");
  std::string seen;
  std::thread([&] {
    const auto* r = driver_call_in_flight();
    seen = r ? r->kernel : "none";
  }).join();
  EXPECT_EQ(seen, "k");
}

TEST(DriverCall, AnEndedCallOfAnotherThreadIsNotReported) {
  std::thread([] { const DriverCall call("gone", "dev", "compiling its pipeline"); }).join();
  EXPECT_EQ(driver_call_in_flight(), nullptr);
}
