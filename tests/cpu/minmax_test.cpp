// min and max on the CPU device against the interpreter, bit for bit, over every pair of f32 and
// f16 edge values (signed zeros, subnormals, infinities, quiet and signalling NaNs of both signs)
// with operands wrapped in abs, neg, neg(abs) or replaced by an edge constant, in both orders.
// The shapes matter: LLVM 19's InstCombine miscompiled min(0.0, abs(x)) written as fcmp and
// selects (codegen/llvm/README.md, "LLVM 19: min/max of fabs"), so each shape is its own kernel
// for the optimiser to see. Then the siblings: selects of compares, copysign and nested min/max
// around abs.
#include "halfway/ir/printer.hpp"
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

const std::vector<uint64_t> kF32Edges = {
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x3effffff,
    0x3f800000, 0xbf800000, 0x3f800001, 0x40000000, 0xc0000000, 0x7f7fffff, 0xff7fffff,
    0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff};
const std::vector<uint64_t> kF16Edges = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3bff,
                                         0x3c00, 0xbc00, 0x3c01, 0x4000, 0xc000, 0x7bff, 0xfbff,
                                         0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7fff};

const std::vector<uint64_t>& edges(ScalarType t) {
  return t == ScalarType::F32 ? kF32Edges : kF16Edges;
}

std::string type_name(ScalarType t) {
  return t == ScalarType::F32 ? "f32" : "f16";
}

// `x` as an operand: itself, abs, neg, neg(abs).
std::vector<std::string> forms(const std::string& x) {
  return {x, "abs(" + x + ")", "neg(" + x + ")", "neg(abs(" + x + "))"};
}

// Runs one kernel with z0[i] = exprs[0], z1[i] = exprs[1], ... over a[i], b[i] = every pair of
// edge values, on the interpreter and the CPU device, and expects identical bits in every z.
void expect_matches(ScalarType t, const std::vector<std::string>& exprs, const std::string& what) {
  static policy::Registry registry;
  static rt::CpuDevice cpu(&registry); // one JIT for the whole suite
  const std::string ty = type_name(t);
  std::string text = "kernel k workgroup(64, 1, 1) {\n  param a: buffer<" + ty +
                     ", read>;\n  param b: buffer<" + ty + ", read>;\n";
  for (size_t j = 0; j < exprs.size(); ++j)
    text += "  param z" + std::to_string(j) + ": buffer<" + ty + ", write>;\n";
  text += "  let i: u32 = global_id(0);\n  if lt(i, len(a)) {\n";
  for (size_t j = 0; j < exprs.size(); ++j)
    text += "    z" + std::to_string(j) + "[i] = " + exprs[j] + ";\n";
  text += "  }\n}\n";
  ir::VerifiedKernel k = std::move(text::parse_verified(text, "minmax_test.hk").at(0));
  const ir::Kernel& kk = k.kernel();

  const std::vector<uint64_t>& e = edges(t);
  size_t n = e.size() * e.size();
  Launch in(kk, rt::Grid::for_lanes(kk, n));
  in.buffers[0] = rt::HostBuffer(t, n);
  in.buffers[1] = rt::HostBuffer(t, n);
  for (size_t i = 0; i < n; ++i) {
    in.buffers[0].set_bits(i, e[i / e.size()]);
    in.buffers[1].set_bits(i, e[i % e.size()]);
  }
  for (size_t j = 0; j < exprs.size(); ++j) {
    in.buffers[2 + j] = rt::HostBuffer(t, n);
    for (size_t i = 0; i < n; ++i)
      in.buffers[2 + j].set_bits(i, 0x1234); // not a result of any case: a missed store shows
  }
  Launch want = run_interp(k, in);
  Launch got = run_device(cpu, k, in);
  for (size_t j = 0; j < exprs.size(); ++j) {
    const rt::HostBuffer& w = want.buffers[2 + j];
    const rt::HostBuffer& g = got.buffers[2 + j];
    size_t shown = 0, wrong = 0;
    std::string detail;
    for (size_t i = 0; i < n; ++i) {
      if (w.get_bits(i) == g.get_bits(i))
        continue;
      ++wrong;
      if (shown++ < 3)
        detail += "\n  a = " + ir::print_constant(t, in.buffers[0].get_bits(i)) +
                  ", b = " + ir::print_constant(t, in.buffers[1].get_bits(i)) + ": interp " +
                  ir::print_constant(t, w.get_bits(i)) + ", cpu " +
                  ir::print_constant(t, g.get_bits(i));
    }
    EXPECT_EQ(wrong, 0u) << what << ": " << exprs[j] << " (" << ty << ")" << detail;
  }
}

