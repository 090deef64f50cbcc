// Memory safety on the Vulkan device (lavapipe, validation on): out-of-bounds loads, stores and
// atomics on buffers and shared arrays, past the end and at negative indices, each give the
// interpreter's error and leave the caller's buffers untouched; the first fault is chosen
// deterministically; device limits refuse a launch before it runs; a launch past its deadline
// ends (the module polls a cancel word) and the device keeps working. With --check
// (LaunchOptions::check_bounds) integer division by zero and shift overflow are errors too, worded
// as the interpreter words them.

#include "glsl.hpp"
#include "halfway/codegen/spirv/codegen.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/runtime/factories.hpp"
#include "halfway/runtime/vulkan/device.hpp"
#include "halfway/text/parse.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

namespace halfway::rt {
namespace {

class VulkanSafetyTest : public ::testing::Test {
protected:
  void SetUp() override {
    VulkanDeviceOptions options;
    options.runtime = vk::testing::test_options();
    options.validate_spirv = true;
    device = std::make_unique<VulkanDevice>(&registry, options);
    interp = make_interpreter_device(&registry);
  }
  void TearDown() override {
    if (device)
      vk::testing::expect_no_messages(device->validation_messages());
  }

  policy::Registry registry;
  std::unique_ptr<VulkanDevice> device;
  std::unique_ptr<Device> interp;
};

ir::VerifiedKernel parse(const std::string& text) {
  return std::move(text::parse_verified(text, "safety.hk").at(0));
}

// Buffers for every buffer parameter, `sizes[i]` elements of parameter i's type, filled with a
// pattern; scalars are zero.
struct Launch {
  std::vector<HostBuffer> buffers;
  std::vector<Arg> args;
};

Launch make_launch(const ir::Kernel& k, const std::vector<size_t>& sizes) {
  Launch l;
  l.buffers.reserve(k.params.size());
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (!k.params[i].is_buffer())
      continue;
    HostBuffer& b = l.buffers.emplace_back(k.params[i].type, sizes.at(i));
    for (size_t e = 0; e < b.size(); ++e)
      b.set_bits(e, (e * 7 + 3) & 0x7f);
  }
  size_t next = 0;
  for (const auto& p : k.params)
    l.args.push_back(p.is_buffer() ? Arg::of(l.buffers[next++]) : Arg::bits(0));
  return l;
}

std::optional<Error> launch_error(Device& d, const ir::VerifiedKernel& k, const Grid& grid,
                                  Launch& l, const LaunchOptions& options = {}) {
  try {
    d.launch(k, grid, l.args, options);
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

std::string text_of(const Error& e) {
  return format_error(e.kind(), e.message(), e.context());
}

// Runs `text` on the interpreter and on Vulkan with the same inputs: both must fail with the same
// error, of kind `kind`, and Vulkan must leave every buffer as it was.
void expect_same_fault(Device& interp, Device& vulkan, const std::string& text,
                       const std::vector<size_t>& sizes, Grid grid = {},
                       ErrorKind kind = ErrorKind::OutOfBounds, LaunchOptions options = {}) {
  const ir::VerifiedKernel k = parse(text);
  Launch a = make_launch(k.kernel(), sizes);
  Launch b = make_launch(k.kernel(), sizes);
  std::vector<HostBuffer> before;
  for (const auto& buf : b.buffers)
    before.push_back(buf.clone());
  std::optional<Error> want = launch_error(interp, k, grid, a, options);
  ASSERT_TRUE(want.has_value()) << "the interpreter does not fail:\n" << text;
  std::optional<Error> got = launch_error(vulkan, k, grid, b, options);
  ASSERT_TRUE(got.has_value()) << "Vulkan does not fail; the interpreter says " << text_of(*want);
  EXPECT_EQ(text_of(*got), text_of(*want));
  EXPECT_EQ(want->kind(), kind);
  EXPECT_EQ(got->kind(), kind);
  const ErrorContext &g = got->context(), &w = want->context();
  EXPECT_EQ(g.kernel, w.kernel);
  EXPECT_EQ(g.node, w.node);
  EXPECT_EQ(g.buffer, w.buffer);
  EXPECT_EQ(g.index, w.index);
  EXPECT_EQ(g.length, w.length);
  EXPECT_EQ(g.workgroup, w.workgroup);
  EXPECT_EQ(g.lane, w.lane);
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_TRUE(before[i] == b.buffers[i]) << "buffer " << i << " changed";
}

TEST_F(VulkanSafetyTest, BufferLoadPastTheEnd) {
  expect_same_fault(*interp, *device, R"(
kernel load_past workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param y: buffer<u32, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = add(x[i], 1:u32);
  }
})",
                    {100, 200}, Grid{{4, 1, 1}});
}

