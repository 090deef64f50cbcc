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

// A scalar argument of the loop counter's type (i32 or u32).
rt::Arg counter_arg(ScalarType c, int64_t v) {
  return c == ScalarType::I32 ? rt::Arg::i32(static_cast<int32_t>(v))
                              : rt::Arg::u32(static_cast<uint32_t>(v));
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
  auto scalar = [c](int64_t v) { return counter_arg(c, v); };
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

// Loops of several statements (index lets and terms) whose indices are affine in the counter:
// the split-row GEMV shape (a counter that starts at the lane's index), lets, shifts, negations,
// decreasing indices, two accumulators and several reads of one shared array per iteration.
// {start} is the counter's first value, {body} the loop's statements.
constexpr const char* kAffine = R"(kernel affine workgroup({w}, 1, 1) {
  param a: buffer<f32, read>;
  param b: buffer<f32, read>;
  param out: buffer<f32, write>;
  param hi: {c};
  param st: {c};
  param k0: {c};
  param q: {c};
  param race: u32;
  param spot: u32;
  shared s: f32[256];
  let lid: u32 = local_id(0);
  let lidc: {c} = {lidc};
  for e: u32 = lid to 256:u32 step {w}:u32 {
    s[e] = b[e];
  }
  barrier;
  let acc: f32 = 0.0:f32;
  let acc2: f32 = 0.0:f32;
  let prev: {c} = k0;
  for t: {c} = {start} to hi step st {
{body}
  }
  if eq(race, add(lid, 1:u32)) {
    s[spot] = 1.0:f32;
  }
  let at: u32 = add(mul(group_id(0), mul(2:u32, {w}:u32)), lid);
  out[at] = acc;
  out[add(at, {w}:u32)] = acc2;
}
)";

struct AffineCase {
  std::string name, body;
  std::string start = "lidc";
  bool fused = true;    // whether the loop should run fused
  bool planned = false; // when not: whether it is planned all the same (and fails at run time)
};

const std::vector<AffineCase>& affine_cases() {
  static const std::vector<AffineCase> cases = {
      {"split rows",
       R"(    let base: {c} = add(mul(k0, 7:{c}), t);
    acc = add(acc, mul(a[base], s[t]));
    acc2 = add(mul(a[add(base, q)], s[add(t, q)]), acc2);
    acc = add(acc, mul(a[add(base, mul(q, 2:{c}))], a[add(base, shl(q, 1:{c}))]));)"},
      {"shifts, negations, decreasing indices",
       R"(    let u: {c} = add(sub(mul(k0, 3:{c}), shl(t, 1:{c})), 400:{c});
    let v: {c} = add(neg(t), 200:{c});
    acc = add(acc, mul(s[v], a[u]));
    acc2 = add(acc2, mul(s[sub(v, 1:{c})], s[and(k0, 15:{c})]));
    acc2 = add(acc2, mul(a[not(not(add(t, k0)))], b[max(k0, 3:{c})]));)"},
      {"a let read before the body assigns it", R"(    acc = add(acc, mul(a[prev], s[t]));
    prev = add(t, k0);)",
       "lidc", false},
      {"a product of two counter values", R"(    acc = add(acc, mul(a[mul(t, t)], s[t]));)", "lidc",
       false},
      // Planned, but each lane's element moves by a different amount: the general path runs it.
      {"a step that differs by lane", R"(    acc = add(acc, mul(a[mul(t, lidc)], s[t]));)", "lidc",
       false, true},
      {"one start for every lane", R"(    let x: {c} = add(t, k0);
    acc = add(acc, mul(s[t], a[x]));
    acc = add(acc, mul(s[add(t, 1:{c})], a[add(x, 1:{c})]));)",
       "k0"},
      // Two reads of one shared array per iteration that move at different speeds.
      {"reads that move apart", R"(    acc = add(acc, mul(s[t], a[t]));
    acc2 = add(acc2, mul(s[mul(t, 2:{c})], a[t]));)",
       "k0"},
  };
  return cases;
}

struct AffineShape {
  uint32_t w;
  std::string counter = "u32";
};

