// What the DSL builds: widening rules, narrowing on stores, literals, control flow, names.
#include "examples.hpp"
#include "halfway/ir/names.hpp"
#include "halfway/ir/printer.hpp"

#include <gtest/gtest.h>

using namespace halfway;

namespace {

std::string body_of(const Kernel& k) {
  std::string text = ir::print(k.kernel());
  auto first =
      text.find('\n', text.rfind("param ") == std::string::npos ? 0 : text.rfind("param "));
  return text.substr(first + 1);
}

TEST(Dsl, MixingF16AndF32WidensToF32) {
  auto k = kernel("mix", {64}, {"h", "f", "y"},
                  [](In<f16> h, In<float> f, Out<float> y) { y[0u] = h[0u] + f[0u]; });
  EXPECT_EQ(body_of(k), "  y[0:u32] = add(widen<f32>(h[0:u32]), f[0:u32]);\n}\n");
}

TEST(Dsl, F16AndBf16WidenToF32) {
  auto k = kernel("mix2", {64}, {"h", "b", "y"},
                  [](In<f16> h, In<bf16> b, Out<float> y) { y[0u] = h[0u] * b[0u]; });
  EXPECT_EQ(body_of(k), "  y[0:u32] = mul(widen<f32>(h[0:u32]), widen<f32>(b[0:u32]));\n}\n");
}

TEST(Dsl, StoringF32IntoF16IsAnExplicitNarrowingNode) {
  auto k = examples::narrow_f16();
  std::string text = ir::print(k.kernel());
  EXPECT_NE(text.find("out16[i] = narrow<f16>(add(mul(a[i], b[i]), c[i]));"), std::string::npos);
}

TEST(Dsl, F16ArithmeticStaysF16) {
  auto k = kernel("h", {64}, {"a", "y"}, [](In<f16> a, Out<f16> y) { y[0u] = a[0u] * a[1u]; });
  EXPECT_EQ(body_of(k), "  y[0:u32] = mul(a[0:u32], a[1:u32]);\n}\n");
}

TEST(Dsl, LiteralsTakeTheOtherOperandsType) {
  auto k = kernel("lit", {64}, {"a", "y"}, [](In<f16> a, Out<f16> y) { y[0u] = a[0u] * 0.5; });
  EXPECT_EQ(body_of(k), "  y[0:u32] = mul(a[0:u32], 0.5:f16);\n}\n");
}

TEST(Dsl, InexactLiteralsRoundToNearestEvenLikeACast) {
  auto k = kernel("lit", {64}, {"a", "y"}, [](In<f16> a, Out<f16> y) { y[0u] = a[0u] * 0.1; });
  // (_Float16)0.1 = 0x2e66 = 0.0999755859375, printed as the shortest float that reads back.
  EXPECT_EQ(body_of(k), "  y[0:u32] = mul(a[0:u32], 0.099975586:f16);\n}\n");
  auto b = kernel("litb", {64}, {"a", "y"}, [](In<bf16> a, Out<bf16> y) { y[0u] = a[0u] * 0.1; });
  EXPECT_EQ(body_of(b), "  y[0:u32] = mul(a[0:u32], 0.100097656:bf16);\n}\n"); // 0x3dcd
}

TEST(Dsl, ControlFlowAndLoops) {
  auto k = kernel("flow", {64}, {"y", "n"}, [](Out<float> y, Scalar<uint32_t> n) {
    Var acc(0.0f, "acc");
    For(0u, n, [&](Value<uint32_t> j) {
      If(j == 3u, [&] { Continue(); }).Else([&] { acc += 1.0f; });
      If(acc > 100.0f, [&] { Break(); });
    });
    y[global_id(0)] = acc;
  });
  EXPECT_EQ(body_of(k), R"(  let acc: f32 = 0.0:f32;
  for t0: u32 = 0:u32 to n step 1:u32 {
    if eq(t0, 3:u32) {
      continue;
    } else {
      acc = add(acc, 1.0:f32);
    }
    if gt(acc, 100.0:f32) {
      break;
    }
  }
  y[global_id(0)] = acc;
}
)");
}

TEST(Dsl, AtomicsReturnTheOldValue) {
  auto k = kernel("hist", {64}, {"bins", "x"}, [](InOut<uint32_t> bins, In<uint32_t> x) {
    auto old = atomic_add(bins[x[global_id(0)] & 15u], 1u);
    (void)old;
  });
  EXPECT_EQ(body_of(k),
            "  let t0: u32 = atomic_add(bins[and(x[global_id(0)], 15:u32)], 1:u32);\n}\n");
}

TEST(Dsl, PackAndUnpack) {
  auto k = kernel("pk", {64}, {"a", "y"}, [](In<f16> a, InOut<uint32_t> y) {
    y[0u] = pack<f16>(a[0u], a[1u]);
    y[1u] = bitcast<uint32_t>(to_f32(unpack<f16>(y[0u], 1)));
  });
  EXPECT_EQ(body_of(k), "  y[0:u32] = pack<f16>(a[0:u32], a[1:u32]);\n"
                        "  y[1:u32] = bitcast<u32>(widen<f32>(unpack<f16, 1>(y[0:u32])));\n}\n");
}

TEST(Dsl, UnnamedKernelGetsTheDefaultName) {
  auto k = kernel({64}, [](Out<float> y) { y[0u] = 1.0f; });
  EXPECT_EQ(k.name(), kDefaultKernelName);
  EXPECT_EQ(k->params[0].name, "p0");
}

TEST(Dsl, GenericKernelsAreNamedAfterTheirType) {
  EXPECT_EQ(examples::linear<float>().name(), "linear<f32>");
  EXPECT_EQ(examples::linear<f16>().name(), "linear<f16>");
  EXPECT_EQ(examples::linear<bf16>().name(), "linear<bf16>");
  EXPECT_EQ(examples::linear<double>().name(), "linear<f64>");
  EXPECT_EQ(examples::linear<f16>()->params[1].type, ir::ScalarType::F16);
}

} // namespace