TEST_F(VulkanSafetyTest, BufferStorePastTheEnd) {
  expect_same_fault(*interp, *device, R"(
kernel store_past workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param y: buffer<u32, read_write>;
  let i: u32 = global_id(0);
  if lt(i, len(x)) {
    y[i] = x[i];
  }
})",
                    {256, 130}, Grid{{4, 1, 1}});
}

TEST_F(VulkanSafetyTest, BufferLoadAtANegativeIndex) {
  expect_same_fault(*interp, *device, R"(
kernel load_negative workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param y: buffer<f32, write>;
  let i: u32 = global_id(0);
  let j: i32 = sub(bitcast<i32>(i), 5:i32);
  if lt(i, len(y)) {
    y[i] = x[j];
  }
})",
                    {128, 128}, Grid{{2, 1, 1}});
}

TEST_F(VulkanSafetyTest, BufferStoreAtANegative64BitIndex) {
  expect_same_fault(*interp, *device, R"(
kernel store_negative64 workgroup(32, 1, 1) {
  param y: buffer<u16, write>;
  let i: i64 = convert<i64>(global_id(0));
  y[sub(i, 40:i64)] = 7:u16;
})",
                    {256}, Grid{{3, 1, 1}});
}

TEST_F(VulkanSafetyTest, BufferAtomicPastTheEnd) {
  expect_same_fault(*interp, *device, R"(
kernel atomic_past workgroup(64, 1, 1) {
  param bins: buffer<u32, read_write>;
  let i: u32 = global_id(0);
  let old: u32 = atomic_add(bins[add(i, 3:u32)], 1:u32);
})",
                    {64}, Grid{{1, 1, 1}});
}

TEST_F(VulkanSafetyTest, SharedStorePastTheEnd) {
  expect_same_fault(*interp, *device, R"(
kernel shared_store_past workgroup(64, 1, 1) {
  param y: buffer<u32, write>;
  shared t: u32[64];
  let l: u32 = local_id(0);
  t[add(l, 2:u32)] = l;
  barrier;
  y[global_id(0)] = t[l];
})",
                    {128}, Grid{{2, 1, 1}});
}

TEST_F(VulkanSafetyTest, SharedLoadAtANegativeIndex) {
  expect_same_fault(*interp, *device, R"(
kernel shared_load_negative workgroup(32, 1, 1) {
  param y: buffer<f16, write>;
  shared t: f16[32];
  let l: i32 = bitcast<i32>(local_id(0));
  y[global_id(0)] = t[sub(l, 1:i32)];
})",
                    {64}, Grid{{2, 1, 1}});
}

TEST_F(VulkanSafetyTest, SharedAtomicPastTheEnd) {
  expect_same_fault(*interp, *device, R"(
kernel shared_atomic_past workgroup(16, 1, 1) {
  param y: buffer<i32, write>;
  shared t: i32[8];
  let old: i32 = atomic_max(t[local_id(0)], 3:i32);
  y[global_id(0)] = old;
})",
                    {16}, Grid{{1, 1, 1}});
}

// Several workgroups and lanes fault, at two sites: the lowest workgroup, then the earliest site,
// then the lowest lane, every time.
// --check (LaunchOptions::check_bounds): division by zero and shift overflow, as the interpreter
// reports them. make_launch fills element e with (7e + 3) & 0x7f: element 91 is the first zero,
// element 5 (38) the first value of at least 32.
LaunchOptions checked() {
  LaunchOptions o;
  o.check_bounds = true;
  return o;
}

const char* const kDivide = R"(
kernel divide workgroup(64, 1, 1) {
  param x: buffer<i32, read>;
  param d: buffer<i32, read>;
  param y: buffer<i32, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = div(x[i], d[i]);
  }
})";

TEST_F(VulkanSafetyTest, DivisionByZeroUnderCheck) {
  // Element 91: workgroup 1, lane 27.
  expect_same_fault(*interp, *device, kDivide, {200, 200, 200}, Grid{{4, 1, 1}},
                    ErrorKind::DivideByZero, checked());
}

