// Checked mode reports what the interpreter reports (kind, message, kernel, node, buffer, index,
// length, workgroup, lane, line) and leaves every buffer untouched; unchecked mode never crashes
// on integer division by zero or shift overflow and gives the documented results.
#include "halfway/dsl.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "harness.hpp"

#include <climits>
#include <gtest/gtest.h>

using namespace halfway;
using namespace halfway::cpu_test;
using ir::ScalarType;

namespace {

void expect_same_error(const std::optional<Error>& want, const std::optional<Error>& got) {
  ASSERT_TRUE(want.has_value()) << "the interpreter did not fail";
  ASSERT_TRUE(got.has_value()) << "the CPU device did not fail; the interpreter said: "
                               << want->what();
  EXPECT_EQ(want->kind(), got->kind());
  EXPECT_EQ(want->message(), got->message());
  const ErrorContext &w = want->context(), &g = got->context();
  EXPECT_EQ(w.kernel, g.kernel);
  EXPECT_EQ(w.node, g.node);
  EXPECT_EQ(w.node_text, g.node_text);
  EXPECT_EQ(w.buffer, g.buffer);
  EXPECT_EQ(w.index, g.index);
  EXPECT_EQ(w.length, g.length);
  EXPECT_EQ(w.workgroup, g.workgroup);
  EXPECT_EQ(w.lane, g.lane);
  EXPECT_EQ(w.line, g.line);
  EXPECT_EQ(std::string(want->what()), std::string(got->what()));
}

// Runs the checked launch on both, compares the errors, and checks the device left the inputs
// as they were.
void expect_same_failure(const ir::VerifiedKernel& k, const Launch& in) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  Launch mine = in.clone();
  std::optional<Error> got;
  try {
    auto args = mine.args();
    cpu.launch(k, mine.grid, args, {.check_bounds = true});
  } catch (const Error& e) {
    got = e;
  }
  expect_same_error(interp_error(k, in), got);
  EXPECT_EQ(compare_bits(k.kernel(), in, mine), "") << "a failed launch changed a buffer";
  // Deterministic mode reports the same.
  expect_same_error(interp_error(k, in),
                    device_error(cpu, k, in, {.check_bounds = true, .deterministic = true}));
}

ir::VerifiedKernel copy_with_offset(bool store_side) {
  return kernel(store_side ? "oob_store" : "oob_load", {64}, {"x", "y", "off"},
                [&](In<float> x, Out<float> y, Scalar<uint32_t> off) {
                  Var i(global_id(0), "i");
                  If(i < x.size(), [&] {
                    if (store_side)
                      y[i + off] = x[i] * 2.0f;
                    else
                      y[i] = x[i + off] * 2.0f;
                  });
                });
}

Launch copy_inputs(const ir::VerifiedKernel& k, size_t n, uint32_t off) {
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), n));
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(i);
  in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, x);
  in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, std::vector<float>(n, -1.0f));
  in.set_scalar(k.kernel(), "off", off);
  return in;
}

TEST(CpuChecked, LoadOutOfBounds) {
  auto k = copy_with_offset(false);
  expect_same_failure(k, copy_inputs(k, 1000, 3));
  expect_same_failure(k, copy_inputs(k, 1000, 990)); // many workgroups fail: the lowest is reported
}

TEST(CpuChecked, StoreOutOfBounds) {
  auto k = copy_with_offset(true);
  expect_same_failure(k, copy_inputs(k, 1000, 1));
}

TEST(CpuChecked, NegativeIndex) {
  auto k = kernel("negative_index", {32}, {"x", "y", "shift"},
                  [](In<float> x, Out<float> y, Scalar<int32_t> shift) {
                    Var i(global_id(0), "i");
                    If(i < y.size(), [&] {
                      Var j(convert<int32_t>(i) - shift, "j");
                      y[i] = x[j];
                    });
                  });
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), 100));
  in.buffer(k.kernel(), "x") = rt::HostBuffer(ScalarType::F32, 100);
  in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, 100);
  in.set_scalar(k.kernel(), "shift", 40);
  expect_same_failure(k, in);
}

TEST(CpuChecked, SharedAndAtomicOutOfBounds) {
  auto shared = kernel("shared_oob", {64}, {"x", "y", "off"},
                       [](In<float> x, Out<float> y, Scalar<uint32_t> off) {
                         Shared<float> tile("tile", 64);
                         Var l(local_id(0), "l");
                         tile[l] = x[global_id(0)];
                         Barrier();
                         y[global_id(0)] = tile[l + off];
                       });
  Launch in(shared.kernel(), rt::Grid{{4, 1, 1}});
  in.buffer(shared.kernel(), "x") = rt::HostBuffer(ScalarType::F32, 256);
  in.buffer(shared.kernel(), "y") = rt::HostBuffer(ScalarType::F32, 256);
  in.set_scalar(shared.kernel(), "off", 60);
  expect_same_failure(shared, in);

  auto atomic =
      kernel("atomic_oob", {64}, {"counts", "keys"}, [](InOut<uint32_t> counts, In<uint32_t> keys) {
        Var i(global_id(0), "i");
        If(i < keys.size(), [&] { atomic_add(counts[keys[i]], 1u); });
      });
  Launch ain(atomic.kernel(), rt::Grid::for_lanes(atomic.kernel(), 500));
  std::vector<uint32_t> keys(500);
  for (size_t i = 0; i < keys.size(); ++i)
    keys[i] = static_cast<uint32_t>((i * 7) % 16);
  keys[321] = 16;
  ain.buffer(atomic.kernel(), "counts") = rt::HostBuffer(ScalarType::U32, 16);
  ain.buffer(atomic.kernel(), "keys") = make_buffer(ScalarType::U32, keys);
  expect_same_failure(atomic, ain);
}

