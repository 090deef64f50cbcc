// Every example kernel's outputs against expected values computed here in plain C++ (built with
// -ffp-contract=off, like the whole project) and host _Float16 casts, never through numerics.
#include "examples.hpp"
#include "gemv_fp8_rows.hpp"
#include "helpers.hpp"

using namespace halfway;
using namespace halfway::interp;
using namespace halfway::interp::test;
using ir::ScalarType;

namespace {

// Bit-exact f32 outputs; an expected NaN must come out as the canonical NaN.
void expect_f32(const std::vector<float>& want, const std::vector<float>& got) {
  ASSERT_EQ(want.size(), got.size());
  size_t wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    uint32_t w = std::isnan(want[i]) ? kCanonicalNanF32 : bits(want[i]);
    if (w != bits(got[i]) && ++wrong <= 5)
      ADD_FAILURE() << "element " << i << ": want " << want[i] << " (0x" << std::hex << w
                    << "), got " << got[i] << " (0x" << bits(got[i]) << ")" << std::dec;
  }
  EXPECT_EQ(wrong, 0u);
}

TEST(Examples, Saxpy) {
  std::mt19937 rng(1);
  const size_t n = 10000; // not a multiple of the workgroup: the bounds check matters
  std::vector<float> x = random_floats(rng, n), y = random_floats(rng, n);
  const float a = 1.75f;
  std::vector<float> want(n);
  for (size_t i = 0; i < n; ++i) {
    float p = a * x[i];
    want[i] = p + y[i];
  }
  auto bx = buffer(ScalarType::F32, x), by = buffer(ScalarType::F32, y);
  launch(examples::saxpy(), n, {rt::Arg::of(bx), rt::Arg::of(by), rt::Arg::f32(a)});
  expect_f32(want, contents<float>(by));
  EXPECT_TRUE(bx == buffer(ScalarType::F32, x)) << "x is read-only";
}

template <class W> void check_linear(ScalarType wt, std::vector<W> w, auto widen) {
  std::mt19937 rng(2);
  const size_t n = w.size();
  std::vector<float> x = random_floats(rng, n);
  const float b = -0.375f;
  std::vector<float> want(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<W, double>) {
      double p = static_cast<double>(x[i]) * w[i];
      want[i] = static_cast<float>(p + static_cast<double>(b));
    } else {
      float p = x[i] * widen(w[i]);
      want[i] = p + b;
    }
  }
  auto bx = buffer(ScalarType::F32, x), bw = buffer(wt, w), by = rt::HostBuffer(ScalarType::F32, n);
  ir::VerifiedKernel k = wt == ScalarType::F32    ? examples::linear<float>()
                         : wt == ScalarType::F16  ? examples::linear<f16>()
                         : wt == ScalarType::BF16 ? examples::linear<bf16>()
                                                  : examples::linear<double>();
  launch(k, n, {rt::Arg::of(bx), rt::Arg::of(bw), rt::Arg::of(by), rt::Arg::f32(b)});
  expect_f32(want, contents<float>(by));
}

TEST(Examples, LinearF32) {
  std::mt19937 rng(3);
  check_linear<float>(ScalarType::F32, random_floats(rng, 3000), [](float v) { return v; });
}

TEST(Examples, LinearF16) {
  std::vector<uint16_t> w(1 << 16);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<uint16_t>(i); // every pattern
  check_linear<uint16_t>(ScalarType::F16, w, widen16);
}

TEST(Examples, LinearBf16) {
  std::vector<uint16_t> w(1 << 16);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<uint16_t>(i);
  check_linear<uint16_t>(ScalarType::BF16, w, widen_bf16);
}

TEST(Examples, LinearF64) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> d(-3, 3);
  std::vector<double> w(3000);
  for (double& v : w)
    v = d(rng);
  w[0] = 1e300; // overflows f32: +-inf
  w[1] = 1e-300;
  check_linear<double>(ScalarType::F64, w, nullptr);
}

TEST(Examples, NarrowF16TwoStep) {
  // Tie-stressing: a*b + c lands (in f32) exactly on an f16 rounding tie, while the exact value
  // is off the tie by a*b's rounding error.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(0.5f, 4.0f);
  const size_t n = 20000;
  std::vector<float> a(n), b(n), c(n);
  std::vector<uint16_t> want(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = d(rng);
    b[i] = d(rng);
    float p = a[i] * b[i];
    float h = widen16(round16(p));
    float ulp = std::ldexp(1.0f, std::ilogb(h) - 10);
    float tie = h + (rng() & 1 ? ulp : -ulp) / 2;
    c[i] = tie - p; // exact (Sterbenz)
    float s = p + c[i];
    want[i] = round16(s);
  }
  auto ba = buffer(ScalarType::F32, a), bb = buffer(ScalarType::F32, b),
       bc = buffer(ScalarType::F32, c);
  rt::HostBuffer out(ScalarType::F16, n);
  launch(examples::narrow_f16(), n,
         {rt::Arg::of(ba), rt::Arg::of(bb), rt::Arg::of(bc), rt::Arg::of(out)});
  EXPECT_EQ(contents<uint16_t>(out), want);
}