TEST_F(VulkanSafetyTest, RemainderByZeroUnderCheckAfterAnotherWorkgroup) {
  // Lanes below 91 compute; 91 + 128 = 219 is the second zero: the lowest workgroup (1) wins
  // over workgroup 3.
  expect_same_fault(*interp, *device, R"(
kernel remainder workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param d: buffer<u32, read>;
  param y: buffer<u32, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = add(rem(x[i], d[i]), 1:u32);
  }
})",
                    {256, 256, 256}, Grid{{4, 1, 1}}, ErrorKind::DivideByZero, checked());
}

TEST_F(VulkanSafetyTest, ShiftOverflowUnderCheckNamesTheAmount) {
  expect_same_fault(*interp, *device, R"(
kernel shift workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param s: buffer<u32, read>;
  param y: buffer<u32, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = shl(x[i], s[i]);
  }
})",
                    {100, 100, 100}, Grid{{2, 1, 1}}, ErrorKind::ShiftOverflow, checked());
}

TEST_F(VulkanSafetyTest, NegativeAndWideShiftAmountsUnderCheck) {
  // A negative signed amount is an overflow; the message prints it signed.
  expect_same_fault(*interp, *device, R"(
kernel shift_negative workgroup(64, 1, 1) {
  param x: buffer<i32, read>;
  param s: buffer<i32, read>;
  param y: buffer<i32, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = shr(x[i], sub(s[i], 100:i32));
  }
})",
                    {64, 64, 64}, Grid{{1, 1, 1}}, ErrorKind::ShiftOverflow, checked());
  // 8-bit operands: the amount is recorded extended to 32 bits, as its sign says.
  expect_same_fault(*interp, *device, R"(
kernel shift_small workgroup(64, 1, 1) {
  param x: buffer<i8, read>;
  param s: buffer<i8, read>;
  param y: buffer<i8, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = shl(x[i], sub(s[i], 100:i8));
  }
})",
                    {64, 64, 64}, Grid{{1, 1, 1}}, ErrorKind::ShiftOverflow, checked());
  // 64-bit operands: element 9 holds the first amount past 63 (66).
  expect_same_fault(*interp, *device, R"(
kernel shift_wide workgroup(64, 1, 1) {
  param x: buffer<u64, read>;
  param s: buffer<u64, read>;
  param y: buffer<u64, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = shr(x[i], s[i]);
  }
})",
                    {200, 200, 200}, Grid{{4, 1, 1}}, ErrorKind::ShiftOverflow, checked());
}

TEST_F(VulkanSafetyTest, CheckIsPerLaunchAndCleanKernelsMatchTheInterpreter) {
  const ir::VerifiedKernel k = parse(kDivide);
  const Grid grid{{4, 1, 1}};
  // Without --check the division by zero is not an error on Vulkan (nothing traps either).
  Launch plain = make_launch(k.kernel(), {200, 200, 200});
  EXPECT_FALSE(launch_error(*device, k, grid, plain).has_value());
  // With it, the same kernel fails, and a later launch without it runs again: the memo keeps
  // both modules apart.
  Launch failing = make_launch(k.kernel(), {200, 200, 200});
  std::optional<Error> e = launch_error(*device, k, grid, failing, checked());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::DivideByZero);
  EXPECT_EQ(e->message(), "div of i32 by zero");
  EXPECT_EQ(e->context().workgroup, 1u);
  EXPECT_EQ(e->context().lane, 27u);
  EXPECT_FALSE(launch_error(*device, k, grid, plain).has_value());
  // Divisors without zeros: the checked module computes the interpreter's results.
  Launch a = make_launch(k.kernel(), {200, 200, 200});
  Launch b = make_launch(k.kernel(), {200, 200, 200});
  for (Launch* l : {&a, &b})
    for (size_t i = 0; i < 200; ++i)
      l->buffers[1].set_bits(i, i % 7 + 1);
  ASSERT_FALSE(launch_error(*interp, k, grid, a, checked()).has_value());
  ASSERT_FALSE(launch_error(*device, k, grid, b, checked()).has_value());
  EXPECT_TRUE(a.buffers[2] == b.buffers[2]);
}

