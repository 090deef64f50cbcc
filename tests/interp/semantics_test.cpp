// Op semantics against independent references: integer wrapping, truncating division and
// arithmetic shifts; float NaN, min/max and comparisons; f16/bf16 arithmetic; math against MPFR;
// conversions; determinism across thread counts; independence from the caller's MXCSR.
#include "examples.hpp"
#include "helpers.hpp"

#include <limits>
#include <mpfr.h>
#include <xmmintrin.h>

using namespace halfway;
using namespace halfway::interp;
using namespace halfway::interp::test;
using ir::ScalarType;

namespace {

// out[6*i ...] = a+b, a*b, a/b, a%b, a>>s, a<<s with s = b & 7 (i32; b never 0).
TEST(Semantics, SignedIntegers) {
  auto k =
      kernel("ints", {64}, {"a", "b", "out"}, [](In<int32_t> a, In<int32_t> b, Out<int32_t> out) {
        Var i(global_id(0), "i");
        If(i < a.size(), [&] {
          Var s(b[i] & 7, "s");
          out[i * 6u] = a[i] + b[i];
          out[i * 6u + 1u] = a[i] * b[i];
          out[i * 6u + 2u] = a[i] / b[i];
          out[i * 6u + 3u] = a[i] % b[i];
          out[i * 6u + 4u] = a[i] >> s;
          out[i * 6u + 5u] = a[i] << s;
        });
      });
  const int32_t kMin = std::numeric_limits<int32_t>::min(),
                kMax = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> va = {kMin, kMin, kMax, -7, 7, -7, -8, 123456789, -1, 0};
  std::vector<int32_t> vb = {-1, 1, 1, 2, -2, -2, 3, 1000, 31, -5};
  auto a = buffer(ScalarType::I32, va), b = buffer(ScalarType::I32, vb);
  rt::HostBuffer out(ScalarType::I32, va.size() * 6);
  launch(k, va.size(), {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(out)});
  auto got = contents<int32_t>(out);
  for (size_t i = 0; i < va.size(); ++i) {
    const int64_t x = va[i], y = vb[i];
    const int s = static_cast<int>(y & 7);
    auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
    EXPECT_EQ(got[i * 6], wrap(x + y)) << i;
    EXPECT_EQ(got[i * 6 + 1], wrap(x * y)) << i;
    EXPECT_EQ(got[i * 6 + 2], wrap(x / y)) << i;  // truncating; MIN / -1 wraps to MIN
    EXPECT_EQ(got[i * 6 + 3], wrap(x % y)) << i;  // sign of the dividend; MIN % -1 = 0
    EXPECT_EQ(got[i * 6 + 4], wrap(x >> s)) << i; // arithmetic
    EXPECT_EQ(got[i * 6 + 5], wrap(static_cast<int64_t>(static_cast<uint32_t>(x) << s))) << i;
  }
}

TEST(Semantics, NarrowIntegersWrap) {
  auto k =
      kernel("bytes", {64}, {"a", "b", "out"}, [](In<int8_t> a, In<uint8_t> b, Out<uint8_t> out) {
        Var i(global_id(0), "i");
        out[i * 3u] = b[i] * b[i];                      // wraps mod 256
        out[i * 3u + 1u] = convert<uint8_t>(a[i] >> 1); // arithmetic, then reinterpreted
        out[i * 3u + 2u] = b[i] >> 1;                   // logical
      });
  std::vector<int8_t> va(64);
  std::vector<uint8_t> vb(64);
  for (int i = 0; i < 64; ++i)
    va[i] = static_cast<int8_t>(i * 7 - 128), vb[i] = static_cast<uint8_t>(i * 9 + 100);
  auto a = buffer(ScalarType::I8, va), b = buffer(ScalarType::U8, vb);
  rt::HostBuffer out(ScalarType::U8, 192);
  launch(k, 64, {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(out)});
  auto got = contents<uint8_t>(out);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(got[i * 3], static_cast<uint8_t>(vb[i] * vb[i]));
    EXPECT_EQ(got[i * 3 + 1], static_cast<uint8_t>(va[i] >> 1));
    EXPECT_EQ(got[i * 3 + 2], static_cast<uint8_t>(vb[i] >> 1));
  }
}