TEST(Examples, ReduceSum) {
  std::mt19937 rng(6);
  const size_t n = 256 * 7 + 100; // the last workgroup is partly past the end
  std::vector<float> x = random_floats(rng, n, -100, 100);
  for (float& v : x)
    if (!std::isfinite(v))
      v = 1.5f;
  const size_t groups = (n + 255) / 256;
  std::vector<float> want(groups);
  for (size_t g = 0; g < groups; ++g) {
    float tile[256];
    for (size_t l = 0; l < 256; ++l)
      tile[l] = g * 256 + l < n ? x[g * 256 + l] : 0.0f;
    for (size_t stride = 128; stride > 0; stride >>= 1)
      for (size_t l = 0; l < stride; ++l)
        tile[l] = tile[l] + tile[l + stride];
    want[g] = tile[0];
  }
  auto bx = buffer(ScalarType::F32, x);
  rt::HostBuffer out(ScalarType::F32, groups);
  launch(examples::reduce_sum(), groups * 256, {rt::Arg::of(bx), rt::Arg::of(out)});
  expect_f32(want, contents<float>(out));
}

// Independent fp8 decoding: E4M3FN by its fields, E5M2 as the top byte of an f16.
float decode_e4m3(uint8_t v) {
  const int e = (v >> 3) & 15, m = v & 7;
  float mag = (v & 0x7f) == 0x7f ? NAN
              : e == 0           ? std::ldexp(static_cast<float>(m), -9)
                                 : std::ldexp(1.0f + m / 8.0f, e - 7);
  return v & 0x80 ? -mag : mag;
}
float decode_e5m2(uint8_t v) {
  return widen16(static_cast<uint16_t>(v << 8));
}

void check_gemv(bool is_e4m3) {
  std::mt19937 rng(7);
  const uint32_t rows = 150, cols = 64;
  std::vector<uint32_t> w(rows * cols / 4);
  for (uint32_t& v : w)
    v = static_cast<uint32_t>(rng());
  std::vector<float> x = random_floats(rng, cols, -2, 2);
  for (float& v : x)
    if (!std::isfinite(v))
      v = 0.25f;
  std::vector<float> want(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    float acc = 0.0f;
    for (uint32_t j = 0; j < cols / 4; ++j)
      for (uint32_t lane = 0; lane < 4; ++lane) {
        uint8_t byte = static_cast<uint8_t>(w[r * cols / 4 + j] >> (8 * lane));
        float p = (is_e4m3 ? decode_e4m3(byte) : decode_e5m2(byte)) * x[j * 4 + lane];
        acc = acc + p;
      }
    want[r] = acc;
  }
  auto bw = buffer(ScalarType::U32, w), bx = buffer(ScalarType::F32, x);
  rt::HostBuffer y(ScalarType::F32, rows);
  launch(is_e4m3 ? examples::gemv_fp8_rows<e4m3>() : examples::gemv_fp8_rows<e5m2>(), rows,
         {rt::Arg::of(bw), rt::Arg::of(bx), rt::Arg::of(y), rt::Arg::u32(cols)});
  expect_f32(want, contents<float>(y));
}

TEST(Examples, GemvE4m3) {
  check_gemv(true);
}
TEST(Examples, GemvE5m2) {
  check_gemv(false);
}

// The basic examples run with zero-filled buffers of 1024 elements and every scalar 4 (the
// workloads need buffers that fit their shapes: tests/examples/workloads_test.cpp).
TEST(Examples, EveryBasicExampleRuns) {
  for (const ir::VerifiedKernel& k : examples::basic()) {
    std::vector<rt::HostBuffer> buffers;
    buffers.reserve(k->params.size());
    std::vector<rt::Arg> args;
    for (const ir::Param& p : k->params) {
      if (p.is_buffer()) {
        buffers.emplace_back(p.type, 1024);
        args.push_back(rt::Arg::of(buffers.back()));
      } else {
        args.push_back(rt::Arg::bits(4));
      }
    }
    EXPECT_NO_THROW(launch(k, 1024, args)) << k.name();
  }
}

} // namespace