TEST_F(VulkanSafetyTest, TheFirstFaultIsDeterministic) {
  const std::string text = R"(
kernel many_faults workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param y: buffer<u32, write>;
  let i: u32 = global_id(0);
  let v: u32 = x[mul(i, 3:u32)];
  y[add(i, 17:u32)] = v;
})";
  const ir::VerifiedKernel k = parse(text);
  std::string first;
  for (int run = 0; run < 5; ++run) {
    Launch l = make_launch(k.kernel(), {500, 180});
    std::optional<Error> e = launch_error(*device, k, Grid{{16, 1, 1}}, l);
    ASSERT_TRUE(e.has_value());
    if (run == 0)
      first = text_of(*e);
    EXPECT_EQ(text_of(*e), first);
  }
  expect_same_fault(*interp, *device, text, {500, 180}, Grid{{16, 1, 1}});
}

TEST_F(VulkanSafetyTest, InBoundsKernelsStillRunAndTheDeviceRecoversAfterAFault) {
  const ir::VerifiedKernel k = parse(R"(
kernel copy workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param y: buffer<u32, write>;
  let i: u32 = global_id(0);
  y[i] = x[i];
})");
  Launch bad = make_launch(k.kernel(), {100, 128});
  EXPECT_TRUE(launch_error(*device, k, Grid{{2, 1, 1}}, bad).has_value());
  Launch good = make_launch(k.kernel(), {128, 128});
  device->launch(k, Grid{{2, 1, 1}}, good.args);
  EXPECT_TRUE(good.buffers[0] == good.buffers[1]);
}

// ---- limits -------------------------------------------------------------------------------------

TEST_F(VulkanSafetyTest, SharedMemoryOverTheDeviceLimitIsRefused) {
  const uint64_t limit = device->info().max_shared_bytes;
  ASSERT_EQ(limit, device->vulkan_info().limits.max_compute_shared_memory_size);
  const uint64_t elements = 65536 / 4; // 64 KiB of f32
  ASSERT_LT(limit, elements * 4) << "this device has more than 64 KiB of shared memory";
  const ir::VerifiedKernel k = parse(R"(
kernel big_tile workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  shared t: f32[16384];
  t[local_id(0)] = 1.0:f32;
  barrier;
  y[global_id(0)] = t[local_id(0)];
})");
  Launch l = make_launch(k.kernel(), {64});
  std::vector<HostBuffer> before;
  before.push_back(l.buffers[0].clone());
  std::optional<Error> e = launch_error(*device, k, Grid{{1, 1, 1}}, l);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Limit) << text_of(*e);
  EXPECT_NE(text_of(*e).find("big_tile"), std::string::npos) << text_of(*e);
  EXPECT_NE(text_of(*e).find("shared memory"), std::string::npos) << text_of(*e);
  EXPECT_NE(text_of(*e).find(device->name()), std::string::npos) << text_of(*e);
  EXPECT_TRUE(before[0] == l.buffers[0]);
}

// f16 shared elements are held in 32 bits: 12 KiB of f16 in the IR is 24 KiB on the device, which
// fits lavapipe; 20 KiB in the IR (40 KiB held) does not, and the device's own check says so.
TEST_F(VulkanSafetyTest, SharedMemoryIsCountedAsTheModuleHoldsIt) {
  if (device->info().max_shared_bytes != 32768)
    GTEST_SKIP() << "written for 32 KiB of shared memory";
  const ir::VerifiedKernel k = parse(R"(
kernel wide_tile workgroup(64, 1, 1) {
  param y: buffer<f16, write>;
  shared t: f16[10240];
  y[global_id(0)] = t[local_id(0)];
})");
  Launch l = make_launch(k.kernel(), {64});
  std::optional<Error> e = launch_error(*device, k, Grid{{1, 1, 1}}, l);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Limit) << text_of(*e);
  EXPECT_NE(text_of(*e).find("as held on the device"), std::string::npos) << text_of(*e);
}

TEST_F(VulkanSafetyTest, LimitsComeFromTheDevice) {
  const auto& limits = device->vulkan_info().limits;
  const DeviceInfo& info = device->info();
  EXPECT_EQ(info.max_workgroup_size, limits.max_compute_work_group_size);
  EXPECT_EQ(info.max_workgroup_invocations, limits.max_compute_work_group_invocations);
  EXPECT_EQ(info.max_buffer_bytes, limits.max_storage_buffer_range);
  // x may be folded into (x, y).
  EXPECT_EQ(info.max_groups[0], uint64_t{limits.max_compute_work_group_count[0]} *
                                    limits.max_compute_work_group_count[1]);
}