Outcome run_affine(const ir::VerifiedKernel& k, const AffineShape& sh, int64_t hi, int64_t st,
                   int64_t k0, int64_t q, uint32_t race, bool fused, uint32_t groups,
                   const std::vector<uint64_t>* values = nullptr, uint32_t spot = 1) {
  const ScalarType c = sh.counter == "i32" ? ScalarType::I32 : ScalarType::U32;
  auto a = filled(ScalarType::F32, values ? *values : patterns(65536, false, 11));
  auto b = filled(ScalarType::F32, patterns(256, false, 12));
  rt::HostBuffer out(ScalarType::F32, size_t{groups} * 2 * sh.w);
  auto scalar = [c](int64_t v) { return counter_arg(c, v); };
  Options o;
  o.fused_loops = fused;
  Outcome r;
  try {
    r.fused = run(k, rt::Grid{{groups, 1, 1}},
                  std::vector<rt::Arg>{rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(out), scalar(hi),
                                       scalar(st), scalar(k0), scalar(q), rt::Arg::u32(race),
                                       rt::Arg::u32(spot)},
                  o)
                  .fused_loops;
  } catch (const Error& e) {
    r.error = e;
  }
  const auto* p = static_cast<const std::byte*>(out.data());
  r.out.assign(p, p + out.size_bytes());
  return r;
}

ir::VerifiedKernel affine_kernel(const AffineCase& ac, const AffineShape& sh) {
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"body", ac.body},
      {"start", ac.start},
      {"w", std::to_string(sh.w)},
      {"c", sh.counter},
      {"lidc", sh.counter == "i32" ? "bitcast<i32>(local_id(0))" : "local_id(0)"}};
  return text::parse_verified(fill(fill(kAffine, keys), keys), "affine.hk").at(0);
}

// Both ways, the same bits or the same error; returns the fused run's outcome.
Outcome both_affine(const AffineCase& ac, const AffineShape& sh, int64_t hi, int64_t st, int64_t k0,
                    int64_t q, uint32_t race = 0, uint32_t groups = 2, uint32_t spot = 1) {
  const auto k = affine_kernel(ac, sh);
  Outcome fast = run_affine(k, sh, hi, st, k0, q, race, true, groups, nullptr, spot);
  Outcome slow = run_affine(k, sh, hi, st, k0, q, race, false, groups, nullptr, spot);
  const std::string what = ac.name + ", " + sh.counter + " x " + std::to_string(sh.w) +
                           " lanes, hi " + std::to_string(hi) + " st " + std::to_string(st) +
                           " k0 " + std::to_string(k0) + " q " + std::to_string(q) + " race " +
                           std::to_string(race) + " at " + std::to_string(spot);
  EXPECT_EQ(slow.fused, 0u) << what;
  EXPECT_EQ(fast.error.has_value(), slow.error.has_value()) << what;
  if (fast.error && slow.error) {
    EXPECT_EQ(std::string(fast.error->what()), std::string(slow.error->what())) << what;
  } else {
    EXPECT_TRUE(fast.out == slow.out) << what; // every bit, NaN payloads included
  }
  return fast;
}

TEST(DotLoop, AffineIndicesSameBitsAsTheGeneralPath) {
  for (const AffineCase& ac : affine_cases())
    for (const AffineShape& sh :
         {AffineShape{64}, AffineShape{16, "i32"}, AffineShape{5}, AffineShape{1, "i32"}}) {
      // Every lane runs the same number of iterations: hi - (the first start) is a multiple of
      // the step, which is the workgroup's width when the start is the lane.
      const int64_t st = ac.start == "lidc" ? sh.w : 3;
      // As many iterations as keep every index in range (t below 190: s has 256 elements, and
      // 200 - t must stay above 0), at most 40.
      const int64_t most = std::min<int64_t>(40, 180 / st);
      for (int64_t iterations : {int64_t{1}, int64_t{2}, most}) {
        const int64_t hi = (ac.start == "lidc" ? 0 : 5) + iterations * st;
        const Outcome r = both_affine(ac, sh, hi, st, 5, 9);
        EXPECT_FALSE(r.error.has_value()) << ac.name << ": " << (r.error ? r.error->what() : "");
        // A step that differs by lane is no obstacle with one lane or one iteration.
        const bool fused = ac.fused || (ac.planned && (sh.w == 1 || iterations == 1));
        EXPECT_EQ(r.fused, fused ? 2u : 0u)
            << ac.name << " " << sh.w << " lanes, " << iterations << " iterations";
      }
    }
}

// Lanes that run different numbers of iterations (a counter from the lane's index to a bound
// that is not a multiple of the step) take the general path.
TEST(DotLoop, LanesWithDifferentTripCountsTakeTheGeneralPath) {
  const AffineCase& rows = affine_cases()[0];
  const Outcome r = both_affine(rows, AffineShape{64}, 64 * 2 + 5, 64, 5, 9);
  EXPECT_FALSE(r.error.has_value());
  EXPECT_EQ(r.fused, 0u);
}

