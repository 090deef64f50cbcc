// Fused dot loops (interp/README.md, "Dot loops"): every kernel here runs with the fused path and
// with Options::fused_loops off, and the two must agree bit for bit on the results, or on the
// error (kind and message). Stats::fused_loops shows which runs took the fused path, so that a
// precondition that silently stopped holding fails the test too.
#include "halfway/text/parse.hpp"
#include "helpers.hpp"
#include "matmul_tiled.hpp"

#include <optional>

namespace halfway::interp::test {
namespace {

using ir::ScalarType;

// Replaces every `{key}` of `text`.
std::string fill(std::string text, const std::vector<std::pair<std::string, std::string>>& keys) {
  for (const auto& [key, value] : keys) {
    const std::string k = "{" + key + "}";
    for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at))
      text.replace(at, k.size(), value);
  }
  return text;
}

// A workgroup of {wx} x {wy} lanes fills two shared tiles from buffers a and b, then lane (tx, ty)
// sums ta[ty][j] * tb[j][tx] for j = lo, lo + st, ... below hi ({sum} is the add, in either order
// of its operands). With `race` set, lane `race - 1` then writes ta[0][1] with no barrier after
// the loop's reads.
constexpr const char* kTiles = R"(kernel tiles workgroup({wx}, {wy}, 1) {
  param a: buffer<{t}, read>;
  param b: buffer<{t}, read>;
  param out: buffer<{t}, write>;
  param lo: {c};
  param hi: {c};
  param st: {c};
  param race: u32;
  shared ta: {t}[{wy}][20];
  shared tb: {t}[20][{wx}];
  let tx: u32 = local_id(0);
  let ty: u32 = local_id(1);
  let flat: u32 = add(mul(ty, {wx}:u32), tx);
  for e: u32 = flat to mul({wy}:u32, 20:u32) step mul({wx}:u32, {wy}:u32) {
    ta[div(e, 20:u32)][rem(e, 20:u32)] = a[e];
  }
  for e: u32 = flat to mul(20:u32, {wx}:u32) step mul({wx}:u32, {wy}:u32) {
    tb[div(e, {wx}:u32)][rem(e, {wx}:u32)] = b[e];
  }
  barrier;
  let acc: {t} = 0.0:{t};
  for j: {c} = lo to hi step st {
    acc = {sum};
  }
  if eq(race, add(flat, 1:u32)) {
    ta[0:u32][1:u32] = 1.0:{t};
  }
  out[add(mul(group_id(0), mul({wx}:u32, {wy}:u32)), flat)] = acc;
}
)";

struct Shape {
  uint32_t wx, wy;
  std::string type = "f32";    // f32 or f64
  std::string counter = "i32"; // the loop counter's type
  bool acc_first = true;
};

ir::VerifiedKernel tiles(const Shape& s) {
  const std::string product = "mul(ta[ty][j], tb[j][tx])";
  const std::string sum = s.acc_first ? "add(acc, " + product + ")" : "add(" + product + ", acc)";
  return text::parse_verified(fill(kTiles, {{"wx", std::to_string(s.wx)},
                                            {"wy", std::to_string(s.wy)},
                                            {"t", s.type},
                                            {"c", s.counter},
                                            {"sum", sum}}),
                              "tiles.hk")
      .at(0);
}

// Bit patterns that stress the arithmetic: NaNs with payloads, infinities, signed zeros,
// subnormals, the largest finite values, and random ones.
std::vector<uint64_t> patterns(size_t n, bool f64, uint32_t seed) {
  const std::vector<uint64_t> edges32 = {0x7fc00001, 0xffa00000, 0x7f800000, 0xff800000,
                                         0x80000000, 0,          1,          0x807fffff,
                                         0x7f7fffff, 0xff7fffff};
  const std::vector<uint64_t> edges64 = {0x7ff8000000000001,
                                         0xfff4000000000000,
                                         0x7ff0000000000000,
                                         0xfff0000000000000,
                                         0x8000000000000000,
                                         0,
                                         1,
                                         0x800fffffffffffff,
                                         0x7fefffffffffffff};
  const auto& edges = f64 ? edges64 : edges32;
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = rng() % 4 == 0 ? edges[rng() % edges.size()] : f64 ? rng() : rng() & 0xffffffffu;
  return out;
}

