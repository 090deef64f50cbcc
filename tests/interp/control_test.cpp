// Divergent control flow against the same program written in C++ for each lane: if/else, for
// with break and continue, while, nested loops, return; builtins of 3-D grids; atomics.
#include "helpers.hpp"

using namespace halfway;
using namespace halfway::interp;
using namespace halfway::interp::test;
using ir::ScalarType;

namespace {

uint32_t reference_lane(uint32_t g, bool& stored) {
  uint32_t acc = 0;
  for (uint32_t i = 0; i < 10; ++i) {
    if (i == g % 7)
      continue;
    if (i > g % 9 + 2)
      break;
    acc = acc + i * 3;
    for (uint32_t j = 0; j < 4; ++j) {
      if (j == g % 3)
        break;
      acc = acc + j;
    }
  }
  uint32_t k = 0;
  while (k < g % 5) {
    k = k + 1;
    if (k == 3)
      break;
    acc = acc + 100;
  }
  if (g % 11 == 0) {
    stored = false;
    return acc + 7;
  }
  if (g % 2 == 0)
    acc = acc * 2;
  else
    acc = acc + 1;
  stored = true;
  return acc;
}

TEST(Control, DivergentLoopsBreakContinueReturn) {
  auto k = kernel("divergent", {64}, {"out", "flag"}, [](Out<uint32_t> out, Out<uint32_t> flag) {
    Var g(global_id(0), "g");
    Var acc(0u, "acc");
    For(Value<uint32_t>(0u), 10u, [&](Value<uint32_t> i) {
      If(i == g % 7u, [&] { Continue(); });
      If(i > g % 9u + 2u, [&] { Break(); });
      acc = acc + i * 3u;
      For(Value<uint32_t>(0u), 4u, [&](Value<uint32_t> j) {
        If(j == g % 3u, [&] { Break(); });
        acc = acc + j;
      });
    });
    Var kk(0u, "kk");
    While([&] { return kk < g % 5u; },
          [&] {
            kk = kk + 1u;
            If(kk == 3u, [&] { Break(); });
            acc = acc + 100u;
          });
    If(g % 11u == 0u, [&] {
      out[g] = acc + 7u;
      Return();
    });
    If(g % 2u == 0u, [&] { acc = acc * 2u; }).Else([&] { acc = acc + 1u; });
    out[g] = acc;
    flag[g] = 1u;
  });
  const uint32_t n = 64 * 5;
  rt::HostBuffer out(ScalarType::U32, n), flag(ScalarType::U32, n);
  launch(k, n, {rt::Arg::of(out), rt::Arg::of(flag)});
  auto got = contents<uint32_t>(out), flags = contents<uint32_t>(flag);
  for (uint32_t g = 0; g < n; ++g) {
    bool stored = false;
    uint32_t want = reference_lane(g, stored);
    EXPECT_EQ(got[g], want) << "lane " << g;
    EXPECT_EQ(flags[g], stored ? 1u : 0u) << "lane " << g;
  }
}

// for i = a; i < b; i += c re-evaluates b before every iteration, as in C.
TEST(Control, ForBoundIsEvaluatedBeforeEveryIteration) {
  auto k = kernel("shrinking", {64}, {"out"}, [](Out<uint32_t> out) {
    Var limit(5u, "limit");
    Var count(0u, "count");
    For(0u, limit, [&](Value<uint32_t>) {
      limit = limit - 1u;
      count = count + 1u;
    });
    out[global_id(0)] = count;
  });
  rt::HostBuffer out(ScalarType::U32, 64);
  launch(k, 64, {rt::Arg::of(out)});
  EXPECT_EQ(contents<uint32_t>(out), std::vector<uint32_t>(64, 3u));
}

TEST(Control, SignedLoopFromANegativeStart) {
  auto k = kernel("countdown", {64}, {"out"}, [](Out<int32_t> out) {
    Var sum(0, "sum");
    For(-3, 4, 2, [&](Value<int32_t> i) { sum = sum + i; }); // -3, -1, 1, 3
    out[global_id(0)] = sum;
  });
  rt::HostBuffer out(ScalarType::I32, 64);
  launch(k, 64, {rt::Arg::of(out)});
  EXPECT_EQ(contents<int32_t>(out), std::vector<int32_t>(64, 0));
}

TEST(Control, BuiltinsOfA3dGrid) {
  auto k = kernel("ids", {4, 2, 2}, {"out"}, [](Out<uint32_t> out) {
    Var gx(global_id(0), "gx");
    Var gy(global_id(1), "gy");
    Var gz(global_id(2), "gz");
    Var w(group_size(0) * num_groups(0), "w");
    Var h(group_size(1) * num_groups(1), "h");
    Var at(((gz * h + gy) * w + gx) * 3u, "at");
    out[at] = local_id(0) + 10u * local_id(1) + 100u * local_id(2);
    out[at + 1u] = group_id(0) + 10u * group_id(1) + 100u * group_id(2);
    out[at + 2u] = gx + 10u * gy + 100u * gz;
  });
  const uint32_t groups[3] = {3, 2, 2}, wg[3] = {4, 2, 2};
  const uint32_t w = 12, h = 4, d = 4;
  rt::HostBuffer out(ScalarType::U32, w * h * d * 3);
  run(k, rt::Grid{{groups[0], groups[1], groups[2]}}, std::vector<rt::Arg>{rt::Arg::of(out)});
  auto got = contents<uint32_t>(out);
  for (uint32_t z = 0; z < d; ++z)
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x) {
        const uint32_t at = ((z * h + y) * w + x) * 3;
        EXPECT_EQ(got[at], x % wg[0] + 10 * (y % wg[1]) + 100 * (z % wg[2]));
        EXPECT_EQ(got[at + 1], x / wg[0] + 10 * (y / wg[1]) + 100 * (z / wg[2]));
        EXPECT_EQ(got[at + 2], x + 10 * y + 100 * z);
      }
}