// NaN results are the canonical quiet NaN; min/max ignore a NaN operand and order -0 < +0;
// comparisons are IEEE.
TEST(Semantics, FloatSpecials) {
  auto k = kernel("specials", {64}, {"a", "b", "f", "c"},
                  [](In<float> a, In<float> b, Out<float> f, Out<uint32_t> c) {
                    Var i(global_id(0), "i");
                    If(i < a.size(), [&] {
                      f[i * 4u] = a[i] - b[i];
                      f[i * 4u + 1u] = min(a[i], b[i]);
                      f[i * 4u + 2u] = max(a[i], b[i]);
                      f[i * 4u + 3u] = sqrt(a[i]);
                      auto flag = [](Value<bool> c, uint32_t v) {
                        return select(c, Value<uint32_t>(v), Value<uint32_t>(0u));
                      };
                      c[i] = flag(a[i] == b[i], 1) | flag(a[i] != b[i], 2) | flag(a[i] < b[i], 4) |
                             flag(a[i] >= b[i], 8);
                    });
                  });
  const float inf = INFINITY, nan = NAN;
  const float payload = from_bits(0xffc01234u); // a negative NaN with a payload
  std::vector<float> va = {inf, nan, 1.0f, -0.0f, 0.0f, payload, -4.0f, 2.0f};
  std::vector<float> vb = {inf, 2.0f, nan, 0.0f, -0.0f, 1.0f, 3.0f, 2.0f};
  auto a = buffer(ScalarType::F32, va), b = buffer(ScalarType::F32, vb);
  rt::HostBuffer f(ScalarType::F32, va.size() * 4), c(ScalarType::U32, va.size());
  launch(k, va.size(), {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(f), rt::Arg::of(c)});
  auto got = contents<uint32_t>(f);
  auto cmp = contents<uint32_t>(c);
  const uint32_t q = kCanonicalNanF32;
  // inf - inf, NaN - 2, 1 - NaN, payload NaN - 1: all canonical.
  EXPECT_EQ(got[0], q);
  EXPECT_EQ(got[4], q);
  EXPECT_EQ(got[8], q);
  EXPECT_EQ(got[20], q);
  EXPECT_EQ(got[1], bits(inf));
  EXPECT_EQ(got[5], bits(2.0f)) << "min(NaN, 2) = 2";
  EXPECT_EQ(got[9], bits(1.0f)) << "min(1, NaN) = 1";
  EXPECT_EQ(got[13], bits(-0.0f)) << "min(-0, +0) = -0";
  EXPECT_EQ(got[14], bits(0.0f)) << "max(-0, +0) = +0";
  EXPECT_EQ(got[17], bits(-0.0f)) << "min(+0, -0) = -0";
  EXPECT_EQ(got[18], bits(0.0f)) << "max(+0, -0) = +0";
  EXPECT_EQ(got[27], q) << "sqrt(-4)";
  EXPECT_EQ(got[15], bits(-0.0f)) << "sqrt(-0) = -0";
  EXPECT_EQ(cmp[0], 1u | 8u) << "inf == inf";
  EXPECT_EQ(cmp[1], 2u) << "NaN: only ne";
  EXPECT_EQ(cmp[2], 2u);
  EXPECT_EQ(cmp[3], 1u | 8u) << "-0 == +0";
  EXPECT_EQ(cmp[6], 2u | 4u);
}