// An affine index that leaves its buffer or array at some iteration (the last, the first, or by
// going below zero on a decreasing index): the fused path does not run, and the general path
// reports the first failing lane and iteration as before.
TEST(DotLoop, AffineIndicesOutOfBounds) {
  const AffineCase& rows = affine_cases()[0];
  const AffineCase& down = affine_cases()[1];
  for (const AffineShape& sh : {AffineShape{64}, AffineShape{16, "i32"}}) {
    // s[add(t, q)] reaches 256 at the last iteration.
    Outcome r = both_affine(rows, sh, 4 * sh.w, sh.w, 5, 256 - 4 * sh.w + 1);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_HAS(r.error->what(), "load from shared s out of bounds");
    EXPECT_EQ(r.fused, 0u);
    // a[add(base, q)] past a's 65,536 elements from the first iteration.
    r = both_affine(rows, sh, 4 * sh.w, sh.w, 5, 65536);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_HAS(r.error->what(), "load from buffer a out of bounds");
    // v = 200 - t below 0 (i32) or wrapping (u32) once t passes 200.
    r = both_affine(down, sh, 300, 3, 5, 9);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->kind(), ErrorKind::OutOfBounds);
  }
}

// The reads of the fused loop (several per iteration on one shared array, written out for short
// loops and deferred for long ones) replay in the general path's order when a lane writes the
// array after them: the race names the same lanes and element.
TEST(DotLoop, AffineReadsThenAWriteRaceAsOnTheGeneralPath) {
  for (const AffineCase& ac : {affine_cases()[0], affine_cases()[1], affine_cases()[6]})
    for (const AffineShape& sh : {AffineShape{64}, AffineShape{2}})
      for (int64_t iterations : {int64_t{2}, int64_t{30}}) {
        const int64_t st = ac.start == "lidc" ? sh.w : 3;
        iterations = std::min<int64_t>(iterations, 180 / st);
        const int64_t hi = iterations * st;
        // Elements read at the first iteration (1), at later ones only (135 = 200 - 65, by
        // decreasing indices; s[2t] at the last iteration, from t = 1 step 3), and never (0).
        const auto last = static_cast<uint32_t>(2 * (1 + 3 * (iterations - 1)));
        for (uint32_t race : {1u, sh.w})
          for (uint32_t spot : {1u, 135u, last, 0u}) {
            const Outcome r = both_affine(ac, sh, hi, st, 1, 1, race, 1, spot);
            if (r.error) {
              EXPECT_EQ(r.error->kind(), ErrorKind::DataRace) << r.error->what();
            }
          }
      }
  // s[1] is read by lane 1 at the first iteration (s[t], t = lid), then lane 0 writes it.
  const Outcome r = both_affine(affine_cases()[0], AffineShape{64}, 128, 64, 1, 1, 1, 1);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_HAS(r.error->what(), "lane 1 read shared s[1] and lane 0 writes it");
}

// The split-row sums are the products added in the loop's order, ties included: a[..] = 1 and
// b-side values of 2^-24 make 1 + 2^-24, a tie that rounds to even.
TEST(DotLoop, SplitRowSumsInOrderWithTies) {
  const AffineCase& rows = affine_cases()[0];
  const AffineShape sh{16};
  const auto k = affine_kernel(rows, sh);
  std::vector<uint64_t> av(65536);
  for (size_t i = 0; i < av.size(); ++i)
    av[i] = bits(i % 5 == 0 ? 1.0f : i % 5 == 1 ? 0x1p-24f : 0.25f * static_cast<float>(i % 7));
  const int64_t hi = 16 * 6, st = 16, k0 = 5, q = 9;
  const Outcome r = run_affine(k, sh, hi, st, k0, q, 0, true, 1, &av);
  ASSERT_FALSE(r.error.has_value());
  EXPECT_EQ(r.fused, 1u);
  const std::vector<uint64_t> bv = patterns(256, false, 12);
  auto A = [&](int64_t i) { return from_bits(static_cast<uint32_t>(av[i])); };
  auto S = [&](int64_t i) { return from_bits(static_cast<uint32_t>(bv[i])); };
  auto canonical = [](float v) { return v != v ? from_bits(0x7fc00000u) : v; };
  std::vector<float> out(32);
  std::memcpy(out.data(), r.out.data(), 32 * sizeof(float));
  for (int64_t lid = 0; lid < 16; ++lid) {
    float acc = 0.0f, acc2 = 0.0f;
    for (int64_t t = lid; t < hi; t += st) {
      const int64_t base = k0 * 7 + t;
      acc = canonical(acc + canonical(A(base) * S(t)));
      acc2 = canonical(canonical(A(base + q) * S(t + q)) + acc2);
      acc = canonical(acc + canonical(A(base + 2 * q) * A(base + 2 * q)));
    }
    EXPECT_EQ(bits(out[lid]), bits(acc)) << lid;
    EXPECT_EQ(bits(out[16 + lid]), bits(acc2)) << lid;
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
