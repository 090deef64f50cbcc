// Loops with constant bounds (ir/analysis/loops.hpp): the trip counts both code generators rely on
// to leave a loop's cancel poll out, and the loops that may go without one.

#include "halfway/ir/analysis/loops.hpp"
#include "halfway/text/parse.hpp"

#include <gtest/gtest.h>
#include <string>

namespace halfway::ir {
namespace {

Kernel parse(const std::string& body) {
  std::string text = "kernel k workgroup(64, 1, 1) {\n"
                     "  param o: buffer<u32, write>;\n"
                     "  param n: u32;\n"
                     "  let acc: u32 = 0:u32;\n" +
                     body + "  o[global_id(0)] = acc;\n}\n";
  std::vector<Kernel> ks = text::parse_kernels(text, "loops_test.hk");
  EXPECT_EQ(ks.size(), 1u);
  return ks.at(0);
}

// The kernel's first for loop.
const Stmt& first_for(const Kernel& k) {
  const Stmt* found = nullptr;
  for_each_stmt(k.body, [&](const Stmt& s) {
    if (!found && s.kind == StmtKind::For)
      found = &s;
  });
  EXPECT_NE(found, nullptr);
  return *found;
}

std::optional<uint64_t> trips(const std::string& header) {
  const Kernel k = parse("  for " + header + " {\n    acc = add(acc, 1:u32);\n  }\n");
  return constant_trips(k, first_for(k));
}

TEST(Loops, ConstantTripCounts) {
  EXPECT_EQ(trips("j: u32 = 0:u32 to 16:u32 step 1:u32"), 16u);
  EXPECT_EQ(trips("j: u32 = 3:u32 to 16:u32 step 4:u32"), 4u); // 3, 7, 11, 15
  EXPECT_EQ(trips("j: u32 = 16:u32 to 16:u32 step 1:u32"), 0u);
  EXPECT_EQ(trips("j: u32 = 20:u32 to 16:u32 step 1:u32"), 0u);
  EXPECT_EQ(trips("j: i32 = -8:i32 to 8:i32 step 2:i32"), 8u);
  EXPECT_EQ(trips("j: u8 = 0:u8 to 250:u8 step 5:u8"), 50u);
  // The last increment from below the end would wrap: no count.
  EXPECT_EQ(trips("j: u8 = 0:u8 to 250:u8 step 7:u8"), std::nullopt);
  EXPECT_EQ(trips("j: u32 = 0:u32 to 4294967295:u32 step 2:u32"), std::nullopt);
  EXPECT_EQ(trips("j: i32 = 0:i32 to 8:i32 step -1:i32"), std::nullopt);
  EXPECT_EQ(trips("j: u32 = 0:u32 to n step 1:u32"), std::nullopt);
  EXPECT_EQ(trips("j: u64 = 0:u64 to 16:u64 step 1:u64"), std::nullopt);
}

TEST(Loops, WhichLoopsGoWithoutAPoll) {
  auto bounded = [](const std::string& body) {
    const Kernel k = parse(body);
    return bounded_without_poll(k, first_for(k));
  };
  EXPECT_TRUE(bounded("  for j: u32 = 0:u32 to 4096:u32 step 1:u32 {\n"
                      "    acc = add(acc, j);\n  }\n"));
  EXPECT_FALSE(bounded("  for j: u32 = 0:u32 to 4097:u32 step 1:u32 {\n"
                       "    acc = add(acc, j);\n  }\n"));
  EXPECT_FALSE(bounded("  for j: u32 = 0:u32 to 16:u32 step 1:u32 {\n"
                       "    for t: u32 = 0:u32 to 16:u32 step 1:u32 {\n"
                       "      acc = add(acc, t);\n    }\n  }\n"));
  EXPECT_FALSE(bounded("  for j: u32 = 0:u32 to 16:u32 step 1:u32 {\n"
                       "    j = sub(j, 1:u32);\n  }\n"));
  EXPECT_FALSE(bounded("  for j: u32 = 0:u32 to n step 1:u32 {\n"
                       "    acc = add(acc, j);\n  }\n"));
}

} // namespace
} // namespace halfway::ir
