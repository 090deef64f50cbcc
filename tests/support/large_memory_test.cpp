// Large allocations (support/large_memory.hpp): zero-filled on both sides of the huge-page
// threshold, writable to the last byte, and usable as a vector's allocator.
#include "halfway/support/large_memory.hpp"

#include <cstdint>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>

namespace halfway::support {
namespace {

TEST(LargeMemory, ArraysStartZeroOnBothSidesOfTheThreshold) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, kHugeAdviceBytes / 4 - 1,
                   kHugeAdviceBytes / 4, kHugeAdviceBytes / 4 * 3 + 7}) {
    LargeArray<uint32_t> a(n);
    ASSERT_EQ(a.size(), n);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i)
      sum += a[i];
    EXPECT_EQ(sum, 0u) << n;
    if (n) {
      a[0] = 7;
      a[n - 1] = 9; // the last element is writable
      EXPECT_EQ(a[0] + a[n - 1], n == 1 ? 18u : 16u);
    }
  }
}

TEST(LargeMemory, MovedArraysOwnTheirMemoryOnce) {
  LargeArray<uint8_t> a(kHugeAdviceBytes);
  a[5] = 3;
  LargeArray<uint8_t> b(std::move(a));
  EXPECT_FALSE(a);
  EXPECT_EQ(b[5], 3);
  a = std::move(b);
  EXPECT_EQ(a[5], 3);
}

TEST(LargeMemory, VectorsGrowAcrossTheThreshold) {
  LargeVector<uint64_t> v;
  for (uint64_t i = 0; i < kHugeAdviceBytes / 8 * 2; ++i)
    v.push_back(i);
  uint64_t sum = 0;
  for (uint64_t x : v)
    sum += x;
  const uint64_t n = v.size();
  EXPECT_EQ(sum, n * (n - 1) / 2);
  v.resize(3);
  v.shrink_to_fit();
  EXPECT_EQ(v.back(), 2u);
}

// Where the kernel runs THP in "madvise" mode, a large array's memory is huge-page backed once
// touched: the advice is actually given (AnonHugePages of this process grows).
TEST(LargeMemory, LargeArraysAreAdvisedAsHugePages) {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(mode, line) || line.find("[madvise]") == std::string::npos)
    GTEST_SKIP() << "transparent huge pages are not in madvise mode here: " << line;
  auto anon_huge_kb = [] {
    std::ifstream smaps("/proc/self/smaps_rollup");
    std::string key;
    uint64_t kb = 0;
    while (smaps >> key) {
      if (key == "AnonHugePages:") {
        smaps >> kb;
        return kb;
      }
      smaps.ignore(1 << 20, '\n');
    }
    return kb;
  };
  const uint64_t before = anon_huge_kb();
  LargeArray<uint8_t> a(size_t{64} << 20);
  for (size_t i = 0; i < a.size(); i += 4096)
    a[i] = 1;
  EXPECT_GT(anon_huge_kb(), before) << "no huge pages after touching 64 MiB of advised memory";
}

} // namespace
} // namespace halfway::support
