// Constants read back to the exact bit pattern the printer wrote, for every pattern of the 8- and
// 16-bit float types and a large sample of f32 and f64; text that names no single value of its
// type is refused with the nearest values.
#include "halfway/ir/bits.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/parse.hpp"

#include <bit>
#include <gtest/gtest.h>
#include <random>

using namespace halfway;
using ir::ScalarType;

namespace {

// One kernel that stores each constant, so the verifier and printer see them all.
std::string stores(ScalarType type, const std::vector<uint64_t>& patterns) {
  std::string text = "kernel c workgroup(1, 1, 1) {\n  param x: buffer<" +
                     std::string(ir::name(type)) + ", write>;\n";
  for (uint64_t p : patterns)
    text += "  x[0:u32] = " + ir::print_constant(type, p) + ";\n";
  return text + "}\n";
}

void expect_patterns_round_trip(ScalarType type, const std::vector<uint64_t>& patterns) {
  std::string text = stores(type, patterns);
  std::vector<ir::Kernel> parsed = text::parse_kernels(text, "constants.hk");
  ASSERT_EQ(parsed.size(), 1u);
  const ir::Kernel& k = parsed[0];
  ASSERT_EQ(k.body.size(), patterns.size());
  for (size_t i = 0; i < patterns.size(); ++i) {
    const ir::Expr& e = k.expr(k.body[i].b);
    ASSERT_EQ(e.type, type);
    ASSERT_EQ(e.imm, patterns[i]) << ir::print_constant(type, patterns[i]);
  }
  EXPECT_EQ(ir::print(k), text);
  EXPECT_NO_THROW(ir::verify(k));
}

std::vector<uint64_t> all_patterns(ScalarType type) {
  std::vector<uint64_t> out(1ull << ir::info(type).bits);
  for (uint64_t i = 0; i < out.size(); ++i)
    out[i] = i;
  return out;
}

TEST(Constants, EveryPatternOfEveryNarrowFloatType) {
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16, ScalarType::E4M3, ScalarType::E5M2})
    expect_patterns_round_trip(t, all_patterns(t));
}

TEST(Constants, SampledF32AndF64Patterns) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> f32 = {0,          0x80000000, 1,          0x80000001,
                               0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
                               0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
                               0xffc00000, 0x3dcccccd, 0x3f800000, 0x4b800001};
  std::vector<uint64_t> f64 = {0,
                               0x8000000000000000ull,
                               1,
                               0x000fffffffffffffull,
                               0x0010000000000000ull,
                               0x7fefffffffffffffull,
                               0x7ff0000000000000ull,
                               0xfff0000000000000ull,
                               0x7ff8000000000000ull,
                               0x7ff0000000000001ull,
                               0x3fb999999999999aull,
                               0x4340000000000001ull};
  for (int i = 0; i < 20000; ++i) {
    f32.push_back(rng() & 0xffffffffu);
    f64.push_back(rng());
  }
  expect_patterns_round_trip(ScalarType::F32, f32);
  expect_patterns_round_trip(ScalarType::F64, f64);
}

TEST(Constants, IntegerBoundaries) {
  for (ScalarType t : {ScalarType::I8, ScalarType::U8, ScalarType::I16, ScalarType::U16,
                       ScalarType::I32, ScalarType::U32, ScalarType::I64, ScalarType::U64}) {
    uint32_t w = ir::info(t).bits;
    uint64_t all = w == 64 ? ~0ull : (1ull << w) - 1;
    uint64_t top = 1ull << (w - 1);
    expect_patterns_round_trip(t, {0, 1, all, top, top - 1, top + 1, all - 1});
  }
}

TEST(Constants, NonCanonicalTextReadsTheSameValue) {
  std::string text = "kernel c workgroup(1, 1, 1) {\n  param x: buffer<f16, write>;\n"
                     "  x[0:u32] = 1:f16;\n  x[0:u32] = 0.0999755859375:f16;\n"
                     "  x[0:u32] = 1e3:f16;\n  x[0:u32] = -0:f16;\n}\n";
  ir::Kernel k = text::parse_kernels(text, "c.hk").at(0);
  EXPECT_EQ(k.expr(k.body[0].b).imm, 0x3c00u);
  EXPECT_EQ(k.expr(k.body[1].b).imm, 0x2e66u);
  EXPECT_EQ(k.expr(k.body[2].b).imm, 0x63d0u);
  EXPECT_EQ(k.expr(k.body[3].b).imm, 0x8000u);
}

std::string rejection(const std::string& literal, const std::string& type = "f16") {
  std::string text = "kernel c workgroup(1, 1, 1) {\n  param x: buffer<" + type +
                     ", write>;\n  x[0:u32] = " + literal + ";\n}\n";
  try {
    text::parse_kernels(text, "c.hk");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Parse);
    EXPECT_EQ(e.context().line, 3u);
    EXPECT_EQ(e.context().column, 14u) << e.what();
    return e.message();
  }
  return "accepted";
}

#define EXPECT_REJECTED(literal, fragment)                                                         \
  EXPECT_NE(rejection(literal).find(fragment), std::string::npos) << rejection(literal)

TEST(Constants, InexactOrOutOfRangeLiteralsAreRefused) {
  EXPECT_REJECTED("0.1:f16", "not exactly representable in f16; the nearest f16 values are "
                             "0.099975586:f16 and 0.10003662:f16");
  EXPECT_REJECTED("0.1:bf16", "0.099609375:bf16 and 0.100097656:bf16");
  EXPECT_REJECTED("65520.0:f16", "out of range: the largest finite f16 is 65504.0:f16");
  EXPECT_REJECTED("-65520.0:f16", "the smallest finite f16 is -65504.0:f16");
  EXPECT_REJECTED("1e-8:f16", "nearest f16 values are 0.0:f16 and 5.9604645e-08:f16");
  EXPECT_REJECTED("480.0:e4m3", "largest finite e4m3 is 448.0:e4m3");
  EXPECT_REJECTED("inf:e4m3", "e4m3 has no infinity");
  EXPECT_REJECTED("1e39:f32", "out of range for f32");
  EXPECT_REJECTED("1e39:f16", "out of range for f32, and so for f16");
  EXPECT_REJECTED("1e-50:f32", "out of range for f32");
  EXPECT_REJECTED("1e309:f64", "out of range for f64");
  EXPECT_REJECTED("nan(0x3c00):f16", "nan(0x3c00) is not a NaN of f16: it is 1.0:f16");
  EXPECT_REJECTED("nan(0x17e00):f16", "has bits outside the 16 bits of f16");
  EXPECT_REJECTED("nan(0x11112222333344445):f64", "does not fit in 64 bits");
  EXPECT_REJECTED("-nan(0x7e00):f16", "without '-'");
  EXPECT_REJECTED("1.5:u32", "is not an integer");
  EXPECT_REJECTED("inf:i32", "is not an integer");
  EXPECT_REJECTED("-1:u32", "out of range for u32 (0 to 4294967295)");
  EXPECT_REJECTED("128:i8", "out of range for i8 (-128 to 127)");
  EXPECT_REJECTED("-129:i8", "out of range for i8");
  EXPECT_REJECTED("18446744073709551616:u64", "out of range for u64");
  EXPECT_REJECTED("9223372036854775808:i64", "out of range for i64");
  EXPECT_REJECTED("1:bool", "bool constants are true and false");
  EXPECT_REJECTED("1.5", "needs a type suffix, e.g. 1.5:f32");
  EXPECT_REJECTED("7", "needs a type suffix, e.g. 7:u32");
}

} // namespace
