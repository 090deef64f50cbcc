// Bounded launches: a timeout or a raised cancel flag stops a kernel that never ends, a step
// budget stops a long one, and either way every buffer is left as it was; sizes past the
// interpreter's limits are refused before anything runs.
#include "halfway/runtime/interp_device.hpp"
#include "halfway/text/parse.hpp"
#include "helpers.hpp"

#include <atomic>
#include <chrono>
#include <thread>

using namespace halfway;
using namespace halfway::interp;
using namespace halfway::interp::test;
using ir::ScalarType;

namespace {

// Writes y, then loops forever (or `n` times with the counting variant).
constexpr const char* kForever = R"(kernel forever workgroup(64, 1, 1) {
  param y: buffer<f32, read_write>;
  let i: u32 = global_id(0);
  y[i] = 1.0:f32;
  while true {
  }
}
)";

constexpr const char* kCounting = R"(kernel counting workgroup(64, 1, 1) {
  param y: buffer<f32, read_write>;
  param n: u32;
  let i: u32 = global_id(0);
  for j: u32 = 0:u32 to n step 1:u32 {
    y[i] = add(y[i], 1.0:f32);
  }
}
)";

ir::VerifiedKernel one(const char* text) {
  return text::parse_verified(text, "limits.hk").at(0);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Limits, TimeoutStopsAnEndlessLoopAndRestoresBuffers) {
  auto k = one(kForever);
  std::vector<float> init(64 * 64, 0.25f);
  auto y = buffer(ScalarType::F32, init);
  const rt::HostBuffer before = y.clone();
  rt::InterpreterDevice device;
  rt::LaunchOptions o;
  o.timeout = std::chrono::milliseconds(2000);
  const auto start = std::chrono::steady_clock::now();
  try {
    const std::vector<rt::Arg> args{rt::Arg::of(y)};
    device.launch(k, rt::Grid::for_lanes(k.kernel(), 64 * 64), args, o);
    ADD_FAILURE() << "an endless loop finished";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Timeout) << e.what();
    EXPECT_EQ(e.context().kernel, "forever");
    EXPECT_HAS(e.what(), "launch on device interp timed out after");
  }
  const double took = seconds_since(start);
  EXPECT_GE(took, 1.9);
  EXPECT_LT(took, 3.0);
  EXPECT_TRUE(y == before) << "a timed-out launch must leave y as it was";
}

TEST(Limits, RaisedFlagInterruptsEveryWorker) {
  auto k = one(kForever);
  auto y = buffer(ScalarType::F32, std::vector<float>(64 * 16, 0.5f));
  const rt::HostBuffer before = y.clone();
  std::atomic<bool> flag{false};
  rt::Cancel cancel;
  cancel.flag = &flag;
  Options o;
  o.cancel = &cancel;
  o.threads = 4;
  std::thread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    flag = true;
  });
  const auto start = std::chrono::steady_clock::now();
  Error e = launch_error(k, rt::Grid::for_lanes(k.kernel(), 64 * 16), {rt::Arg::of(y)}, o);
  raiser.join();
  EXPECT_EQ(e.kind(), ErrorKind::Interrupted) << e.what();
  EXPECT_HAS(e.what(), "interrupted: kernel forever: launch on device interp interrupted after");
  EXPECT_LT(seconds_since(start), 2.0);
  EXPECT_TRUE(y == before);
}

TEST(Limits, AlreadyExpiredCancelRunsNothing) {
  auto k = one(kCounting);
  auto y = buffer(ScalarType::F32, std::vector<float>(64, 0.0f));
  std::atomic<bool> flag{true};
  rt::Cancel cancel;
  cancel.flag = &flag;
  Options o;
  o.cancel = &cancel;
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(y), rt::Arg::u32(3)}, o);
  EXPECT_EQ(e.kind(), ErrorKind::Interrupted);
  EXPECT_EQ(contents<float>(y), std::vector<float>(64, 0.0f));
}

TEST(Limits, StepBudgetStopsALongLoopWithANamedError) {
  auto k = one(kCounting);
  auto y = buffer(ScalarType::F32, std::vector<float>(64 * 4, 0.0f));
  const rt::HostBuffer before = y.clone();
  Options o;
  o.max_steps = 10000;
  for (bool deterministic : {true, false}) {
    o.deterministic = deterministic;
    Error e = launch_error(k, rt::Grid{{4, 1, 1}}, {rt::Arg::of(y), rt::Arg::u32(1000000)}, o);
    EXPECT_EQ(e.kind(), ErrorKind::Limit) << e.what();
    EXPECT_HAS(e.what(), "kernel counting: the launch ran more than its budget of 10000 lockstep "
                         "steps (device interp)");
    EXPECT_TRUE(y == before);
  }
  // Within the budget the same launch completes: 4 workgroups x (3 statements + 2 x 100 steps).
  o.max_steps = 2000;
  launch(k, 64 * 4, {rt::Arg::of(y), rt::Arg::u32(100)}, o);
  EXPECT_EQ(contents<float>(y), std::vector<float>(64 * 4, 100.0f));
}

TEST(Limits, InterpreterDeviceRefusesSharedMemoryPastItsLimit) {
  // 128 MiB: within the verifier's 2 GiB cap, above the interpreter's 64 MiB.
  auto k = one(R"(kernel big_shared workgroup(64, 1, 1) {
  param y: buffer<f32, write>;
  shared t: f64[16777216];
  let i: u32 = local_id(0);
  t[i] = 1.0:f64;
  barrier;
  y[i] = narrow<f32>(t[i]);
}
)");
  auto y = buffer(ScalarType::F32, std::vector<float>(64, 0.0f));
  rt::InterpreterDevice device;
  try {
    const std::vector<rt::Arg> args{rt::Arg::of(y)};
    device.launch(k, rt::Grid{{1, 1, 1}}, args);
    ADD_FAILURE() << "a launch past the shared-memory limit ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Limit) << e.what();
    EXPECT_EQ(e.context().kernel, "big_shared");
  }
  // interp::run on its own refuses it too.
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(y)});
  EXPECT_EQ(e.kind(), ErrorKind::Limit);
  EXPECT_HAS(e.what(), "shared memory of 134217728 bytes exceeds the interpreter's 67108864");
}

TEST(Limits, GridWhoseInvocationsOverflowIsRefused) {
  auto k = one(kCounting);
  auto y = buffer(ScalarType::F32, std::vector<float>(64, 0.0f));
  Error e = launch_error(k, rt::Grid{{0xffffffffu, 0xffffffffu, 0xffffffffu}},
                         {rt::Arg::of(y), rt::Arg::u32(1)});
  EXPECT_EQ(e.kind(), ErrorKind::Limit) << e.what();
  EXPECT_HAS(e.what(), "has more than 2^64 invocations");
}

TEST(Limits, KernelWithoutRegistersRuns) {
  // Found by interp_fuzzer: no expressions and no locals made the batch size a division by zero.
  auto k = one("kernel empty workgroup(16, 1, 1) {\n  param x: buffer<f32, read>;\n}\n");
  auto x = buffer(ScalarType::F32, std::vector<float>(4, 1.0f));
  Stats s = run(k, rt::Grid{{3, 1, 1}}, std::vector<rt::Arg>{rt::Arg::of(x)});
  EXPECT_EQ(s.invocations, 48u);
}

} // namespace