// f16 and bf16 +, -, *, / are correctly rounded: by Figueroa, computing in f32 and rounding once
// is, and the host's (_Float16) cast and the bf16 bit rounding below are the reference.
TEST(Semantics, HalfPrecisionArithmetic) {
  auto k16 = kernel("h16", {64}, {"a", "b", "out"}, [](In<f16> a, In<f16> b, Out<f16> out) {
    Var i(global_id(0), "i");
    If(i < a.size(), [&] {
      out[i * 4u] = a[i] + b[i];
      out[i * 4u + 1u] = a[i] - b[i];
      out[i * 4u + 2u] = a[i] * b[i];
      out[i * 4u + 3u] = a[i] / b[i];
    });
  });
  auto kb = kernel("hb16", {64}, {"a", "b", "out"}, [](In<bf16> a, In<bf16> b, Out<bf16> out) {
    Var i(global_id(0), "i");
    If(i < a.size(), [&] {
      out[i * 2u] = a[i] + b[i];
      out[i * 2u + 1u] = a[i] * b[i];
    });
  });
  std::mt19937 rng(9);
  const size_t n = 20000;
  std::vector<uint16_t> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<uint16_t>(rng());
    b[i] = static_cast<uint16_t>(rng());
  }
  {
    auto ba = buffer(ScalarType::F16, a), bb = buffer(ScalarType::F16, b);
    rt::HostBuffer out(ScalarType::F16, n * 4);
    launch(k16, n, {rt::Arg::of(ba), rt::Arg::of(bb), rt::Arg::of(out)});
    auto got = contents<uint16_t>(out);
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
      const float x = widen16(a[i]), y = widen16(b[i]);
      const float r[4] = {x + y, x - y, x * y, x / y};
      for (int o = 0; o < 4; ++o) {
        uint16_t want = std::isnan(r[o]) ? 0x7e00 : round16(r[o]);
        wrong += got[i * 4 + o] != want;
      }
    }
    EXPECT_EQ(wrong, 0u);
  }
  {
    auto ba = buffer(ScalarType::BF16, a), bb = buffer(ScalarType::BF16, b);
    rt::HostBuffer out(ScalarType::BF16, n * 2);
    launch(kb, n, {rt::Arg::of(ba), rt::Arg::of(bb), rt::Arg::of(out)});
    auto got = contents<uint16_t>(out);
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
      const float x = widen_bf16(a[i]), y = widen_bf16(b[i]);
      const float r[2] = {x + y, x * y};
      for (int o = 0; o < 2; ++o) {
        uint16_t want = std::isnan(r[o]) ? 0x7fc0 : round_bf16(r[o]);
        wrong += got[i * 2 + o] != want;
      }
    }
    EXPECT_EQ(wrong, 0u);
  }
}

// f32 math intrinsics against MPFR (correctly rounded to binary32; inputs keep results normal).
TEST(Semantics, MathIsCorrectlyRounded) {
  auto k = kernel("math", {64}, {"x", "out"}, [](In<float> x, Out<float> out) {
    Var i(global_id(0), "i");
    If(i < x.size(), [&] {
      out[i * 4u] = exp(x[i]);
      out[i * 4u + 1u] = sin(x[i]);
      out[i * 4u + 2u] = log(abs(x[i]));
      out[i * 4u + 3u] = pow(abs(x[i]), x[i]);
    });
  });
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> d(-20, 20);
  const size_t n = 3000;
  std::vector<float> x(n);
  for (float& v : x)
    v = d(rng);
  auto bx = buffer(ScalarType::F32, x);
  rt::HostBuffer out(ScalarType::F32, n * 4);
  launch(k, n, {rt::Arg::of(bx), rt::Arg::of(out)});
  auto got = contents<float>(out);
  mpfr_t m, r;
  mpfr_init2(m, 24);
  mpfr_init2(r, 24);
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    mpfr_set_flt(m, x[i], MPFR_RNDN);
    float want[4];
    mpfr_exp(r, m, MPFR_RNDN);
    want[0] = mpfr_get_flt(r, MPFR_RNDN);
    mpfr_sin(r, m, MPFR_RNDN);
    want[1] = mpfr_get_flt(r, MPFR_RNDN);
    mpfr_abs(m, m, MPFR_RNDN);
    mpfr_log(r, m, MPFR_RNDN);
    want[2] = mpfr_get_flt(r, MPFR_RNDN);
    mpfr_t y;
    mpfr_init2(y, 24);
    mpfr_set_flt(y, x[i], MPFR_RNDN);
    mpfr_pow(r, m, y, MPFR_RNDN);
    mpfr_clear(y);
    want[3] = mpfr_get_flt(r, MPFR_RNDN);
    for (int o = 0; o < 4; ++o) {
      if (std::fabs(want[o]) < 1.2e-38f || std::isinf(want[o]))
        continue; // outside the normal range
      wrong += bits(got[i * 4 + o]) != bits(want[o]);
    }
  }
  mpfr_clear(m);
  mpfr_clear(r);
  EXPECT_EQ(wrong, 0u);
}

