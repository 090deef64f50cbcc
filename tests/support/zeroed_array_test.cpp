// support::ZeroedArray: zeroed where first read or written, writable everywhere, movable, and a
// size whose bytes overflow is refused rather than wrapped.
#include "halfway/support/zeroed_array.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <utility>

using halfway::support::ZeroedArray;

TEST(ZeroedArray, StartsZeroedAndHoldsWhatIsWritten) {
  // 24 MiB: several huge pages where the kernel backs the advice, thousands of small ones if not.
  constexpr size_t kCount = size_t{6} << 20;
  ZeroedArray<uint32_t> a(kCount);
  ASSERT_NE(a.get(), nullptr);
  for (size_t i = 0; i < kCount; i += 4093)
    ASSERT_EQ(a[i], 0u) << i;
  EXPECT_EQ(a[kCount - 1], 0u);
  for (size_t i = 0; i < kCount; i += 7)
    a[i] = static_cast<uint32_t>(i * 2654435761u);
  for (size_t i = 0; i < kCount; ++i)
    ASSERT_EQ(a[i], i % 7 == 0 ? static_cast<uint32_t>(i * 2654435761u) : 0u) << i;

  ZeroedArray<uint32_t> b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b[7], static_cast<uint32_t>(7 * 2654435761u));
  ZeroedArray<uint32_t> c(16);
  c = std::move(b);
  EXPECT_EQ(c[14], static_cast<uint32_t>(14 * 2654435761u));
}

TEST(ZeroedArray, EmptyAndOverflowingSizes) {
  ZeroedArray<double> empty(0);
  EXPECT_EQ(empty.get(), nullptr);
  EXPECT_THROW(ZeroedArray<uint64_t>(std::numeric_limits<size_t>::max() / 4), std::bad_alloc);
}
