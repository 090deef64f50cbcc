// The input generators: the tie-stressing sets really sit on ties (checked exactly), show double
// rounding about half the time while random inputs almost never do, and the plain fills do what
// they say.
#include "examples.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/dsl.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/formats.hpp"
#include "halfway/numerics/ulp.hpp"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <set>
#include <tuple>

using namespace halfway;
using namespace halfway::diff::inputs;
using ir::ScalarType;

namespace {

float at(const rt::HostBuffer& b, size_t i) {
  return std::bit_cast<float>(static_cast<uint32_t>(b.get_bits(i)));
}

// How many elements round differently in two steps than in one.
size_t differing(const MulAdd& m, ScalarType target) {
  size_t n = 0;
  for (size_t i = 0; i < m.a.size(); ++i) {
    float a = at(m.a, i), b = at(m.b, i), c = at(m.c, i);
    if (two_step(target, a, b, c) != single_rounding(target, a, b, c))
      ++n;
  }
  return n;
}

// Whether v is a rounding tie of the target: halfway between two consecutive values.
bool is_tie(ScalarType target, float v) {
  num::Format t = target == ScalarType::F16 ? num::Format::F16 : num::Format::BF16;
  uint64_t lo = num::from_double(t, v, num::Rounding::Down),
           hi = num::from_double(t, v, num::Rounding::Up);
  if (lo == hi)
    return false;
  double l = num::to_double(t, lo), h = num::to_double(t, hi);
  if (std::isinf(h))
    h = l + num::ulp_of(t, l);
  if (std::isinf(l))
    l = h - num::ulp_of(t, h);
  return v == l / 2 + h / 2;
}

class Ties : public ::testing::TestWithParam<ScalarType> {};

TEST_P(Ties, ProductTiesSitOnTiesAndDifferAboutHalfTheTime) {
  const size_t n = 20000;
  MulAdd m = product_ties(n, GetParam(), 7);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(near_tie(GetParam(), at(m.a, i), at(m.b, i), at(m.c, i))) << i;
    ASSERT_EQ(m.c.get_bits(i), 0u);
  }
  const double rate = static_cast<double>(differing(m, GetParam())) / n;
  RecordProperty("double_rounding_rate", std::to_string(rate));
  std::printf("product ties (%s): %.4f of %zu differ\n", ir::name(GetParam()).data(), rate, n);
  EXPECT_GT(rate, 0.4);
  EXPECT_LT(rate, 0.6);
}

TEST_P(Ties, MulAddTiesSitOnTiesAndDifferAboutHalfTheTime) {
  const size_t n = 20000;
  MulAdd m = mul_add_ties(n, GetParam(), 8);
  for (size_t i = 0; i < n; ++i) {
    float a = at(m.a, i), b = at(m.b, i), c = at(m.c, i);
    ASSERT_TRUE(near_tie(GetParam(), a, b, c)) << i;
    // RN32(a*b) + c is exactly the tie: the product's rounding alone decides
    const float p = a * b;
    ASSERT_EQ(static_cast<double>(p) + c, static_cast<double>(p + c)) << i;
    ASSERT_TRUE(is_tie(GetParam(), p + c)) << i;
  }
  const double rate = static_cast<double>(differing(m, GetParam())) / n;
  std::printf("multiply-add ties (%s): %.4f of %zu differ\n", ir::name(GetParam()).data(), rate, n);
  EXPECT_GT(rate, 0.4);
  EXPECT_LT(rate, 0.6);
}

TEST_P(Ties, TieStressMixesTheFamilies) {
  const size_t n = 10000;
  MulAdd m = tie_stress(n, GetParam(), 9);
  size_t ties = 0;
  for (size_t i = 0; i < n; ++i)
    ties += near_tie(GetParam(), at(m.a, i), at(m.b, i), at(m.c, i));
  EXPECT_GE(ties, n * 8 / 10); // 80% are built on ties; some edges happen to be too
  const double rate = static_cast<double>(differing(m, GetParam())) / n;
  std::printf("tie stress (%s): %.4f of %zu differ\n", ir::name(GetParam()).data(), rate, n);
  EXPECT_GT(rate, 0.35);
}