constexpr ScalarType kTypes[] = {ScalarType::F32, ScalarType::F16};

TEST(CpuMinMax, OperandFormsBothOrders) {
  for (ScalarType t : kTypes)
    for (const char* op : {"min", "max"}) {
      std::vector<std::string> exprs;
      for (const std::string& x : forms("a[i]"))
        for (const std::string& y : forms("b[i]"))
          exprs.push_back(std::string(op) + "(" + x + ", " + y + ")");
      expect_matches(t, exprs, op);
    }
}

// The fuzzer's shape: a constant against a wrapped operand, each edge value as the constant.
TEST(CpuMinMax, ConstantOperandsBothOrders) {
  for (ScalarType t : kTypes)
    for (uint64_t c : edges(t)) {
      std::string k = ir::print_constant(t, c);
      for (const char* op : {"min", "max"}) {
        std::vector<std::string> exprs;
        for (const std::string& x : forms("a[i]")) {
          exprs.push_back(std::string(op) + "(" + k + ", " + x + ")");
          exprs.push_back(std::string(op) + "(" + x + ", " + k + ")");
        }
        expect_matches(t, exprs, std::string(op) + " with constant " + k);
      }
    }
}

// Shapes near the miscompiled one that do not go through min_max alone: selects of compares
// around abs (lowered as fcmp by design), copysign, nested min/max and max(x, -abs(y)); and
// min/max feeding arithmetic.
TEST(CpuMinMax, Siblings) {
  for (ScalarType t : kTypes) {
    std::string ty = type_name(t);
    std::string zero = "0.0:" + ty, nzero = "-0.0:" + ty, one = "1.0:" + ty;
    std::string nan = t == ScalarType::F32 ? "nan(0x7fc00000):f32" : "nan(0x7e00):f16";
    std::vector<std::string> exprs = {
        "max(a[i], neg(abs(b[i])))",
        "min(neg(abs(a[i])), b[i])",
        "max(neg(abs(a[i])), " + zero + ")",
        "min(" + nan + ", abs(a[i]))",
        "max(abs(a[i]), " + nan + ")",
        "select(lt(" + zero + ", abs(a[i])), " + zero + ", abs(a[i]))",
        "select(gt(abs(a[i]), " + zero + "), " + zero + ", abs(a[i]))",
        "select(ne(a[i], a[i]), " + zero + ", select(gt(abs(a[i]), " + zero + "), " + zero +
            ", abs(a[i])))",
        "select(lt(abs(a[i]), b[i]), abs(a[i]), b[i])",
        "select(ge(abs(a[i]), " + one + "), " + one + ", abs(a[i]))",
        "select(le(neg(abs(a[i])), " + nzero + "), " + nzero + ", a[i])",
        "copysign(min(" + zero + ", abs(a[i])), b[i])",
        "copysign(abs(a[i]), b[i])",
        "min(copysign(a[i], b[i]), " + zero + ")",
        "max(copysign(" + one + ", a[i]), abs(b[i]))",
        "min(min(" + zero + ", abs(a[i])), b[i])",
        "max(max(" + nzero + ", neg(abs(a[i]))), abs(b[i]))",
        "min(abs(a[i]), abs(b[i]))",
        "max(abs(a[i]), abs(b[i]))",
        "min(neg(a[i]), neg(abs(a[i])))",
        "max(a[i], abs(a[i]))",
        "min(a[i], abs(a[i]))",
        // Consumed by arithmetic, which the CPU device does in f32: an f16 min/max hands over
        // its result already widened (lower_float.cpp, min_max).
        "add(min(a[i], b[i]), " + one + ")",
        "mul(max(abs(a[i]), b[i]), " + one + ")",
        "sub(" + one + ", min(max(a[i], " + zero + "), " + one + "))",
    };
    expect_matches(t, exprs, "siblings");
  }
}

} // namespace
