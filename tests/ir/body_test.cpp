// ir::Body, the block of statements: the std::vector operations the passes use, on a container
// that is one pointer and allocates nothing while empty.
#include "halfway/ir/kernel.hpp"

#include <gtest/gtest.h>
#include <iterator>
#include <vector>

using namespace halfway;
using ir::Body;
using ir::Stmt;
using ir::StmtKind;

namespace {

Stmt stmt(uint32_t line) {
  Stmt s;
  s.kind = StmtKind::Barrier;
  s.line = line;
  return s;
}

std::vector<uint32_t> lines(const Body& b) {
  std::vector<uint32_t> out;
  for (const Stmt& s : b)
    out.push_back(s.line);
  return out;
}

TEST(Body, IsOnePointerAndEmptyWithoutAllocating) {
  static_assert(sizeof(Body) == sizeof(void*));
  static_assert(sizeof(Stmt) == 48);
  Body b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.begin(), b.end());
  EXPECT_EQ(b.begin(), nullptr);
  size_t n = 0;
  for (const Stmt& s : b)
    n += s.line;
  EXPECT_EQ(n, 0u);
}

TEST(Body, PushBackGrowsAndKeepsOrder) {
  Body b;
  for (uint32_t i = 1; i <= 100; ++i)
    b.push_back(stmt(i));
  ASSERT_EQ(b.size(), 100u);
  EXPECT_FALSE(b.empty());
  EXPECT_EQ(b.front().line, 1u);
  EXPECT_EQ(b.back().line, 100u);
  EXPECT_EQ(b[41].line, 42u);
  EXPECT_EQ(b.end() - b.begin(), 100);
  // A statement of the block itself, pushed while the block grows.
  b.push_back(b[0]);
  EXPECT_EQ(b.back().line, 1u);
  EXPECT_EQ(b.size(), 101u);
}

TEST(Body, NestedBlocksAreCopiedDeeply) {
  Body outer;
  Stmt s = stmt(1);
  s.kind = StmtKind::If;
  s.body.push_back(stmt(2));
  s.else_body = {stmt(3), stmt(4)};
  outer.push_back(s);
  Body copy = outer;
  copy[0].body[0].line = 20;
  copy[0].else_body.pop_back();
  EXPECT_EQ(outer[0].body[0].line, 2u);
  EXPECT_EQ(lines(outer[0].else_body), (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(copy[0].body[0].line, 20u);
  EXPECT_EQ(lines(copy[0].else_body), (std::vector<uint32_t>{3}));
  copy = outer; // assignment replaces the changed copy
  EXPECT_EQ(copy[0].body[0].line, 2u);
  Body moved = std::move(copy);
  EXPECT_TRUE(copy.empty());
  EXPECT_EQ(lines(moved[0].else_body), (std::vector<uint32_t>{3, 4}));
}

TEST(Body, InsertAndErase) {
  Body b = {stmt(1), stmt(2), stmt(3)};
  Stmt* at = b.insert(b.begin() + 1, stmt(9));
  EXPECT_EQ(at->line, 9u);
  EXPECT_EQ(lines(b), (std::vector<uint32_t>{1, 9, 2, 3}));
  b.insert(b.end(), stmt(5));
  b.insert(b.begin(), stmt(0));
  EXPECT_EQ(lines(b), (std::vector<uint32_t>{0, 1, 9, 2, 3, 5}));
  Body more = {stmt(7), stmt(8)};
  b.insert(b.begin() + 2, std::make_move_iterator(more.begin()),
           std::make_move_iterator(more.end()));
  EXPECT_EQ(lines(b), (std::vector<uint32_t>{0, 1, 7, 8, 9, 2, 3, 5}));
  Stmt* next = b.erase(b.begin() + 4);
  EXPECT_EQ(next->line, 2u);
  b.erase(b.begin() + 1, b.begin() + 3);
  EXPECT_EQ(lines(b), (std::vector<uint32_t>{0, 8, 2, 3, 5}));
  b.erase(b.begin(), b.begin()); // nothing
  EXPECT_EQ(b.size(), 5u);
  b.erase(b.begin(), b.end());
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.begin(), nullptr); // an emptied block holds no allocation
  b.insert(b.begin(), stmt(4));
  EXPECT_EQ(lines(b), (std::vector<uint32_t>{4}));
  b.pop_back();
  EXPECT_TRUE(b.empty());
}

TEST(Body, ReserveKeepsStatementsAndClearEmpties) {
  Body b;
  b.reserve(0);
  EXPECT_EQ(b.begin(), nullptr);
  b.reserve(3);
  EXPECT_TRUE(b.empty());
  b.push_back(stmt(1));
  const Stmt* first = b.begin();
  b.push_back(stmt(2));
  b.push_back(stmt(3));
  EXPECT_EQ(b.begin(), first); // within the reserved room: no reallocation
  b.reserve(10);
  EXPECT_EQ(lines(b), (std::vector<uint32_t>{1, 2, 3}));
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.begin(), nullptr);
}

TEST(Body, ForEachStmtVisitsNestedBlocksInOrder) {
  ir::Kernel k;
  Stmt loop = stmt(1);
  loop.kind = StmtKind::While;
  loop.body = {stmt(2), stmt(3)};
  k.body = {loop, stmt(4)};
  std::vector<uint32_t> seen;
  ir::for_each_stmt(k.body, [&](const Stmt& s) { seen.push_back(s.line); });
  EXPECT_EQ(seen, (std::vector<uint32_t>{1, 2, 3, 4}));
}

} // namespace