// The families are searched on two threads: the mix must still be the families' own sequences,
// interleaved in a fixed pattern (0-3 multiply-add ties, 4-7 product ties, 8 cancellation, 9
// edges), the same for the same seed.
TEST_P(Ties, TieStressIsTheFamiliesInterleaved) {
  const size_t n = 4000;
  MulAdd m = tie_stress(n, GetParam(), 17);
  MulAdd again = tie_stress(n, GetParam(), 17);
  MulAdd mul_adds = mul_add_ties(n * 4 / 10, GetParam(), 17);
  MulAdd products = product_ties(n * 4 / 10, GetParam(), 18);
  MulAdd cancels = cancellation(n / 10, GetParam(), 19);
  for (size_t i = 0; i < n; ++i) {
    const size_t k = i / 10 * 4 + i % 10 % 4;
    const MulAdd* from = i % 10 < 4 ? &mul_adds : i % 10 < 8 ? &products : &cancels;
    const size_t j = i % 10 < 8 ? k : i / 10;
    for (auto [x, y, z] :
         {std::tuple{&m.a, &again.a, &from->a}, std::tuple{&m.b, &again.b, &from->b},
          std::tuple{&m.c, &again.c, &from->c}}) {
      ASSERT_EQ(x->get_bits(i), y->get_bits(i)) << i;
      if (i % 10 != 9) {
        ASSERT_EQ(x->get_bits(i), z->get_bits(j)) << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, Ties, ::testing::Values(ScalarType::F16, ScalarType::BF16),
                         [](const auto& info) { return std::string(ir::name(info.param)); });

TEST(Inputs, RandomProductsRarelyShowDoubleRounding) {
  // Products of random f32 values narrowed to f16 (products well inside f16's normal range).
  const size_t n = 4'000'000;
  rt::HostBuffer a(ScalarType::F32, n), b(ScalarType::F32, n);
  fill_random(a, 11, {-3, 3});
  fill_random(b, 12, {-3, 3});
  size_t diff = 0;
  for (size_t i = 0; i < n; ++i) {
    float x = at(a, i), y = at(b, i);
    uint64_t two = num::f32_to_f16(num::f32_bits(x * y));
    uint64_t one = num::from_double(num::Format::F16, static_cast<double>(x) * y); // exact product
    diff += two != one;
  }
  std::printf("random products: %zu of %zu differ (1 in %.0f)\n", diff, n,
              diff ? static_cast<double>(n) / diff : 0.0);
  // Theory: RN32(a*b) lands on an f16 tie once in 2^13, on the odd side half of those: 1/16384.
  EXPECT_GT(diff, n / 40000);
  EXPECT_LT(diff, n / 8000);
}

TEST(Inputs, CancellationMovesMoreThanOneUlp) {
  const size_t n = 4000;
  MulAdd m = cancellation(n, ScalarType::F16, 3);
  size_t beyond = 0;
  for (size_t i = 0; i < n; ++i) {
    float a = at(m.a, i), b = at(m.b, i), c = at(m.c, i);
    beyond += num::ulp_distance(num::Format::F16, two_step(ScalarType::F16, a, b, c),
                                single_rounding(ScalarType::F16, a, b, c)) > 1;
  }
  EXPECT_GT(beyond, n / 20) << "the |a*b| * 2^-24 term must matter on these";
}

TEST(Inputs, EdgeTriplesCoverSignedZerosNanAndInfinity) {
  MulAdd m = edge_triples(ScalarType::F16);
  bool nan = false, inf = false, neg_zero_lost = false;
  for (size_t i = 0; i < m.a.size(); ++i) {
    float a = at(m.a, i), b = at(m.b, i), c = at(m.c, i);
    uint64_t two = two_step(ScalarType::F16, a, b, c),
             one = single_rounding(ScalarType::F16, a, b, c);
    nan |= num::is_nan(num::Format::F16, two);
    inf |= num::is_inf(num::Format::F16, two);
    neg_zero_lost |= two == 0x0000 && one == 0x8000; // an f32 product that underflowed to -0
  }
  EXPECT_TRUE(nan);
  EXPECT_TRUE(inf);
  EXPECT_TRUE(neg_zero_lost);
}

TEST(Inputs, SeedsAreDeterministic) {
  rt::HostBuffer x(ScalarType::F32, 100), y(ScalarType::F32, 100), z(ScalarType::F32, 100);
  fill_random(x, 5);
  fill_random(y, 5);
  fill_random(z, 6);
  EXPECT_TRUE(x == y);
  EXPECT_FALSE(x == z);
  MulAdd p = product_ties(50, ScalarType::F16, 1), q = product_ties(50, ScalarType::F16, 1);
  EXPECT_TRUE(p.a == q.a && p.b == q.b);
}

TEST(Inputs, RandomStaysInItsBinades) {
  rt::HostBuffer x(ScalarType::F16, 5000);
  fill_random(x, 2, {-20, -15}); // f16 subnormal binades included
  bool subnormal = false;
  for (size_t i = 0; i < x.size(); ++i) {
    double v = std::fabs(num::to_double(num::Format::F16, x.get_bits(i)));
    ASSERT_GE(v, 0x1p-20) << i;
    ASSERT_LT(v, 0x1p-14) << i;
    subnormal |= v < 0x1p-14;
  }
  EXPECT_TRUE(subnormal);
  rt::HostBuffer e(ScalarType::E4M3, 1000);
  fill_random(e, 3, {0, 20}); // clamped; never E4M3's NaN
  for (size_t i = 0; i < e.size(); ++i)
    ASSERT_FALSE(num::is_nan(num::Format::E4M3, e.get_bits(i)));
}

TEST(Inputs, PlainFills) {
  rt::HostBuffer f(ScalarType::F32, 5), i(ScalarType::I32, 5);
  fill_iota(f, 1, 0.5);
  fill_iota(i, -2);
  EXPECT_EQ(at(f, 4), 3.0f);
  EXPECT_EQ(static_cast<int32_t>(i.get_bits(0)), -2);
  EXPECT_EQ(static_cast<int32_t>(i.get_bits(4)), 2);
  fill_zeros(f, true);
  EXPECT_EQ(f.get_bits(3), 0x80000000u);
  std::vector<uint64_t> cycle = {1, 2};
  fill_cycle(i, cycle);
  EXPECT_EQ(i.get_bits(2), 1u);
  EXPECT_EQ(i.get_bits(3), 2u);
}

TEST(Inputs, SpecialAndBoundaryValues) {
  std::vector<uint64_t> s = special_bits(ScalarType::F16);
  std::set<uint64_t> set(s.begin(), s.end());
  for (uint64_t v : {0x0000, 0x8000, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00})
    EXPECT_TRUE(set.count(v)) << std::hex << v;
  std::vector<uint64_t> b = boundary_bits(ScalarType::F32, ScalarType::F16);
  std::set<uint64_t> edges(b.begin(), b.end());
  for (float v : {65520.0f, -65520.0f, 0x1p-25f, 0x1p-24f, 0x1p-14f, 65504.0f})
    EXPECT_TRUE(edges.count(num::f32_bits(v))) << v;
  EXPECT_TRUE(edges.count(num::f32_bits(std::nextafter(65520.0f, 0.0f))));
}

TEST(Inputs, MakeInputsForAKernel) {
  auto k = examples::narrow_f16();
  KernelInputs in = make_inputs(k.kernel(), 1000, Kind::Ties, 4);
  ASSERT_EQ(in.args.size(), 4u);
  EXPECT_EQ(in.grid.groups[0], 16u); // 64 lanes per workgroup
  EXPECT_EQ(in.args[0].buffer->size(), 1000u);
  size_t ties = 0;
  for (size_t i = 0; i < 1000; ++i) {
    ties += near_tie(ScalarType::F16, at(*in.args[0].buffer, i), at(*in.args[1].buffer, i),
                     at(*in.args[2].buffer, i));
    ASSERT_EQ(in.args[3].buffer->get_bits(i), 0u);
  }
  EXPECT_GE(ties, 800u);
  KernelInputs moved = std::move(in);
  EXPECT_EQ(moved.args[3].buffer, &moved.buffers[3]);

  auto saxpy = examples::saxpy();
  KernelInputs s = make_inputs(saxpy.kernel(), 10, Kind::Iota, 0, {{"a", num::f32_bits(2.0f)}});
  EXPECT_EQ(s.args[2].scalar, num::f32_bits(2.0f));
  EXPECT_EQ(at(*s.args[1].buffer, 9), 9.0f);
  EXPECT_THROW(make_inputs(saxpy.kernel(), 10, Kind::Iota, 0, {{"x", 0}}), Error);
  EXPECT_THROW(make_inputs(saxpy.kernel(), 10, Kind::Iota, 0, {{"alpha", 0}}), Error);
  EXPECT_EQ(parse_kind("ties"), Kind::Ties);
  EXPECT_EQ(parse_kind("bogus"), std::nullopt);
}

} // namespace

// --- Inputs that follow how the kernel uses a buffer -------------------------------------------

namespace {

// y[i] = x[idx[i]]: idx is an index buffer.
Kernel gather() {
  return kernel("gather", {64}, {"idx", "x", "y"}, [](In<uint32_t> idx, In<float> x, Out<float> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] { y[i] = x[idx[i]]; });
  });
}

} // namespace