// ---- timeouts and interrupts --------------------------------------------------------------------

// Long enough to outlast any deadline here (65,535 workgroups of 64 lanes, 60,000 iterations each),
// with every invocation below lavapipe's 65,535-iteration loop limit.
const char* kForever = R"(
kernel forever workgroup(64, 1, 1) {
  param y: buffer<u32, write>;
  let n: u32 = global_id(0);
  for j: u32 = 0:u32 to 60000:u32 step 1:u32 {
    n = add(mul(n, 1664525:u32), xor(j, 1013904223:u32));
  }
  y[and(global_id(0), 63:u32)] = n;
})";
const Grid kForeverGrid{{65535, 1, 1}};

// Lavapipe ends every loop after 65,535 iterations by itself; `while true {}` would silently
// "finish". The module counts iterations and the launch fails, naming the loop.
TEST_F(VulkanSafetyTest, ALoopTheDriverWouldCutShortIsAnError) {
  if (device->target().loop_limit == 0)
    GTEST_SKIP() << "this driver has no loop limit";
  const ir::VerifiedKernel k = parse(R"(
kernel spin workgroup(1, 1, 1) {
  param y: buffer<u32, write>;
  while true {
  }
  y[0:u32] = 1:u32;
})");
  Launch l = make_launch(k.kernel(), {1});
  const uint64_t before = l.buffers[0].get_bits(0);
  LaunchOptions options;
  options.timeout = std::chrono::milliseconds(2000);
  const auto start = std::chrono::steady_clock::now();
  std::optional<Error> e = launch_error(*device, k, Grid{{1, 1, 1}}, l, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Limit) << text_of(*e);
  EXPECT_NE(text_of(*e).find("iterations to 65535"), std::string::npos) << text_of(*e);
  EXPECT_NE(text_of(*e).find("spin"), std::string::npos) << text_of(*e);
  EXPECT_LT(seconds, 3.0);
  EXPECT_EQ(l.buffers[0].get_bits(0), before);

  // The limit counts every loop's back edges in all: 3 x 20,000 inner plus 3 outer is fine,
  // two loops of 40,000 in sequence are not.
  const ir::VerifiedKernel fine = parse(R"(
kernel nearly workgroup(1, 1, 1) {
  param y: buffer<u32, write>;
  let n: u32 = 0:u32;
  for i: u32 = 0:u32 to 3:u32 step 1:u32 {
    for j: u32 = 0:u32 to 20000:u32 step 1:u32 {
      n = add(n, 1:u32);
    }
  }
  y[0:u32] = n;
})");
  Launch ok = make_launch(fine.kernel(), {1});
  device->launch(fine, Grid{{1, 1, 1}}, ok.args);
  EXPECT_EQ(ok.buffers[0].get_bits(0), 60000u);
  const ir::VerifiedKernel two = parse(R"(
kernel two_loops workgroup(1, 1, 1) {
  param y: buffer<u32, write>;
  let n: u32 = 0:u32;
  for i: u32 = 0:u32 to 40000:u32 step 1:u32 {
    n = add(n, 1:u32);
  }
  for j: u32 = 0:u32 to 40000:u32 step 1:u32 {
    n = add(n, 1:u32);
  }
  y[0:u32] = n;
})");
  Launch cut = make_launch(two.kernel(), {1});
  e = launch_error(*device, two, Grid{{1, 1, 1}}, cut);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Limit) << text_of(*e);
}

