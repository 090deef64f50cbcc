// Every example kernel on the CPU device against the interpreter, bit for bit: the strict default
// holds no opt-in, so the device must round exactly as the interpreter does (a fused device stays
// inside the tolerance bound, so only a bit-exact comparison catches a contraction that should
// not have happened).
#include "example_inputs.hpp"
#include "examples.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "tie_inputs.hpp"

#include <bit>
#include <gtest/gtest.h>

using namespace halfway;
using namespace halfway::cpu_test;

namespace {

class CpuExamples : public ::testing::TestWithParam<size_t> {
protected:
  ir::VerifiedKernel kernel() const { return examples::all()[GetParam()]; }
};

TEST_P(CpuExamples, BitExactWithInterpreter) {
  policy::Registry registry; // no opt-ins
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = kernel();
  Launch in = example_inputs(k, 42);
  Launch want = run_interp(k, in);
  Launch got = run_device(cpu, k, in);
  EXPECT_EQ(compare_bits(k.kernel(), want, got), "") << k.name();
}

TEST_P(CpuExamples, CheckedAndDeterministicRunsAgree) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = kernel();
  Launch in = example_inputs(k, 7);
  Launch want = run_interp(k, in);
  EXPECT_EQ(compare_bits(k.kernel(), want, run_device(cpu, k, in, {.check_bounds = true})), "");
  EXPECT_EQ(compare_bits(k.kernel(), want, run_device(cpu, k, in, {.deterministic = true})), "");
  EXPECT_EQ(compare_bits(k.kernel(), want, run_device(cpu, k, in, {.threads = 2})), "");
}

INSTANTIATE_TEST_SUITE_P(All, CpuExamples, ::testing::Range<size_t>(0, examples::all().size()),
                         [](const auto& info) {
                           std::string n = examples::all()[info.param].name();
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

// An oracle independent of the interpreter: round16(round32(round32(a*b) + c)) in plain C++.
TEST(CpuNarrowF16, MatchesTwoStepReference) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = examples::narrow_f16();
  MulAddInputs t = tie_mul_add(50000, 3);
  const size_t n = t.a.size();
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), n));
  in.buffer(k.kernel(), "a") = make_buffer(ir::ScalarType::F32, t.a);
  in.buffer(k.kernel(), "b") = make_buffer(ir::ScalarType::F32, t.b);
  in.buffer(k.kernel(), "c") = make_buffer(ir::ScalarType::F32, t.c);
  in.buffer(k.kernel(), "out16") = rt::HostBuffer(ir::ScalarType::F16, n);
  Launch got = run_device(cpu, k, in);
  std::vector<uint16_t> out = contents<uint16_t>(got.buffer(k.kernel(), "out16"));
  size_t wrong = 0, ties_that_matter = 0;
  for (size_t i = 0; i < n; ++i) {
    uint16_t want = two_step_f16_mul_add(t.a[i], t.b[i], t.c[i]);
    ties_that_matter += want != exact_f16_mul_add(t.a[i], t.b[i], t.c[i]);
    if (out[i] != want && ++wrong <= 5)
      ADD_FAILURE() << "a*b+c with a=" << t.a[i] << " b=" << t.b[i] << " c=" << t.c[i]
                    << ": want 0x" << std::hex << want << ", got 0x" << out[i];
  }
  EXPECT_EQ(wrong, 0u);
  // The inputs do stress ties: rounding once would differ on a good share of them.
  EXPECT_GT(ties_that_matter, n / 10);
}

} // namespace
