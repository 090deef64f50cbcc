// f16 comparisons and fract on the CPU device against the interpreter, bit for bit: every f16
// pattern against a set of edge values (signed zeros, subnormals, normals around 1, the largest
// finite, infinities, quiet and signalling NaNs of both signs), as operands in both orders. The
// CPU device compares f16 values on integer keys (codegen/llvm/src/lower_float.cpp, compare_f16),
// since x86 without AVX512-FP16 scalarises `fcmp <N x half>`; the kernel is an elementwise loop,
// so the vectorised body is what runs.
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/text/parse.hpp"
#include "harness.hpp"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace halfway;
using namespace halfway::cpu_test;
using ir::ScalarType;

namespace {

const std::vector<uint16_t> kEdges = {
    0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3800, 0xb800, 0x3bff, 0x3c00, 0xbc00, 0x3c01,
    0x4000, 0xc000, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7fff, 0xffff};

// Six predicates as six bits, both operand orders, and fract: every output is checked.
constexpr const char* kKernel = R"(kernel compare_f16 workgroup(64, 1, 1) {
  param a: buffer<f16, read>;
  param b: buffer<f16, read>;
  param ab: buffer<u32, write>;
  param ba: buffer<u32, write>;
  param fr: buffer<f16, write>;
  let i: u32 = global_id(0);
  if lt(i, len(a)) {
    let x: f16 = a[i];
    let y: f16 = b[i];
    ab[i] = or(or(or(select(eq(x, y), 1:u32, 0:u32), select(ne(x, y), 2:u32, 0:u32)),
                  or(select(lt(x, y), 4:u32, 0:u32), select(le(x, y), 8:u32, 0:u32))),
               or(select(gt(x, y), 16:u32, 0:u32), select(ge(x, y), 32:u32, 0:u32)));
    ba[i] = or(or(or(select(eq(y, x), 1:u32, 0:u32), select(ne(y, x), 2:u32, 0:u32)),
                  or(select(lt(y, x), 4:u32, 0:u32), select(le(y, x), 8:u32, 0:u32))),
               or(select(gt(y, x), 16:u32, 0:u32), select(ge(y, x), 32:u32, 0:u32)));
    fr[i] = fract(x);
  }
}
)";

TEST(CpuCompareF16, EveryPatternAgainstTheEdgesMatchesTheInterpreter) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = std::move(text::parse_verified(kKernel, "compare_f16_test.hk").at(0));
  const ir::Kernel& kk = k.kernel();
  const size_t n = size_t{1} << 16;
  const size_t lanes = n * kEdges.size();
  Launch in(kk, rt::Grid::for_lanes(kk, lanes));
  for (size_t p = 0; p < 5; ++p)
    in.buffers[p] = rt::HostBuffer(p < 2 || p == 4 ? ScalarType::F16 : ScalarType::U32, lanes);
  for (size_t i = 0; i < lanes; ++i) {
    in.buffers[0].set_bits(i, i % n);
    in.buffers[1].set_bits(i, kEdges[i / n]);
    for (size_t p = 2; p < 5; ++p)
      in.buffers[p].set_bits(i, 0x1234); // not a result: a missed store shows
  }
  Launch want = run_interp(k, in);
  Launch got = run_device(cpu, k, in);
  EXPECT_EQ(compare_bits(kk, want, got), "");
  // The oracle itself, on a few pairs: NaN compares unordered, -0 equals +0, order across signs.
  auto flags = [&](uint16_t x, uint16_t y) {
    for (size_t i = 0; i < lanes; ++i)
      if (in.buffers[0].get_bits(i) == x && in.buffers[1].get_bits(i) == y)
        return want.buffers[2].get_bits(i);
    return uint64_t{0xdead};
  };
  EXPECT_EQ(flags(0x7e00, 0x7e00), 2u);             // NaN: only ne
  EXPECT_EQ(flags(0x8000, 0x0000), 1u | 8u | 32u);  // -0 == +0
  EXPECT_EQ(flags(0xbc00, 0x3c00), 2u | 4u | 8u);   // -1 < 1
  EXPECT_EQ(flags(0xfc00, 0xfbff), 2u | 4u | 8u);   // -inf < -max
  EXPECT_EQ(flags(0x0001, 0x8001), 2u | 16u | 32u); // +min subnormal > -min subnormal
}

} // namespace