ir::VerifiedKernel int_binary(const char* name, ir::Op op) {
  return kernel(name, {16}, {"a", "b", "y"}, [op](In<int32_t> a, In<int32_t> b, Out<int32_t> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] { y[i] = detail::op(op, a[i], b[i]); });
  });
}

Launch int_inputs(const ir::VerifiedKernel& k, std::vector<int32_t> a, std::vector<int32_t> b) {
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), a.size()));
  in.buffer(k.kernel(), "a") = make_buffer(ScalarType::I32, a);
  in.buffer(k.kernel(), "b") = make_buffer(ScalarType::I32, b);
  in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::I32, a.size());
  return in;
}

TEST(CpuChecked, DivisionByZeroAndShiftOverflow) {
  std::vector<int32_t> a = {7, -7, INT_MIN, 5, 9, 1, -1, 100, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
  std::vector<int32_t> b = {2, 2, -1, 3, 4, 1, 1, 7, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  expect_same_failure(int_binary("div0", ir::Op::Div),
                      int_inputs(int_binary("div0", ir::Op::Div), a, b));
  expect_same_failure(int_binary("rem0", ir::Op::Rem),
                      int_inputs(int_binary("rem0", ir::Op::Rem), a, b));
  std::vector<int32_t> s = {1, 2, 3, 31, 0, 4, 5, 6, 7, 8, 9, 10, 11, 12, 32, 1, 1, 1, 1, 1};
  expect_same_failure(int_binary("shl32", ir::Op::Shl),
                      int_inputs(int_binary("shl32", ir::Op::Shl), a, s));
  s[14] = -3; // a negative amount reads as a huge one
  expect_same_failure(int_binary("shr_neg", ir::Op::Shr),
                      int_inputs(int_binary("shr_neg", ir::Op::Shr), a, s));
}

// Two checks in one part failing in different lanes: the interpreter runs lanes in lockstep and
// stops at the first failing node, so it reports the earlier statement even from a later lane.
TEST(CpuChecked, FirstFailingNodeWinsOverFirstLane) {
  auto k = kernel("two_sites", {64}, {"x", "y", "p", "q"},
                  [](In<float> x, Out<float> y, Scalar<uint32_t> p, Scalar<uint32_t> q) {
                    Var l(local_id(0), "l");
                    Var first(x[l * p], "first"); // fails for lanes >= 10
                    y[l] = first + x[l * q];      // fails for lanes >= 3
                  });
  Launch in(k.kernel(), rt::Grid{{2, 1, 1}});
  in.buffer(k.kernel(), "x") = rt::HostBuffer(ScalarType::F32, 100);
  in.buffer(k.kernel(), "y") = rt::HostBuffer(ScalarType::F32, 64);
  in.set_scalar(k.kernel(), "p", 10);
  in.set_scalar(k.kernel(), "q", 40);
  expect_same_failure(k, in);
}

// Unchecked: defined results, no trap (x86 idiv would raise SIGFPE on these).
TEST(CpuUnchecked, DivisionAndShiftsHaveDefinedResults) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  std::vector<int32_t> a = {7, -7, INT_MIN, INT_MIN, 5, -9, 3, -8};
  std::vector<int32_t> b = {0, 0, -1, 0, 40, 32, -1, 33};
  auto run = [&](const char* name, ir::Op op) {
    auto k = int_binary(name, op);
    Launch out = run_device(cpu, k, int_inputs(k, a, b));
    return contents<int32_t>(out.buffer(k.kernel(), "y"));
  };
  std::vector<int32_t> div = run("udiv", ir::Op::Div), rem = run("urem", ir::Op::Rem);
  EXPECT_EQ(div[0], 0);
  EXPECT_EQ(div[1], 0);
  EXPECT_EQ(div[2], INT_MIN);
  EXPECT_EQ(rem[0], 7);
  EXPECT_EQ(rem[1], -7);
  EXPECT_EQ(rem[2], 0);
  EXPECT_EQ(rem[3], INT_MIN);
  std::vector<int32_t> shl = run("ushl", ir::Op::Shl), shr = run("ushr", ir::Op::Shr);
  EXPECT_EQ(shl[4], 0);
  EXPECT_EQ(shl[6], 0);  // -1 reads as 2^32 - 1
  EXPECT_EQ(shr[5], -1); // arithmetic: the sign fills
  EXPECT_EQ(shr[4], 0);
  EXPECT_EQ(shr[7], -1);
}

} // namespace