TEST(InputsUse, PackedFp8WeightsAreFiniteForEveryKind) {
  for (const ir::VerifiedKernel& k : {examples::gemv_fp8<e4m3>(), examples::gemv_fp8<e5m2>()}) {
    const uint32_t w = k->find_param("w");
    ASSERT_NE(w, ir::kNone);
    BufferUse use = buffer_use(k.kernel(), w);
    ASSERT_TRUE(use.packed.has_value()) << k.name();
    const num::Format f = *halfway::diff::float_format(*use.packed);
    for (auto kind : {Kind::Random, Kind::Ties, Kind::Edges}) {
      auto in = make_inputs(k.kernel(), 4096, kind, 7, {{"cols", 4}});
      const rt::HostBuffer& words = *in.args[w].buffer;
      size_t edges = 0;
      for (size_t i = 0; i < words.size(); ++i)
        for (unsigned lane = 0; lane < 4; ++lane) {
          uint64_t code = (words.get_bits(i) >> (8 * lane)) & 0xff;
          ASSERT_TRUE(num::is_finite(f, code)) << k.name() << " word " << i << " lane " << lane;
          edges += num::is_zero(f, code) || num::is_subnormal(f, code) ||
                   code == num::info(f).max_finite;
        }
      if (kind == Kind::Edges) {
        EXPECT_GT(edges, words.size()) << "edges include zeros, subnormals and the largest value";
      }
    }
  }
}

