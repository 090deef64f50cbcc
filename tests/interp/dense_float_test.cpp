// The interpreter's whole-batch float loops (eval_float.cpp: f32 and f64 on the host's IEEE
// instructions, f16 and bf16 widened to f32 and rounded once back) against numerics' scalar
// functions, which the general lane-by-lane path calls: +, -, *, /, sqrt, min, max, clamp and (f32,
// f64) fma, on every pair and triple of edge values (NaNs with payloads and signs, zeros,
// infinities, subnormals, the largest finite values, values whose results tie) and on random bit
// patterns. A batch mixes all of them, so one lane's NaN or subnormal cannot hide another's.
#include "halfway/ir/format.hpp"
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/fast_math.hpp"
#include "halfway/numerics/math.hpp"
#include "helpers.hpp"

using namespace halfway;
using namespace halfway::interp;
using namespace halfway::interp::test;
using ir::ScalarType;

namespace {

constexpr int kOps = 9; // per input triple: +, -, *, /, sqrt, min, max, clamp, fma

template <class T> Kernel float_ops(bool with_fma) {
  return kernel("float_ops<" + type_name<T>() + ">", {64}, {"a", "b", "c", "out"},
                [with_fma](In<T> a, In<T> b, In<T> c, Out<T> out) {
                  Var i(global_id(0), "i");
                  If(i < a.size(), [&] {
                    Var x(a[i], "x");
                    Var y(b[i], "y");
                    Var z(c[i], "z");
                    Var o(i * static_cast<uint32_t>(kOps), "o");
                    out[o] = x + y;
                    out[o + 1u] = x - y;
                    out[o + 2u] = x * y;
                    out[o + 3u] = x / y;
                    out[o + 4u] = sqrt(x);
                    out[o + 5u] = min(x, y);
                    out[o + 6u] = max(x, y);
                    out[o + 7u] = clamp(x, y, z);
                    if constexpr (std::is_floating_point_v<T>) // f16, bf16: numerics' fma
                      if (with_fma)
                        out[o + 8u] = fma(x, y, z);
                  });
                });
}

// Edge values of format f as bit patterns: both zeros, the smallest subnormals and normals, 1 and
// its neighbours, values around a tie of the sum, the largest finite values, infinities, the
// canonical NaN, a NaN with a payload and a negative signalling NaN.
std::vector<uint64_t> edges(num::Format f) {
  const num::FormatInfo& info = num::info(f);
  const uint64_t sign = info.sign_mask;
  const uint64_t one = num::from_double(f, 1.0);
  const uint64_t inf = num::from_double(f, INFINITY);
  const uint64_t max = inf - 1;
  const uint64_t min_normal = uint64_t{1} << info.man_bits;
  std::vector<uint64_t> magnitudes = {0,
                                      1,
                                      2,
                                      min_normal - 1,
                                      min_normal,
                                      min_normal + 1,
                                      one - 1,
                                      one,
                                      one + 1,
                                      num::from_double(f, 1.5),
                                      num::from_double(f, 3.0),
                                      num::from_double(f, 0.5),
                                      num::from_double(f, 1024.0),
                                      max - 1,
                                      max,
                                      inf,
                                      info.quiet_nan,
                                      info.quiet_nan | 1,
                                      inf | 1};
  std::vector<uint64_t> out;
  for (uint64_t m : magnitudes) {
    out.push_back(m);
    out.push_back(m | sign);
  }
  return out;
}

uint64_t expected(num::Format f, int op, uint64_t x, uint64_t y, uint64_t z) {
  switch (op) {
  case 0:
    return num::add(f, x, y);
  case 1:
    return num::sub(f, x, y);
  case 2:
    return num::mul(f, x, y);
  case 3:
    return num::div(f, x, y);
  case 4:
    return num::sqrt(f, x);
  case 5:
    return num::min(f, x, y);
  case 6:
    return num::max(f, x, y);
  case 7:
    return num::clamp(f, x, y, z);
  default:
    return num::fma(f, x, y, z);
  }
}

template <class T, class U> void check_format(ScalarType type, bool with_fma) {
  const num::Format f = ir::format_of(type);
  const std::vector<uint64_t> e = edges(f);
  std::vector<U> a, b, c;
  // Every pair of edge values, with a third operand cycling through them.
  for (size_t i = 0; i < e.size(); ++i)
    for (size_t j = 0; j < e.size(); ++j) {
      a.push_back(static_cast<U>(e[i]));
      b.push_back(static_cast<U>(e[j]));
      c.push_back(static_cast<U>(e[(i * 7 + j) % e.size()]));
    }
  std::mt19937_64 rng(14);
  for (int r = 0; r < 30000; ++r) {
    a.push_back(static_cast<U>(rng()));
    b.push_back(static_cast<U>(rng()));
    c.push_back(static_cast<U>(rng()));
  }
  auto k = float_ops<T>(with_fma);
  auto ba = buffer(type, a), bb = buffer(type, b), bc = buffer(type, c);
  rt::HostBuffer out(type, a.size() * kOps);
  launch(k, a.size(), {rt::Arg::of(ba), rt::Arg::of(bb), rt::Arg::of(bc), rt::Arg::of(out)});
  const std::vector<U> got = contents<U>(out);
  size_t wrong = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (int op = 0; op < (with_fma ? kOps : kOps - 1); ++op) {
      const uint64_t want = expected(f, op, a[i], b[i], c[i]);
      if (got[i * kOps + op] != want && ++wrong <= 5)
        ADD_FAILURE() << ir::name(type) << " op " << op << " on " << std::hex << uint64_t{a[i]}
                      << ", " << uint64_t{b[i]} << ", " << uint64_t{c[i]} << ": got "
                      << uint64_t{got[i * kOps + op]} << ", numerics " << want;
    }
  EXPECT_EQ(wrong, 0u) << ir::name(type);
}

TEST(DenseFloat, F32EqualsNumerics) {
  check_format<float, uint32_t>(ScalarType::F32, true);
}
TEST(DenseFloat, F64EqualsNumerics) {
  check_format<double, uint64_t>(ScalarType::F64, true);
}
TEST(DenseFloat, F16EqualsNumerics) {
  check_format<f16, uint16_t>(ScalarType::F16, false);
}
TEST(DenseFloat, BF16EqualsNumerics) {
  check_format<bf16, uint16_t>(ScalarType::BF16, false);
}

// sqrt of every f16 and bf16 pattern.
TEST(DenseFloat, HalfSqrtExhaustive) {
  for (ScalarType type : {ScalarType::F16, ScalarType::BF16}) {
    auto k = kernel("sqrt16", {64}, {"a", "out"}, [&](In<f16> a, Out<f16> out) {
      Var i(global_id(0), "i");
      If(i < a.size(), [&] { out[i] = sqrt(a[i]); });
    });
    auto kb = kernel("sqrtb16", {64}, {"a", "out"}, [&](In<bf16> a, Out<bf16> out) {
      Var i(global_id(0), "i");
      If(i < a.size(), [&] { out[i] = sqrt(a[i]); });
    });
    std::vector<uint16_t> all(65536);
    for (uint32_t v = 0; v < 65536; ++v)
      all[v] = static_cast<uint16_t>(v);
    auto in = buffer(type, all);
    rt::HostBuffer out(type, all.size());
    launch(type == ScalarType::F16 ? k : kb, all.size(), {rt::Arg::of(in), rt::Arg::of(out)});
    const std::vector<uint16_t> got = contents<uint16_t>(out);
    size_t wrong = 0;
    for (uint32_t v = 0; v < 65536; ++v)
      wrong += got[v] != num::sqrt(ir::format_of(type), v);
    EXPECT_EQ(wrong, 0u) << ir::name(type);
  }
}

// f16 and bf16 ops computed through f32 with constant operands (widened once per launch,
// Exec::fixed_wide) and a repeated operand (x * x, widened once): every pattern, against numerics.
template <class T, class U> void check_constants(ScalarType type) {
  auto k = kernel("consts", {64}, {"a", "out"}, [](In<T> a, Out<T> out) {
    Var i(global_id(0), "i");
    If(i < a.size(), [&] {
      Var x(a[i], "x");
      out[i] = min(max(x * x - Value<T>(1.0), Value<T>(0.0)), Value<T>(1.5)) +
               clamp(x, Value<T>(-2.0), Value<T>(0.25));
    });
  });
  const num::Format f = ir::format_of(type);
  std::vector<U> all(65536 + 5);
  for (size_t v = 0; v < all.size(); ++v)
    all[v] = static_cast<U>(v);
  auto in = buffer(type, all);
  rt::HostBuffer out(type, all.size());
  launch(k, all.size(), {rt::Arg::of(in), rt::Arg::of(out)});
  const std::vector<U> got = contents<U>(out);
  auto c = [&](float v) { return num::from_double(f, v); };
  size_t wrong = 0;
  for (size_t v = 0; v < all.size(); ++v) {
    const uint64_t x = all[v];
    const uint64_t left =
        num::min(f, num::max(f, num::sub(f, num::mul(f, x, x), c(1)), c(0)), c(1.5f));
    const uint64_t want = num::add(f, left, num::clamp(f, x, c(-2), c(0.25f)));
    if (got[v] != want && ++wrong <= 5)
      ADD_FAILURE() << ir::name(type) << " x = " << std::hex << x << ": got " << got[v]
                    << ", numerics " << want;
  }
  EXPECT_EQ(wrong, 0u) << ir::name(type);
}

// min, max and clamp of f16 and bf16, which compare the bits (eval_float.cpp bits_min_max): every
// pattern against every edge value (zeros of both signs, subnormals, infinities, NaNs quiet and
// signalling, with payloads and signs), as both operands, against numerics.
template <class T> void check_min_max_exhaustive(ScalarType type) {
  auto k =
      kernel("min_max16", {64}, {"a", "b", "c", "out"}, [](In<T> a, In<T> b, In<T> c, Out<T> out) {
        Var i(global_id(0), "i");
        If(i < a.size(), [&] {
          Var x(a[i], "x");
          Var y(b[i], "y");
          Var o(i * 5u, "o");
          out[o] = min(x, y);
          out[o + 1u] = max(x, y);
          out[o + 2u] = min(y, x);
          out[o + 3u] = clamp(x, y, c[i]);
          out[o + 4u] = clamp(y, x, c[i]);
        });
      });
  const num::Format f = ir::format_of(type);
  const std::vector<uint64_t> e = edges(f);
  std::vector<uint16_t> a, b, c;
  for (uint32_t v = 0; v < 65536; ++v)
    for (size_t j = 0; j < e.size(); ++j) {
      a.push_back(static_cast<uint16_t>(v));
      b.push_back(static_cast<uint16_t>(e[j]));
      c.push_back(static_cast<uint16_t>(e[(v + 3 * j) % e.size()]));
    }
  auto ba = buffer(type, a), bb = buffer(type, b), bc = buffer(type, c);
  rt::HostBuffer out(type, a.size() * 5);
  launch(k, a.size(), {rt::Arg::of(ba), rt::Arg::of(bb), rt::Arg::of(bc), rt::Arg::of(out)});
  const std::vector<uint16_t> got = contents<uint16_t>(out);
  size_t wrong = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const uint64_t want[5] = {num::min(f, a[i], b[i]), num::max(f, a[i], b[i]),
                              num::min(f, b[i], a[i]), num::clamp(f, a[i], b[i], c[i]),
                              num::clamp(f, b[i], a[i], c[i])};
    for (int op = 0; op < 5; ++op)
      if (got[i * 5 + op] != want[op] && ++wrong <= 5)
        ADD_FAILURE() << ir::name(type) << " op " << op << " on " << std::hex << a[i] << ", "
                      << b[i] << ", " << c[i] << ": got " << got[i * 5 + op] << ", numerics "
                      << want[op];
  }
  EXPECT_EQ(wrong, 0u) << ir::name(type);
}

