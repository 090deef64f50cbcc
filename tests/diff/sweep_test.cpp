// Exhaustive sweeps: which buffer is swept, and that it holds every code once per lane position.
#include "examples.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/parse.hpp"

#include <gtest/gtest.h>
#include <set>

using namespace halfway;
using namespace halfway::diff::inputs;

namespace {

// The Usage error plan_sweep throws, or "" when it throws none.
std::string sweep_error(const ir::Kernel& k, std::string_view name = {}) {
  try {
    plan_sweep(k, name);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_EQ(e.context().kernel, k.name);
    return e.message();
  }
  return "";
}

TEST(Sweep, PicksTheOnlyNarrowFloatInput) {
  Sweep s = plan_sweep(examples::linear<f16>().kernel());
  EXPECT_EQ(s.param, 1u); // w
  EXPECT_EQ(s.element, ir::ScalarType::F16);
  EXPECT_EQ(s.lanes, 1u);
  EXPECT_EQ(s.codes(), 65536u);
  EXPECT_EQ(s.elements(), 65536u);

  s = plan_sweep(examples::linear<bf16>().kernel(), "w");
  EXPECT_EQ(s.element, ir::ScalarType::BF16);
  EXPECT_EQ(s.elements(), 65536u);

  // u32 words the kernel unpacks as four fp8 codes.
  s = plan_sweep(examples::gemv_fp8<e5m2>().kernel());
  EXPECT_EQ(s.param, 0u);
  EXPECT_EQ(s.element, ir::ScalarType::E5M2);
  EXPECT_EQ(s.lanes, 4u);
  EXPECT_EQ(s.elements(), 256u);
}

TEST(Sweep, RefusesWhatCannotBeSwept) {
  const ir::Kernel narrow = examples::narrow_f16().kernel();
  EXPECT_EQ(sweep_error(narrow), "--inputs sweep: the kernel has no input buffer of f16, bf16, "
                                 "e4m3 or e5m2 (or of u32 words the kernel unpacks as one of "
                                 "them) to sweep");
  EXPECT_NE(sweep_error(narrow, "out16").find("out16 is a write-only buffer"), std::string::npos);
  EXPECT_NE(sweep_error(narrow, "a").find("a is a buffer of f32; a sweep needs"),
            std::string::npos);
  EXPECT_NE(sweep_error(narrow, "nope").find("no parameter named 'nope'"), std::string::npos);
  const ir::Kernel linear = examples::linear<f16>().kernel();
  EXPECT_NE(sweep_error(linear, "b").find("b is a scalar; a sweep needs"), std::string::npos);
  EXPECT_NE(sweep_error(linear, "x").find("(here: w)"), std::string::npos);

  // Two candidates: the user names one.
  auto two = text::parse_kernels("kernel two workgroup(64, 1, 1) {\n"
                                 "  param p: buffer<f16, read>;\n"
                                 "  param q: buffer<e4m3, read_write>;\n"
                                 "  param y: buffer<f32, write>;\n"
                                 "  let i: u32 = global_id(0);\n"
                                 "  if lt(i, len(y)) {\n"
                                 "    y[i] = add(widen<f32>(p[i]), widen<f32>(q[i]));\n"
                                 "  }\n"
                                 "}\n",
                                 "two.hk");
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(sweep_error(two[0]), "--inputs sweep: several buffers can be swept (p, q); name one "
                                 "with --inputs sweep:BUFFER");
  Sweep q = plan_sweep(two[0], "q");
  EXPECT_EQ(q.param, 1u);
  EXPECT_EQ(q.element, ir::ScalarType::E4M3);
  EXPECT_EQ(q.elements(), 256u);
}

TEST(Sweep, EveryCodeOnce) {
  for (ir::ScalarType t :
       {ir::ScalarType::F16, ir::ScalarType::BF16, ir::ScalarType::E4M3, ir::ScalarType::E5M2}) {
    Sweep s{0, t, 1};
    rt::HostBuffer b(t, s.elements());
    fill_sweep(b, s);
    std::set<uint64_t> seen;
    for (size_t i = 0; i < b.size(); ++i) {
      EXPECT_EQ(b.get_bits(i), i);
      seen.insert(b.get_bits(i));
    }
    EXPECT_EQ(seen.size(), s.codes()) << ir::name(t);
  }
}

TEST(Sweep, PackedWordsHoldEveryCodeInEveryLane) {
  for (auto [element, lanes] : {std::pair{ir::ScalarType::F16, 2u},
                                {ir::ScalarType::BF16, 2u},
                                {ir::ScalarType::E4M3, 4u},
                                {ir::ScalarType::E5M2, 4u}}) {
    Sweep s{0, element, lanes};
    rt::HostBuffer b(ir::ScalarType::U32, s.elements());
    fill_sweep(b, s);
    const uint32_t width = ir::info(element).bits;
    const uint64_t mask = (uint64_t{1} << width) - 1;
    std::vector<std::set<uint64_t>> per_lane(lanes);
    for (size_t i = 0; i < b.size(); ++i) {
      std::set<uint64_t> in_word;
      for (uint32_t j = 0; j < lanes; ++j) {
        const uint64_t code = (b.get_bits(i) >> (j * width)) & mask;
        per_lane[j].insert(code);
        in_word.insert(code);
      }
      EXPECT_EQ(in_word.size(), lanes) << "word " << i << " repeats a code";
    }
    for (uint32_t j = 0; j < lanes; ++j)
      EXPECT_EQ(per_lane[j].size(), s.codes()) << ir::name(element) << " lane " << j;
  }
}

} // namespace