rt::HostBuffer filled(ScalarType t, const std::vector<uint64_t>& bits) {
  rt::HostBuffer b(t, bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    std::memcpy(static_cast<std::byte*>(b.data()) + i * ir::bytes(t), &bits[i], ir::bytes(t));
  return b;
}

struct Outcome {
  std::vector<std::byte> out;
  std::optional<Error> error;
  uint64_t fused = 0;
};

Outcome run_tiles(const ir::VerifiedKernel& k, const Shape& s, int64_t lo, int64_t hi, int64_t st,
                  uint32_t race, bool fused, uint32_t groups, uint32_t seed,
                  const std::vector<uint64_t>* values = nullptr) {
  const bool f64 = s.type == "f64";
  const ScalarType t = f64 ? ScalarType::F64 : ScalarType::F32;
  const ScalarType c = s.counter == "i32" ? ScalarType::I32 : ScalarType::U32;
  auto a = filled(t, values ? *values : patterns(size_t{s.wy} * 20, f64, seed));
  auto b = filled(t, values ? *values : patterns(size_t{s.wx} * 20, f64, seed + 1));
  rt::HostBuffer out(t, size_t{groups} * s.wx * s.wy);
  auto scalar = [c](int64_t v) {
    return c == ScalarType::I32 ? rt::Arg::i32(static_cast<int32_t>(v))
                                : rt::Arg::u32(static_cast<uint32_t>(v));
  };
  Options o;
  o.fused_loops = fused;
  Outcome r;
  try {
    Stats st_ = run(k, rt::Grid{{groups, 1, 1}},
                    std::vector<rt::Arg>{rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(out),
                                         scalar(lo), scalar(hi), scalar(st), rt::Arg::u32(race)},
                    o);
    r.fused = st_.fused_loops;
  } catch (const Error& e) {
    r.error = e;
  }
  const auto* p = static_cast<const std::byte*>(out.data());
  r.out.assign(p, p + out.size_bytes());
  return r;
}

// Runs both ways; returns the fused run's outcome after checking that the general run agrees.
Outcome both(const Shape& s, int64_t lo, int64_t hi, int64_t st, uint32_t race = 0,
             uint32_t groups = 3, uint32_t seed = 7) {
  const auto k = tiles(s);
  Outcome fast = run_tiles(k, s, lo, hi, st, race, true, groups, seed);
  Outcome slow = run_tiles(k, s, lo, hi, st, race, false, groups, seed);
  const std::string what = s.type + " " + s.counter + " " + std::to_string(s.wx) + "x" +
                           std::to_string(s.wy) + " lo " + std::to_string(lo) + " hi " +
                           std::to_string(hi) + " st " + std::to_string(st);
  EXPECT_EQ(slow.fused, 0u) << what;
  EXPECT_EQ(fast.error.has_value(), slow.error.has_value()) << what;
  if (fast.error && slow.error) {
    EXPECT_EQ(fast.error->kind(), slow.error->kind()) << what;
    EXPECT_EQ(std::string(fast.error->what()), std::string(slow.error->what())) << what;
  } else {
    EXPECT_TRUE(fast.out == slow.out) << what; // every bit, NaN payloads included
  }
  return fast;
}

TEST(DotLoop, SameBitsAsTheGeneralPathOnEdgeValues) {
  // 64 lanes (whole 16-lane rows: uniform x, consecutive y), 15 lanes (gathers), 1 lane.
  for (const Shape& s :
       {Shape{16, 4}, Shape{5, 3}, Shape{1, 1}, Shape{16, 4, "f64"}, Shape{5, 3, "f64", "u32"},
        Shape{16, 4, "f32", "u32", false}, Shape{8, 2, "f64", "i32", false}}) {
    for (auto [lo, hi, st] :
         {std::array<int64_t, 3>{0, 20, 1}, {3, 17, 5}, {19, 20, 1}, {0, 1, 1}, {7, 20, 13}}) {
      const Outcome r = both(s, lo, hi, st);
      EXPECT_FALSE(r.error.has_value()) << (r.error ? r.error->what() : "");
      // One fused loop per workgroup; single-lane loops of under 64 reads log their reads too.
      EXPECT_EQ(r.fused, 3u) << s.wx << "x" << s.wy << " " << lo << " " << hi;
    }
  }
}

TEST(DotLoop, NoIterationsAndCountersThatWrap) {
  const Shape s{16, 4};
  Outcome r = both(s, 5, 5, 1); // no iteration: acc stays 0
  EXPECT_EQ(r.fused, 3u);
  EXPECT_TRUE(
      std::all_of(r.out.begin(), r.out.end(), [](std::byte b) { return b == std::byte{0}; }));
  // A u32 counter stepping by 2^32 - 1 wraps below its start and leaves the loop at once after
  // one iteration (0, then 4294967295 is not below 20).
  r = both(Shape{16, 4, "f32", "u32"}, 0, 20, 4294967295);
  EXPECT_EQ(r.fused, 3u);
}

TEST(DotLoop, ValuesAreTheProductsSummedInOrder) {
  const Shape s{16, 4};
  const auto k = tiles(s);
  std::vector<uint64_t> v(320); // a uses the first 80, b all 320
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = bits(0.1f * static_cast<float>(i) - 3.0f);
  const Outcome r = run_tiles(k, s, 0, 20, 1, 0, true, 1, 0, &v);
  ASSERT_FALSE(r.error.has_value());
  EXPECT_EQ(r.fused, 1u);
  std::vector<float> out(64);
  std::memcpy(out.data(), r.out.data(), 64 * sizeof(float));
  auto a = [&](uint32_t i) { return from_bits(static_cast<uint32_t>(v[i])); };
  for (uint32_t ty = 0; ty < 4; ++ty)
    for (uint32_t tx = 0; tx < 16; ++tx) {
      float acc = 0.0f;
      for (uint32_t j = 0; j < 20; ++j) {
        const float p = a(ty * 20 + j) * a(j * 16 + tx); // tb[j][tx] = b[j * 16 + tx]
        acc = acc + p;
      }
      EXPECT_EQ(bits(out[ty * 16 + tx]), bits(acc)) << tx << " " << ty;
    }
}

// Indices out of bounds somewhere in the loop: the fused path does not run, and the general path
// reports the first failing iteration as before.
TEST(DotLoop, OutOfBoundsInsideTheLoop) {
  const Shape s{16, 4};
  Outcome r = both(s, 0, 21, 1); // j = 20 is past ta's 20 columns
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->kind(), ErrorKind::OutOfBounds);
  EXPECT_HAS(r.error->what(),
             "load from shared ta out of bounds in dimension 1: index 20, length 20");
  EXPECT_EQ(r.fused, 0u);
  r = both(s, -2, 4, 1);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_HAS(r.error->what(), "load from shared ta at negative index -2 in dimension 1");
  r = both(s, 3, 20, -1); // 3, 2, 1, 0, -1: negative on the fifth iteration
  ASSERT_TRUE(r.error.has_value());
  EXPECT_HAS(r.error->what(), "at negative index -1");
  // The 1-lane workgroup has ty = 0 < 1, but ta has only 1 row: still in bounds.
  r = both(Shape{1, 1}, 0, 20, 1);
  EXPECT_FALSE(r.error.has_value());
}