TEST(DenseFloat, HalfMinMaxExhaustive) {
  check_min_max_exhaustive<f16>(ScalarType::F16);
  check_min_max_exhaustive<bf16>(ScalarType::BF16);
}

TEST(DenseFloat, HalfConstantsAndRepeatedOperands) {
  check_constants<f16, uint16_t>(ScalarType::F16);
  check_constants<bf16, uint16_t>(ScalarType::BF16);
}

// exp and exp2 over the batch (eval_float.cpp exp_batch): the fast path's evaluation on every lane,
// numerics for the lanes its rounding test leaves undecided. Every f16 and bf16 pattern, and f32
// edges, random patterns and inputs the test cannot decide (found with numerics' own test), in
// batches whose last one is partly inactive, against num::math lane by lane.
template <class T> Kernel exps(const std::string& name) {
  return kernel(name, {64}, {"a", "e", "e2"}, [](In<T> a, Out<T> e, Out<T> e2) {
    Var i(global_id(0), "i");
    If(i < a.size(), [&] {
      e[i] = exp(a[i]);
      e2[i] = exp2(a[i]);
    });
  });
}

template <class T, class U> void check_exps(ScalarType type, const std::vector<U>& in) {
  const num::Format f = ir::format_of(type);
  auto a = buffer(type, in);
  rt::HostBuffer e(type, in.size()), e2(type, in.size());
  launch(exps<T>("exps"), in.size(), {rt::Arg::of(a), rt::Arg::of(e), rt::Arg::of(e2)});
  const std::vector<U> got_e = contents<U>(e), got_e2 = contents<U>(e2);
  size_t wrong = 0;
  for (size_t i = 0; i < in.size(); ++i)
    for (auto [fn, got] :
         {std::pair{num::MathFn::Exp, &got_e}, std::pair{num::MathFn::Exp2, &got_e2}})
      if (const uint64_t want = num::math(fn, f, in[i]); (*got)[i] != want && ++wrong <= 5)
        ADD_FAILURE() << ir::name(type) << " " << num::math_info(fn).name << "(" << std::hex
                      << uint64_t{in[i]} << "): got " << uint64_t{(*got)[i]} << ", numerics "
                      << want;
  EXPECT_EQ(wrong, 0u) << ir::name(type);
}