TEST(Semantics, Conversions) {
  auto k = kernel("convs", {64}, {"x", "i", "h", "e"},
                  [](In<float> x, Out<int32_t> i, Out<f16> h, Out<e4m3> e) {
                    Var g(global_id(0), "g");
                    If(g < x.size(), [&] {
                      i[g] = convert<int32_t>(x[g]);
                      h[g * 2u] = narrow<f16>(x[g], ir::RoundingMode::TowardZero);
                      h[g * 2u + 1u] = narrow<f16>(x[g], ir::RoundingMode::Up);
                      e[g * 2u] = convert<e4m3>(x[g]);
                      e[g * 2u + 1u] = convert<e4m3>(x[g], ir::RoundingMode::NearestEven, true);
                    });
                  });
  std::vector<float> x = {-2.7f, 3e9f, -3e9f, NAN, 1000.0f, 1.0009765625f + 1e-7f, -1.0f / 3, 0.0f};
  auto bx = buffer(ScalarType::F32, x);
  rt::HostBuffer bi(ScalarType::I32, x.size()), bh(ScalarType::F16, x.size() * 2),
      be(ScalarType::E4M3, x.size() * 2);
  launch(k, x.size(), {rt::Arg::of(bx), rt::Arg::of(bi), rt::Arg::of(bh), rt::Arg::of(be)});
  auto gi = contents<int32_t>(bi);
  EXPECT_EQ(gi[0], -2);
  EXPECT_EQ(gi[1], std::numeric_limits<int32_t>::max()) << "saturates";
  EXPECT_EQ(gi[2], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(gi[3], 0) << "NaN -> 0";
  auto gh = contents<uint16_t>(bh);
  EXPECT_EQ(gh[4 * 2], 0x63d0u) << "1000 exactly";
  EXPECT_EQ(gh[5 * 2], 0x3c01u) << "toward zero";
  EXPECT_EQ(gh[5 * 2 + 1], 0x3c02u) << "up";
  EXPECT_EQ(gh[6 * 2], 0xb555u) << "-1/3 toward zero";
  EXPECT_EQ(gh[6 * 2 + 1], 0xb555u) << "-1/3 up (toward +inf)";
  auto ge = contents<uint8_t>(be);
  EXPECT_EQ(ge[4 * 2], 0x7fu) << "1000 overflows e4m3: NaN";
  EXPECT_EQ(ge[4 * 2 + 1], 0x7eu) << "saturating: 448";
  EXPECT_EQ(ge[7 * 2], 0x00u);
}

TEST(Semantics, PackUnpackBitcast) {
  auto k = kernel("bits", {64}, {"h", "out"}, [](In<f16> h, Out<uint32_t> out) {
    Var i(global_id(0), "i");
    Var word(pack<f16>(h[i * 2u], h[i * 2u + 1u]), "word");
    out[i * 3u] = word;
    out[i * 3u + 1u] = bitcast<uint32_t>(to_f32(unpack<f16>(word, 1)));
    out[i * 3u + 2u] = convert<uint32_t>(bitcast<uint16_t>(unpack<f16>(word, 0)));
  });
  std::vector<uint16_t> h(128);
  for (size_t i = 0; i < h.size(); ++i)
    h[i] = static_cast<uint16_t>(i * 977 + 3);
  auto bh = buffer(ScalarType::F16, h);
  rt::HostBuffer out(ScalarType::U32, 64 * 3);
  launch(k, 64, {rt::Arg::of(bh), rt::Arg::of(out)});
  auto got = contents<uint32_t>(out);
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(got[i * 3], h[2 * i] | uint32_t{h[2 * i + 1]} << 16);
    float w = widen16(h[2 * i + 1]);
    EXPECT_EQ(got[i * 3 + 1], std::isnan(w) ? (bits(w) & 0x80000000u) | kCanonicalNanF32 : bits(w));
    EXPECT_EQ(got[i * 3 + 2], h[2 * i]);
  }
}