// Reads the fused loop logged (deferred for long loops, written out for short ones) are replayed
// when another lane writes the array in the same interval: the race names the same lanes.
TEST(DotLoop, WriteAfterTheLoopsReadsIsARace) {
  for (const Shape& s : {Shape{16, 4}, Shape{5, 3}, Shape{2, 1}}) {
    // Without the write the loop runs fused (a failed launch returns no Stats to count it in).
    EXPECT_EQ(both(s, 0, 20, 1, 0, 2).fused, 2u);
    for (uint32_t race : {1u, 2u, s.wx * s.wy}) {
      const Outcome r = both(s, 0, 20, 1, race, 2);
      ASSERT_TRUE(r.error.has_value()) << race;
      EXPECT_EQ(r.error->kind(), ErrorKind::DataRace);
      EXPECT_HAS(r.error->what(),
                 "shared ta[1] and lane " + std::to_string(race - 1) + " writes it");
    }
  }
  // The lanes named: lane 0 (row 0) reads ta[0][1] first; the writer is lane 0 itself in the
  // first case, so the other reader (lane 1) is named.
  const Outcome r = both(Shape{16, 4}, 0, 20, 1, 1, 1);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_HAS(r.error->what(), "lane 1 read shared ta[1] and lane 0 writes it");
}