TEST(DenseFloat, ExpHalfExhaustive) {
  std::vector<uint16_t> all(65536 + 37); // a partial last batch
  for (size_t v = 0; v < all.size(); ++v)
    all[v] = static_cast<uint16_t>(v);
  check_exps<f16, uint16_t>(ScalarType::F16, all);
  check_exps<bf16, uint16_t>(ScalarType::BF16, all);
}

TEST(DenseFloat, ExpF32EqualsNumerics) {
  std::vector<uint32_t> in;
  for (uint64_t e : edges(num::Format::F32))
    in.push_back(static_cast<uint32_t>(e));
  for (float v : {-104.0f, -103.99f, -87.34f, 88.72f, 89.0f, 89.01f, -151.0f, 128.0f, 129.0f})
    in.push_back(num::f32_bits(v));
  // Inputs the rounding test leaves to the general routine, for each function.
  size_t hard = 0;
  for (num::MathFn fn : {num::MathFn::Exp, num::MathFn::Exp2})
    for (uint32_t b = num::f32_bits(0.5f), found = 0; found < 3 && b < num::f32_bits(64.0f); ++b)
      if (!num::fast::decide(fn, num::Format::F32, num::f32_from_bits(b))) {
        in.push_back(b);
        ++found;
        ++hard;
      }
  ASSERT_GE(hard, 2u) << "no undecided input: the fallback lanes are untested";
  std::mt19937_64 rng(20261203);
  for (int r = 0; r < (1 << 20); ++r)
    in.push_back(static_cast<uint32_t>(rng()));
  std::uniform_real_distribution<float> range(-110.0f, 130.0f); // where the evaluation runs
  for (int r = 0; r < (1 << 20); ++r)
    in.push_back(num::f32_bits(range(rng)));
  in.resize(in.size() - in.size() % 64 + 19); // a partial last batch
  check_exps<float, uint32_t>(ScalarType::F32, in);
}

} // namespace