TEST_F(VulkanSafetyTest, AnInfiniteLoopTimesOutAndTheDeviceStaysUsable) {
  const ir::VerifiedKernel k = parse(kForever);
  Launch l = make_launch(k.kernel(), {64});
  const uint64_t before = l.buffers[0].get_bits(0);
  LaunchOptions options;
  options.timeout = std::chrono::milliseconds(2000);
  const auto start = std::chrono::steady_clock::now();
  std::optional<Error> e = launch_error(*device, k, kForeverGrid, l, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Timeout) << text_of(*e);
  EXPECT_NE(text_of(*e).find("forever"), std::string::npos) << text_of(*e);
  EXPECT_GE(seconds, 1.9);
  // The launch ends soon after its limit; how soon depends on the machine's load and on
  // sanitizers (3.1 s seen under ASan on a busy 2-core machine). A launch that waited for the loop
  // would never end, so a loose upper bound still tells the two apart.
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(l.buffers[0].get_bits(0), before); // nothing copied back

  const ir::VerifiedKernel copy = parse(R"(
kernel copy_after workgroup(64, 1, 1) {
  param x: buffer<u32, read>;
  param y: buffer<u32, write>;
  let i: u32 = global_id(0);
  y[i] = x[i];
})");
  Launch good = make_launch(copy.kernel(), {128, 128});
  good.buffers[1].set_bits(0, 99);
  device->launch(copy, Grid{{2, 1, 1}}, good.args, options);
  EXPECT_TRUE(good.buffers[0] == good.buffers[1]);
}

TEST_F(VulkanSafetyTest, TheCancelFlagInterruptsALaunch) {
  const ir::VerifiedKernel k = parse(kForever);
  Launch l = make_launch(k.kernel(), {64});
  std::atomic<bool> flag{false};
  LaunchOptions options;
  options.cancel = &flag;
  std::thread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    flag = true;
  });
  const auto start = std::chrono::steady_clock::now();
  std::optional<Error> e = launch_error(*device, k, kForeverGrid, l, options);
  raiser.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Interrupted) << text_of(*e);
  EXPECT_LT(seconds, 3.0); // 0.3 s, then the stop (slower in sanitizer builds)
}

// A dispatch the device is given up on while it still runs (its fence timed out: a driver hang,
// or here a fence timeout far shorter than the dispatch) leaves the device lost, and nothing the
// dispatch may still write is freed: the shader runs on into leaked memory, never freed memory,
// so the process goes on, later launches say the device was lost, and destroying the device does
// not crash. (Found when a campaign's process was paused past the fence timeout: it crashed
// later, freeing buffers the resumed shader still wrote.)
TEST_F(VulkanSafetyTest, ADispatchGivenUpOnNeverWritesFreedMemory) {
  VulkanDeviceOptions options;
  options.runtime = vk::testing::test_options();
  options.runtime.device_options.fence_timeout_ns = 10'000'000; // 10 ms
  auto impatient = std::make_unique<VulkanDevice>(&registry, options);
  auto k = parse("kernel slow workgroup(64, 1, 1) {\n"
                 "  param y: buffer<f32, read_write>;\n"
                 "  let v: f32 = y[global_id(0)];\n"
                 "  for j: u32 = 0:u32 to 20000:u32 step 1:u32 {\n"
                 "    v = add(exp(mul(v, 0.5:f32)), 0.25:f32);\n"
                 "  }\n"
                 "  y[global_id(0)] = v;\n"
                 "}\n");
  Launch l = make_launch(k.kernel(), {4096});
  const std::optional<Error> lost =
      launch_error(*impatient, k, Grid::for_lanes(k.kernel(), 4096), l);
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->kind(), ErrorKind::Device);
  EXPECT_NE(text_of(*lost).find("treating the device as lost"), std::string::npos)
      << text_of(*lost);
  // The abandoned dispatch finishes meanwhile, writing into the leaked buffers. Memory the heap
  // hands out now (where freed buffers would be reused) keeps what it holds.
  std::vector<std::vector<uint32_t>> heap;
  for (int i = 0; i < 64; ++i)
    heap.emplace_back(4096 + 16 * i, 0x5a5a5a5au);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  for (const auto& h : heap)
    EXPECT_EQ(std::count(h.begin(), h.end(), 0x5a5a5a5au), static_cast<ptrdiff_t>(h.size()));
  Launch again = make_launch(k.kernel(), {64});
  const std::optional<Error> after =
      launch_error(*impatient, k, Grid::for_lanes(k.kernel(), 64), again);
  ASSERT_TRUE(after);
  EXPECT_NE(text_of(*after).find("was lost earlier"), std::string::npos) << text_of(*after);
  impatient.reset();
  // Another device of the same driver still works.
  Launch fine = make_launch(k.kernel(), {64});
  EXPECT_FALSE(launch_error(*device, k, Grid::for_lanes(k.kernel(), 64), fine));
}

} // namespace
} // namespace halfway::rt
