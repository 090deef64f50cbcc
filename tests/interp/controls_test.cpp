// Float controls: a flushing device's behaviour emulated bit for bit. Flushed formats see
// subnormal operands of float ops as zeros and have subnormal results replaced by zeros; moves of
// bits and conversions are untouched; each format follows its own flag (bf16 follows f32's).
#include "helpers.hpp"

#include <bit>
#include <xmmintrin.h>

using namespace halfway;
using namespace halfway::interp;
using namespace halfway::interp::test;
using ir::ScalarType;

namespace {

struct F32Results {
  std::vector<uint32_t> f;
  std::vector<uint32_t> z; // a == 0
};

F32Results run_f32(const std::vector<float>& a, const std::vector<float>& b,
                   const num::FloatControls& c) {
  auto k = kernel("ops32", {64}, {"a", "b", "out", "z"},
                  [](In<float> a, In<float> b, Out<float> out, Out<uint32_t> z) {
                    Var i(global_id(0), "i");
                    If(i < a.size(), [&] {
                      out[i * 5u] = a[i] * b[i];
                      out[i * 5u + 1u] = a[i] + b[i];
                      out[i * 5u + 2u] = min(a[i], b[i]);
                      out[i * 5u + 3u] = select(a[i] < b[i], a[i], b[i]); // a move: never flushed
                      out[i * 5u + 4u] = sqrt(a[i]);
                      z[i] = select(a[i] == 0.0f, Value<uint32_t>(1u), Value<uint32_t>(0u));
                    });
                  });
  auto ba = buffer(ScalarType::F32, a), bb = buffer(ScalarType::F32, b);
  rt::HostBuffer out(ScalarType::F32, a.size() * 5), z(ScalarType::U32, a.size());
  Options o;
  o.controls = c;
  launch(k, a.size(), {rt::Arg::of(ba), rt::Arg::of(bb), rt::Arg::of(out), rt::Arg::of(z)}, o);
  return {contents<uint32_t>(out), contents<uint32_t>(z)};
}

TEST(FloatControls, FlushF32OperandsAndResults) {
  const float sub = 1e-40f, neg_sub = -3e-41f;
  std::vector<float> a = {sub, neg_sub, 1e-20f, sub, 4e-40f};
  std::vector<float> b = {2.0f, 2.0f, 1e-20f, 1e-37f, 1.0f};
  F32Results keep = run_f32(a, b, {});
  num::FloatControls flush;
  flush.flush_f32 = true;
  F32Results flushed = run_f32(a, b, flush);
  // Preserved (the default): IEEE gradual underflow.
  EXPECT_EQ(keep.f[0], bits(sub * 2.0f));
  EXPECT_EQ(keep.f[5], bits(neg_sub * 2.0f));
  EXPECT_EQ(keep.f[10], bits(1e-20f * 1e-20f));
  EXPECT_NE(keep.f[10], 0u) << "1e-40 is a subnormal result";
  EXPECT_EQ(keep.z[0], 0u);
  // Flushed: operands and results.
  EXPECT_EQ(flushed.f[0], bits(0.0f)) << "subnormal * 2: the operand is zero";
  EXPECT_EQ(flushed.f[5], bits(-0.0f)) << "flushing keeps the sign";
  EXPECT_EQ(flushed.f[10], bits(0.0f)) << "normal * normal = subnormal: the result is zero";
  EXPECT_EQ(flushed.f[16], bits(1e-37f)) << "subnormal + 1e-37 = 1e-37";
  EXPECT_EQ(flushed.f[17], bits(0.0f)) << "min(subnormal, 1e-37) = min(0, 1e-37)";
  EXPECT_EQ(flushed.f[18], bits(sub)) << "select moves bits: not flushed";
  EXPECT_EQ(flushed.f[24], bits(0.0f)) << "sqrt(subnormal) sees 0";
  EXPECT_EQ(keep.f[24], bits(std::sqrt(4e-40f)));
  EXPECT_EQ(flushed.z[0], 1u) << "a subnormal compares equal to zero";
  EXPECT_EQ(flushed.z[2], 0u);
}

TEST(FloatControls, EachFormatHasItsOwnFlag) {
  auto k = kernel("mixed", {64}, {"h", "bh", "d", "out16", "outb", "out64", "wide"},
                  [](In<f16> h, In<bf16> bh, In<double> d, Out<f16> out16, Out<bf16> outb,
                     Out<double> out64, Out<float> wide) {
                    Var i(global_id(0), "i");
                    out16[i] = h[i] * h[i + 1u];
                    outb[i] = bh[i] * bh[i + 1u];
                    out64[i] = d[i] * d[i + 1u];
                    wide[i] = to_f32(h[i]); // a conversion: never flushed
                  });
  // Lane 0 multiplies a subnormal by 1.0 in each format.
  std::vector<uint16_t> h(65, 0x3c00), bh(65, 0x3f80);
  std::vector<double> d(65, 1.0);
  h[0] = 0x0010;  // f16 subnormal 2^-20
  bh[0] = 0x0010; // bf16 subnormal
  d[0] = 1e-310;  // f64 subnormal
  auto run_with = [&](num::FloatControls c) {
    auto bh16 = buffer(ScalarType::F16, h), bbf = buffer(ScalarType::BF16, bh),
         bd = buffer(ScalarType::F64, d);
    rt::HostBuffer o16(ScalarType::F16, 64), ob(ScalarType::BF16, 64), o64(ScalarType::F64, 64),
        w(ScalarType::F32, 64);
    Options o;
    o.controls = c;
    launch(k, 64,
           {rt::Arg::of(bh16), rt::Arg::of(bbf), rt::Arg::of(bd), rt::Arg::of(o16), rt::Arg::of(ob),
            rt::Arg::of(o64), rt::Arg::of(w)},
           o);
    return std::make_tuple(contents<uint16_t>(o16)[0], contents<uint16_t>(ob)[0],
                           contents<double>(o64)[0], contents<float>(w)[0]);
  };
  auto [p16, pb, p64, pw] = run_with({});
  EXPECT_EQ(p16, 0x0010);
  EXPECT_EQ(pb, 0x0010);
  EXPECT_EQ(p64, 1e-310);
  EXPECT_EQ(pw, std::ldexp(1.0f, -20));
  num::FloatControls f16_only;
  f16_only.flush_f16 = true;
  auto [a16, ab, a64, aw] = run_with(f16_only);
  EXPECT_EQ(a16, 0x0000);
  EXPECT_EQ(ab, 0x0010) << "bf16 follows flush_f32";
  EXPECT_EQ(a64, 1e-310);
  EXPECT_EQ(aw, std::ldexp(1.0f, -20)) << "conversions do not flush";
  num::FloatControls f32_f64;
  f32_f64.flush_f32 = true;
  f32_f64.flush_f64 = true;
  auto [b16, bb, b64, bw] = run_with(f32_f64);
  EXPECT_EQ(b16, 0x0010);
  EXPECT_EQ(bb, 0x0000);
  EXPECT_EQ(b64, 0.0);
  (void)bw;
}

// The interval shadow's start: every element of a written buffer is the point of its contents,
// read with integer code, whatever the caller's MXCSR says (a caller with DAZ on once turned an
// f32 subnormal's starting point into 0).
TEST(FloatControls, IntervalsStartFromTheBitsUnderACallersDaz) {
  auto k = kernel("untouched", {64}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Var i(global_id(0), "i");
    If(i == 100000u, [&] { y[i] = x[i]; }); // never true: y keeps its contents
  });
  const std::vector<float> values = {std::bit_cast<float>(0x00000001u),
                                     std::bit_cast<float>(0x807fffffu), 1.5f, -0.0f};
  auto x = buffer(ScalarType::F32, std::vector<uint32_t>(values.size(), 0));
  rt::HostBuffer y(ScalarType::F32, values.size());
  for (size_t e = 0; e < values.size(); ++e)
    y.set_bits(e, std::bit_cast<uint32_t>(values[e]));
  Options o;
  o.intervals = true;
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040); // FTZ and DAZ on the calling thread
  const Stats s =
      run(k, rt::Grid{{1, 1, 1}}, std::vector<rt::Arg>{rt::Arg::of(x), rt::Arg::of(y)}, o);
  _mm_setcsr(saved);
  ASSERT_EQ(s.intervals.size(), 2u);
  ASSERT_EQ(s.intervals[1].size(), values.size());
  for (size_t e = 0; e < values.size(); ++e) {
    const ValueInterval& iv = s.intervals[1][e];
    EXPECT_EQ(std::bit_cast<uint64_t>(iv.lo), std::bit_cast<uint64_t>(double{values[e]}))
        << "element " << e;
    EXPECT_EQ(std::bit_cast<uint64_t>(iv.hi), std::bit_cast<uint64_t>(double{values[e]}))
        << "element " << e;
  }
}

} // namespace