TEST(InputsUse, TheGemvOfGeneratedWeightsIsConclusive) {
  // With uniform bits, one E4M3 code in 128 is NaN and a 4096-wide row is NaN almost surely; with
  // packed finite weights every row is a number.
  auto k = examples::gemv_fp8<e4m3>();
  auto in = make_inputs(k.kernel(), 256, Kind::Random, 3, {{"cols", 1024}});
  rt::HostBuffer w(ScalarType::U32, 256 * 256);
  fill_packed(w, ScalarType::E4M3, Kind::Random, 3);
  in.args[0] = rt::Arg::of(w);
  rt::HostBuffer& x = *in.args[1].buffer;
  x = rt::HostBuffer(ScalarType::F32, 1024);
  fill_random(x, 4);
  in.args[1] = rt::Arg::of(x);
  interp::run(k, in.grid, in.args);
  const rt::HostBuffer& y = *in.args[2].buffer;
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_FALSE(std::isnan(std::bit_cast<float>(static_cast<uint32_t>(y.get_bits(i))))) << i;
}

TEST(InputsUse, IndexBuffersGetInRangeIndices) {
  Kernel k = gather();
  BufferUse use = buffer_use(k.kernel(), 0);
  ASSERT_EQ(use.index_of.size(), 1u);
  EXPECT_EQ(use.index_of[0].second, 1u); // it indexes x
  EXPECT_TRUE(buffer_use(k.kernel(), 1).index_of.empty());
  for (auto kind : {Kind::Random, Kind::Ties, Kind::Edges}) {
    auto in = make_inputs(k.kernel(), 1000, kind, 9);
    const rt::HostBuffer& idx = *in.args[0].buffer;
    for (size_t i = 0; i < idx.size(); ++i)
      ASSERT_LT(idx.get_bits(i), 1000u) << i;
    EXPECT_NO_THROW(interp::run(k, in.grid, in.args));
  }
}

TEST(InputsUse, IndicesFlowThroughLocals) {
  Kernel k = kernel("gather_local", {64}, {"idx", "x", "y"},
                    [](In<uint32_t> idx, In<float> x, Out<float> y) {
                      Var i(global_id(0), "i");
                      If(i < y.size(), [&] {
                        Var j(idx[i], "j");
                        y[i] = x[j];
                      });
                    });
  EXPECT_EQ(buffer_use(k.kernel(), 0).index_of.size(), 1u);
}