TEST(Control, BufferAtomicsFromManyWorkgroupsAndThreads) {
  auto k = kernel("histogram", {64}, {"x", "bins", "low"},
                  [](In<uint32_t> x, InOut<uint32_t> bins, InOut<int32_t> low) {
                    Var i(global_id(0), "i");
                    If(i < x.size(), [&] {
                      atomic_add(bins[x[i] % 16u], 1u);
                      atomic_min(low[0u], convert<int32_t>(x[i]) - 1000);
                    });
                  });
  const uint32_t n = 64 * 300 + 17;
  std::vector<uint32_t> x(n);
  std::mt19937 rng(8);
  for (uint32_t& v : x)
    v = rng() % 5000;
  std::vector<uint32_t> want(16, 0);
  int32_t low = 0;
  for (uint32_t v : x) {
    ++want[v % 16];
    low = std::min(low, static_cast<int32_t>(v) - 1000);
  }
  for (unsigned threads : {1u, 4u}) {
    auto bx = buffer(ScalarType::U32, x);
    rt::HostBuffer bins(ScalarType::U32, 16);
    auto blow = buffer(ScalarType::I32, std::vector<int32_t>{0});
    Options o;
    o.threads = threads;
    launch(k, n, {rt::Arg::of(bx), rt::Arg::of(bins), rt::Arg::of(blow)}, o);
    EXPECT_EQ(contents<uint32_t>(bins), want);
    EXPECT_EQ(contents<int32_t>(blow)[0], low);
  }
}

// Inside a workgroup, atomics apply in lane order, and each returns the element's old value.
TEST(Control, AtomicsApplyInLaneOrder) {
  auto k = kernel("chain", {64}, {"slot", "old", "total"},
                  [](InOut<uint32_t> slot, Out<uint32_t> old, Out<uint32_t> total) {
                    Shared<uint32_t> sum("sum", 1);
                    Var lid(local_id(0), "lid");
                    If(lid == 0u, [&] { sum[0u] = 0u; });
                    Barrier();
                    Var was(atomic_compare_exchange(slot[0u], lid, lid + 1u), "was");
                    old[lid] = was;
                    atomic_add(sum[lid % 1u], lid);
                    Barrier();
                    If(lid == 0u, [&] { total[0u] = sum[0u]; });
                  });
  rt::HostBuffer slot(ScalarType::U32, 1), old(ScalarType::U32, 64), total(ScalarType::U32, 1);
  launch(k, 64, {rt::Arg::of(slot), rt::Arg::of(old), rt::Arg::of(total)});
  EXPECT_EQ(contents<uint32_t>(slot)[0], 64u);
  std::vector<uint32_t> want(64);
  for (uint32_t l = 0; l < 64; ++l)
    want[l] = l;
  EXPECT_EQ(contents<uint32_t>(old), want);
  EXPECT_EQ(contents<uint32_t>(total)[0], 64u * 63u / 2u);
}

} // namespace