// An array written since the last barrier is checked at once: the loop takes the general path.
constexpr const char* kDirty = R"(kernel dirty workgroup(16, 1, 1) {
  param out: buffer<f32, write>;
  shared t: f32[16];
  let tx: u32 = local_id(0);
  t[tx] = 1.0:f32;
  let acc: f32 = 0.0:f32;
  for j: u32 = 0:u32 to 16:u32 step 1:u32 {
    acc = add(acc, mul(t[j], t[j]));
  }
  out[tx] = acc;
}
)";

TEST(DotLoop, ReadsAfterAnotherLanesWriteRaceOnTheGeneralPath) {
  const auto k = text::parse_verified(kDirty, "dirty.hk").at(0);
  for (bool fused : {true, false}) {
    rt::HostBuffer out(ScalarType::F32, 16);
    Options o;
    o.fused_loops = fused;
    Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(out)}, o);
    EXPECT_EQ(e.kind(), ErrorKind::DataRace);
    EXPECT_HAS(e.what(), "lane 0 wrote shared t[0] and lane 1 reads it with no barrier in between");
  }
}

// The tiled matmul at sizes that are not multiples of the tile, with edge values: the same bits
// both ways, and one fused loop per workgroup and tile step.
TEST(DotLoop, MatmulTiledAtEdgeSizes) {
  const auto k = examples::matmul_tiled();
  for (auto [m, n, kk] :
       {std::array<uint32_t, 3>{37, 23, 50}, {16, 16, 16}, {1, 1, 1}, {17, 3, 33}}) {
    std::array<std::vector<std::byte>, 2> got;
    uint64_t fused = 0;
    for (int f = 0; f < 2; ++f) {
      auto a = filled(ScalarType::F32, patterns(size_t{m} * kk, false, m));
      auto b = filled(ScalarType::F32, patterns(size_t{kk} * n, false, n));
      rt::HostBuffer c(ScalarType::F32, size_t{m} * n);
      Options o;
      o.fused_loops = f == 0;
      const rt::Grid grid{{(n + 15) / 16, (m + 15) / 16, 1}};
      Stats st = run(k, grid,
                     std::vector<rt::Arg>{rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(c),
                                          rt::Arg::u32(m), rt::Arg::u32(n), rt::Arg::u32(kk)},
                     o);
      if (f == 0)
        fused = st.fused_loops;
      const auto* p = static_cast<const std::byte*>(c.data());
      got[f].assign(p, p + c.size_bytes());
    }
    EXPECT_TRUE(got[0] == got[1]) << m << " " << n << " " << kk;
    EXPECT_EQ(fused, uint64_t{(n + 15) / 16} * ((m + 15) / 16) * ((kk + 15) / 16));
  }
}

// A step budget stops the launch the same way: the fused loop takes the general path's steps.
TEST(DotLoop, StepBudgetCountsTheLoopsSteps) {
  const auto k = examples::matmul_tiled();
  for (uint64_t budget : {uint64_t{100}, uint64_t{2000}, uint64_t{9000}}) {
    std::array<std::string, 2> what;
    for (int f = 0; f < 2; ++f) {
      rt::HostBuffer a(ScalarType::F32, 128 * 128), b(ScalarType::F32, 128 * 128),
          c(ScalarType::F32, 128 * 128);
      Options o;
      o.fused_loops = f == 0;
      o.max_steps = budget;
      o.deterministic = true;
      what[f] = launch_error(k, rt::Grid{{8, 8, 1}},
                             {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(c), rt::Arg::u32(128),
                              rt::Arg::u32(128), rt::Arg::u32(128)},
                             o)
                    .what();
    }
    EXPECT_EQ(what[0], what[1]);
    EXPECT_HAS(what[0], "step");
  }
}

} // namespace
} // namespace halfway::interp::test
