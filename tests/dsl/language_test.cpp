// The DSL's language fixes (issue 13): For over unsigned literals counts in u32, locals declared
// in C++ loops get unique names, and !, && and || on integers mean what they mean in C++. The
// kernels are printed (what the DSL built) and run on the interpreter (what they compute).
#include "halfway/dsl.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/ir/printer.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <vector>

using namespace halfway;

namespace {

template <class T> std::vector<T> run_interp(const Kernel& k, std::vector<T> in, size_t out_size) {
  rt::HostBuffer x(scalar_type_v<T>, in.size());
  std::memcpy(x.data(), in.data(), x.size_bytes());
  rt::HostBuffer y(scalar_type_v<T>, out_size);
  std::vector<rt::Arg> args = {rt::Arg::of(x), rt::Arg::of(y)};
  interp::run(k, rt::Grid::for_lanes(k.kernel(), out_size), args);
  std::vector<T> out(out_size);
  std::memcpy(out.data(), y.data(), y.size_bytes());
  return out;
}

TEST(DslLanguage, ForOverUnsignedLiteralsCountsInU32) {
  auto k = kernel("sum16", {1}, {"x", "y"}, [](In<uint32_t> x, Out<uint32_t> y) {
    Var<uint32_t> acc(0u, "acc");
    For(0u, 16u, [&](Value<uint32_t> i) { acc += x[i]; });
    y[0u] = acc;
  });
  const std::string text = ir::print(k.kernel());
  EXPECT_NE(text.find("for t0: u32 = 0:u32 to 16:u32 step 1:u32 {"), std::string::npos) << text;
  std::vector<uint32_t> in(16);
  for (uint32_t i = 0; i < 16; ++i)
    in[i] = i * i;
  EXPECT_EQ(run_interp<uint32_t>(k, in, 1)[0], 1240u); // sum of the squares 0..15
}

TEST(DslLanguage, ForOverSignedLiteralsStillCountsInI32) {
  auto k = kernel("down", {1}, {"x", "y"}, [](In<int32_t> x, Out<int32_t> y) {
    Var<int32_t> acc(0, "acc");
    For(-4, 4, 2, [&](Value<int32_t> i) { acc += i + x[0u]; });
    y[0u] = acc;
  });
  const std::string text = ir::print(k.kernel());
  EXPECT_NE(text.find("for t0: i32 = -4:i32 to 4:i32 step 2:i32 {"), std::string::npos) << text;
  EXPECT_EQ(run_interp<int32_t>(k, {10}, 1)[0], (-4 - 2 + 0 + 2) + 4 * 10);
}

TEST(DslLanguage, LocalsDeclaredInACppLoopGetUniqueNames) {
  // Without unique names the verifier refused this: "local 'ix' shadows another local in scope".
  auto k = kernel("unrolled", {1}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Var<float> acc(0.0f, "acc");
    for (uint32_t u = 0; u < 3; ++u) {
      Var<float> ix(x[u], "ix");
      acc += ix * ix;
    }
    Var<float> ix_1(1.0f, "ix_1"); // a name the renaming already used gets a suffix of its own
    y[0u] = acc + ix_1;
  });
  const std::string text = ir::print(k.kernel());
  EXPECT_NE(text.find("let ix: f32 = x[0:u32];"), std::string::npos) << text;
  EXPECT_NE(text.find("let ix_1: f32 = x[1:u32];"), std::string::npos) << text;
  EXPECT_NE(text.find("let ix_2: f32 = x[2:u32];"), std::string::npos) << text;
  EXPECT_NE(text.find("let ix_1_1: f32 = 1.0:f32;"), std::string::npos) << text;
  EXPECT_EQ(run_interp<float>(k, {1.0f, 2.0f, 3.0f}, 1)[0], 15.0f);
}

TEST(DslLanguage, LogicalOperatorsOnIntegersMeanWhatTheyMeanInCpp) {
  // y = (!a) + 2 * (a && b) + 4 * (a || b): in C++ 2 && 1 is true although 2 & 1 is 0, and !2 is
  // false although ~2 is not 0.
  auto k = kernel("logic", {1}, {"x", "y"}, [](In<uint32_t> x, Out<uint32_t> y) {
    Value<uint32_t> i = global_id(0);
    Value<uint32_t> a = x[2u * i], b = x[2u * i + 1u];
    Value<uint32_t> one = 1u, zero = 0u;
    y[i] = select(!a, one, zero) + select(a && b, 2u * one, zero) + select(a || b, 4u * one, zero);
  });
  const std::string text = ir::print(k.kernel());
  EXPECT_NE(text.find("not(ne(x[mul(2:u32, global_id(0))], 0:u32))"), std::string::npos) << text;
  const std::vector<uint32_t> pairs = {0, 0, 2, 1, 0, 5, 7, 0, 1, 1};
  std::vector<uint32_t> want;
  for (size_t p = 0; p < pairs.size(); p += 2) {
    uint32_t a = pairs[p], b = pairs[p + 1];
    want.push_back(uint32_t{!a} + 2u * (a && b) + 4u * (a || b));
  }
  EXPECT_EQ(want, (std::vector<uint32_t>{1, 6, 5, 4, 6}));
  EXPECT_EQ(run_interp<uint32_t>(k, pairs, 5), want);
}

TEST(DslLanguage, LogicalOperatorsOnBoolsAndTildeOnIntegers) {
  auto k = kernel("bools", {1}, {"x", "y"}, [](In<int32_t> x, Out<int32_t> y) {
    Value<uint32_t> i = global_id(0);
    Value<int32_t> v = x[i];
    Value<bool> neg = v < 0;
    Value<bool> big = v > 100;
    y[i] = select(!neg && !big, ~v, v);
  });
  EXPECT_EQ(run_interp<int32_t>(k, {-5, 0, 7, 101}, 4), (std::vector<int32_t>{-5, ~0, ~7, 101}));
}

TEST(DslLanguage, ClampIsOneNode) {
  auto k = kernel("clamp", {1}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Value<uint32_t> i = global_id(0);
    y[i] = clamp(x[i], 0.0f, 1.0f);
  });
  const std::string text = ir::print(k.kernel());
  EXPECT_NE(text.find("clamp(x[global_id(0)], 0.0:f32, 1.0:f32)"), std::string::npos) << text;
  EXPECT_EQ(run_interp<float>(k, {-2.0f, 0.25f, 3.0f, -0.0f}, 4),
            (std::vector<float>{0.0f, 0.25f, 1.0f, 0.0f}));
}

} // namespace