// Parallel runs (any thread count) give the same buffers as the deterministic run.
TEST(Semantics, DeterministicEqualsParallel) {
  std::mt19937 rng(11);
  const size_t n = 256 * 200 + 13;
  std::vector<float> x = random_floats(rng, n, -10, 10), y = random_floats(rng, n);
  std::vector<rt::HostBuffer> results;
  for (int mode = 0; mode < 3; ++mode) {
    Options o;
    o.deterministic = mode == 0;
    o.threads = mode == 2 ? 3 : 0;
    auto bx = buffer(ScalarType::F32, x), by = buffer(ScalarType::F32, y);
    launch(examples::saxpy(), n, {rt::Arg::of(bx), rt::Arg::of(by), rt::Arg::f32(0.3f)}, o);
    rt::HostBuffer partial(ScalarType::F32, (n + 255) / 256);
    launch(examples::reduce_sum(), partial.size() * 256, {rt::Arg::of(by), rt::Arg::of(partial)},
           o);
    results.push_back(std::move(partial));
  }
  EXPECT_TRUE(results[0] == results[1]);
  EXPECT_TRUE(results[0] == results[2]);
}

TEST(Semantics, StatsDescribeTheLaunch) {
  auto k = examples::saxpy();
  rt::HostBuffer x(ScalarType::F32, 1000), y(ScalarType::F32, 1000);
  Options det;
  det.deterministic = true;
  Stats s = launch(k, 1000, {rt::Arg::of(x), rt::Arg::of(y), rt::Arg::f32(1)}, det);
  EXPECT_EQ(s.workgroups, 16u);
  EXPECT_EQ(s.invocations, 16u * 64u);
  EXPECT_EQ(s.threads, 1u);
  EXPECT_GE(s.wall_ms, 0.0);
  EXPECT_TRUE(s.shadow.empty());
}

// Workers run with the default MXCSR: a caller with flush-to-zero and round-down set still gets
// IEEE results (subnormals kept, nearest-even).
TEST(Semantics, CallerMxcsrDoesNotLeakIn) {
  auto k = kernel("tiny", {64}, {"a", "b", "out"}, [](In<float> a, In<float> b, Out<float> out) {
    Var i(global_id(0), "i");
    out[i] = a[i] * b[i];
  });
  std::vector<float> a(64, 1e-20f), b(64, 1e-20f); // 1e-40: subnormal
  a[1] = 1.0f + 0x1p-23f;
  b[1] = 1.0f + 0x1p-23f; // rounding direction matters
  std::vector<float> want(64);
  for (int i = 0; i < 64; ++i)
    want[i] = a[i] * b[i];
  auto ba = buffer(ScalarType::F32, a), bb = buffer(ScalarType::F32, b);
  for (bool deterministic : {true, false}) {
    rt::HostBuffer out(ScalarType::F32, 64);
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(saved | 0x8040 | 0x2000); // FTZ, DAZ, round down
    Options o;
    o.deterministic = deterministic;
    launch(k, 64, {rt::Arg::of(ba), rt::Arg::of(bb), rt::Arg::of(out)}, o);
    const unsigned after = _mm_getcsr();
    _mm_setcsr(saved);
    EXPECT_EQ(after, saved | 0x8040 | 0x2000) << "the caller's MXCSR is restored";
    EXPECT_TRUE(out == buffer(ScalarType::F32, want));
  }
}

} // namespace
