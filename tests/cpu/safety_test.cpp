// Memory safety and bounded launches on the CPU device without check_bounds: every out-of-bounds
// load, store or atomic (global or shared, past the end or at a negative index, any index type)
// ends the launch with the interpreter's error and leaves every buffer as it was; so do
// timeouts and cancellation; sizes that do not fit are clean errors.
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/cpu/device.hpp"
#include "halfway/text/parse.hpp"
#include "harness.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <thread>

using namespace halfway;
using namespace halfway::cpu_test;
using ir::ScalarType;

namespace {

ir::VerifiedKernel parse(const std::string& text) {
  auto kernels = text::parse_verified(text, "safety_test.hk");
  return std::move(kernels.at(0));
}

void expect_same_error(const std::optional<Error>& want, const std::optional<Error>& got,
                       const std::string& what) {
  ASSERT_TRUE(want.has_value()) << what << ": the interpreter did not fail";
  ASSERT_TRUE(got.has_value()) << what << ": the CPU device did not fail; the interpreter said: "
                               << want->what();
  EXPECT_EQ(want->kind(), got->kind()) << what;
  EXPECT_EQ(std::string(want->what()), std::string(got->what())) << what;
  const ErrorContext &w = want->context(), &g = got->context();
  EXPECT_EQ(w.node, g.node) << what;
  EXPECT_EQ(w.buffer, g.buffer) << what;
  EXPECT_EQ(w.index, g.index) << what;
  EXPECT_EQ(w.length, g.length) << what;
  EXPECT_EQ(w.workgroup, g.workgroup) << what;
  EXPECT_EQ(w.lane, g.lane) << what;
}

// Launches a copy of `in`, returns the error and checks the copy's buffers are unchanged.
std::optional<Error> failing_launch(rt::Device& device, const ir::VerifiedKernel& k,
                                    const Launch& in, const rt::LaunchOptions& options,
                                    const std::string& what) {
  Launch mine = in.clone();
  std::optional<Error> got;
  try {
    auto args = mine.args();
    device.launch(k, mine.grid, args, options);
  } catch (const Error& e) {
    got = e;
  }
  EXPECT_EQ(compare_bits(k.kernel(), in, mine), "") << what << ": a failed launch changed a buffer";
  return got;
}

const char* kIndexTypes[] = {"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"};

bool is_signed(const std::string& t) {
  return t[0] == 'i';
}
unsigned bits_of(const std::string& t) {
  return static_cast<unsigned>(std::stoul(t.substr(1)));
}
uint64_t as_bits(int64_t v, unsigned bits) {
  return bits == 64 ? static_cast<uint64_t>(v)
                    : static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
}

// Accesses at index convert<T>(lane) + off, for each kind of access.
std::string oob_kernel(const std::string& access, const std::string& t) {
  std::string idx = t == "u32" ? "add(l, off)" : "add(convert<" + t + ">(l), off)";
  std::string body;
  std::string shared;
  if (access == "load")
    body = "y[i] = x[" + idx + "];";
  else if (access == "store")
    body = "y[" + idx + "] = x[i];";
  else if (access == "atomic")
    body = "atomic_add(c[" + idx + "], 1:u32);";
  else if (access == "shared_load" || access == "shared_store") {
    shared = "  shared t: f32[16];\n";
    body = access == "shared_load" ? "t[l] = x[i];\n  barrier;\n  y[i] = t[" + idx + "];"
                                   : "t[" + idx + "] = x[i];\n  barrier;\n  y[i] = t[l];";
  }
  return "kernel oob workgroup(16, 1, 1) {\n"
         "  param x: buffer<f32, read>;\n"
         "  param y: buffer<f32, read_write>;\n"
         "  param c: buffer<u32, read_write>;\n"
         "  param off: " +
         t + ";\n" + shared +
         "  let i: u32 = global_id(0);\n"
         "  let l: u32 = local_id(0);\n"
         "  " +
         body + "\n}\n";
}

Launch oob_inputs(const ir::VerifiedKernel& k, size_t groups, uint64_t off) {
  size_t n = groups * 16;
  Launch in(k.kernel(), rt::Grid{{static_cast<uint32_t>(groups), 1, 1}});
  std::vector<float> x(n), y(n, -1.0f);
  for (size_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(i);
  in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, x);
  in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, y);
  in.buffer(k.kernel(), "c") = make_buffer(ScalarType::U32, std::vector<uint32_t>(n, 7));
  in.set_scalar(k.kernel(), "off", off);
  return in;
}

// Every access kind, index type and direction: the interpreter's error unchecked, checked,
// deterministic and with unguarded buffers, and the buffers as they were.
void check_all_accesses(unsigned threads, size_t groups) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry, {.threads = threads});
  for (std::string access : {"load", "store", "atomic", "shared_load", "shared_store"})
    for (std::string t : kIndexTypes) {
      ir::VerifiedKernel k = parse(oob_kernel(access, t));
      bool shared = access.rfind("shared", 0) == 0;
      int64_t length = shared ? 16 : static_cast<int64_t>(groups * 16);
      std::vector<int64_t> offsets = {length - 5, 1}; // past the end; lane 15 at length
      if (is_signed(t))
        offsets.push_back(t == "i8" ? -100 : -3); // negative
      else if (bits_of(t) >= 32)
        offsets.push_back(-3); // a huge unsigned index
      for (int64_t off : offsets) {
        std::string what = access + " " + t + " off " + std::to_string(off);
        Launch in = oob_inputs(k, groups, as_bits(off, bits_of(t)));
        if (off == 1 && !shared && groups > 1)
          continue; // in bounds but in another lane's element: not a failure
        std::optional<Error> want = interp_error(k, in);
        if (!want && bits_of(t) < 32)
          continue; // past the end of a long buffer is out of a short type's reach
        if (!want) {
          ADD_FAILURE() << what << ": the interpreter did not fail";
          continue;
        }
        uint64_t faults = cpu.stats().guard_faults;
        expect_same_error(want, failing_launch(cpu, k, in, {}, what), what + " unchecked");
        // Buffer accesses at indices of up to 32 bits are caught by the guard; 64-bit indices
        // and shared arrays by comparisons.
        EXPECT_EQ(cpu.stats().guard_faults - faults, !shared && bits_of(t) <= 32 ? 1u : 0u) << what;
        expect_same_error(want, failing_launch(cpu, k, in, {.check_bounds = true}, what),
                          what + " checked");
        expect_same_error(want, failing_launch(cpu, k, in, {.deterministic = true}, what),
                          what + " deterministic");
      }
    }
}

TEST(CpuSafety, OutOfBoundsIsTheInterpretersErrorOneThread) {
  check_all_accesses(1, 1);
}

// 4096 workgroups on two threads; the device tries to prove the launch in bounds (bounds.hpp)
// before skipping the snapshot, and it must not succeed here.
TEST(CpuSafety, OutOfBoundsIsTheInterpretersErrorInParallel) {
  check_all_accesses(2, 4096);
}

// Launches whose every access is provably in bounds skip the snapshot; those that are not
// (or may not be) take it.
TEST(CpuSafety, ProvenInBoundsLaunchesSkipTheSnapshot) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry, {.threads = 2});
  ir::VerifiedKernel k = parse(R"(kernel rows workgroup(64, 1, 1) {
  param w: buffer<f32, read>;
  param x: buffer<f32, read>;
  param y: buffer<f32, write>;
  param cols: u32;
  let row: u32 = global_id(0);
  if lt(row, len(y)) {
    let acc: f32 = 0.0:f32;
    let base: u32 = mul(row, cols);
    for j: u32 = 0:u32 to cols step 1:u32 {
      acc = add(acc, mul(w[add(base, j)], x[j]));
    }
    y[row] = acc;
  }
})");
  auto inputs = [&](uint32_t rows, uint32_t cols, size_t w_len, size_t x_len) {
    Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), rows));
    in.buffer(k.kernel(), "w") = make_buffer(ScalarType::F32, std::vector<float>(w_len, 0.5f));
    in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, std::vector<float>(x_len, 2.0f));
    in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, std::vector<float>(rows, -1.0f));
    in.set_scalar(k.kernel(), "cols", cols);
    return in;
  };
  rt::CpuDevice::Stats before = cpu.stats();
  Launch fits = inputs(1 << 15, 4, size_t{1} << 17, 4);
  EXPECT_EQ(compare_bits(k.kernel(), run_interp(k, fits), run_device(cpu, k, fits)), "");
  EXPECT_EQ(cpu.stats().proven_in_bounds - before.proven_in_bounds, 1u);
  EXPECT_EQ(cpu.stats().snapshots - before.snapshots, 0u);
  // w one element short, x one short: not provable, and out of bounds indeed.
  for (auto [w_len, x_len] : {std::pair<size_t, size_t>{(size_t{1} << 17) - 1, 4}, {1 << 17, 3}}) {
    Launch short_input = inputs(1 << 15, 4, w_len, x_len);
    before = cpu.stats();
    expect_same_error(interp_error(k, short_input),
                      failing_launch(cpu, k, short_input, {}, "short"), "short");
    EXPECT_EQ(cpu.stats().proven_in_bounds - before.proven_in_bounds, 0u);
    EXPECT_GE(cpu.stats().snapshots - before.snapshots, 1u);
  }
  // row * cols may wrap 32 bits: not provable.
  Launch wraps = inputs(1 << 15, 1u << 20, 1 << 17, 4);
  before = cpu.stats();
  (void)device_error(cpu, k, wraps);
  EXPECT_EQ(cpu.stats().proven_in_bounds - before.proven_in_bounds, 0u);
}

// The proof is remembered per kernel, grid, buffer lengths and scalar values (bounds.hpp): a
// repeated launch is proven without analysing again, and a launch that differs only in a scalar
// (an offset that moves the last access past the end of w) or only in a buffer's length is
// analysed afresh and fails as the interpreter does.
TEST(CpuSafety, RememberedProofsFollowLengthsAndScalars) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry, {.threads = 2});
  ir::VerifiedKernel k = parse(R"(kernel rows workgroup(64, 1, 1) {
  param w: buffer<f32, read>;
  param y: buffer<f32, write>;
  param off: u32;
  let row: u32 = global_id(0);
  if lt(row, len(y)) {
    let acc: f32 = 0.0:f32;
    for j: u32 = 0:u32 to 4:u32 step 1:u32 {
      acc = add(acc, w[add(mul(row, 4:u32), add(j, off))]);
    }
    y[row] = acc;
  }
})");
  auto inputs = [&](uint32_t off) {
    Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), 1024));
    in.buffer(k.kernel(), "w") = make_buffer(ScalarType::F32, std::vector<float>(4096, 0.5f));
    in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, std::vector<float>(1024, -1.0f));
    in.set_scalar(k.kernel(), "off", off);
    return in;
  };
  Launch fits = inputs(0);
  for (int r = 0; r < 3; ++r) {
    rt::CpuDevice::Stats before = cpu.stats();
    EXPECT_EQ(compare_bits(k.kernel(), run_interp(k, fits), run_device(cpu, k, fits)), "");
    EXPECT_EQ(cpu.stats().proven_in_bounds - before.proven_in_bounds, 1u) << r;
    EXPECT_EQ(cpu.stats().snapshots - before.snapshots, 0u) << r;
  }
  // One access past the end: the last lane's last element.
  Launch overruns = inputs(1);
  rt::CpuDevice::Stats before = cpu.stats();
  expect_same_error(interp_error(k, overruns), failing_launch(cpu, k, overruns, {}, "off 1"),
                    "off 1");
  EXPECT_EQ(cpu.stats().proven_in_bounds - before.proven_in_bounds, 0u);
  EXPECT_GE(cpu.stats().snapshots - before.snapshots, 1u);
  // A shorter w with the first offset: not provable either.
  Launch short_w = inputs(0);
  short_w.buffer(k.kernel(), "w") = make_buffer(ScalarType::F32, std::vector<float>(4095, 0.5f));
  before = cpu.stats();
  expect_same_error(interp_error(k, short_w), failing_launch(cpu, k, short_w, {}, "short w"),
                    "short w");
  EXPECT_EQ(cpu.stats().proven_in_bounds - before.proven_in_bounds, 0u);
  // And the first shapes again: still proven.
  before = cpu.stats();
  EXPECT_EQ(compare_bits(k.kernel(), run_interp(k, fits), run_device(cpu, k, fits)), "");
  EXPECT_EQ(cpu.stats().proven_in_bounds - before.proven_in_bounds, 1u);
}

// The fallback when the address space reservation fails: unguarded buffers, explicit checks.
TEST(CpuSafety, UnguardedBuffersGetExplicitChecks) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry, {.threads = 2});
  for (std::string t : {"i32", "u32", "u64"}) {
    ir::VerifiedKernel k = parse(oob_kernel("load", t));
    Launch in = oob_inputs(k, 4, as_bits(-3, bits_of(t)));
    rt::HostBuffer::force_unguarded_for_testing(true);
    Launch unguarded = in.clone();
    rt::HostBuffer::force_unguarded_for_testing(false);
    for (const rt::HostBuffer& b : unguarded.buffers)
      EXPECT_FALSE(b.guarded());
    expect_same_error(interp_error(k, in), failing_launch(cpu, k, unguarded, {}, t), t);
    // In bounds, the same bits as the interpreter.
    Launch ok = oob_inputs(k, 4, 0);
    rt::HostBuffer::force_unguarded_for_testing(true);
    Launch ok_unguarded = ok.clone();
    rt::HostBuffer::force_unguarded_for_testing(false);
    EXPECT_EQ(compare_bits(k.kernel(), run_interp(k, ok), run_device(cpu, k, ok_unguarded)), "");
  }
}

TEST(CpuSafety, GuardedBufferLayout) {
  rt::HostBuffer b(ScalarType::F64, 3);
  ASSERT_TRUE(b.guarded());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 8, 0u);
  EXPECT_EQ((reinterpret_cast<uintptr_t>(b.data()) + b.size_bytes()) % 4096, 0u);
  EXPECT_GE(static_cast<uint64_t>(b.guard_end() - (b.data() + b.size_bytes())), uint64_t{8} << 32);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(b.get_bits(i), 0u);
  rt::HostBuffer moved = std::move(b);
  EXPECT_TRUE(moved.guarded());
  EXPECT_EQ(moved.size(), 3u);
  rt::HostBuffer empty(ScalarType::U8, 0);
  EXPECT_TRUE(empty.guarded());
}

// A fault in a late workgroup of a parallel launch: the lowest failing workgroup's error, every
// buffer as it was.
TEST(CpuSafety, FaultInAParallelLaunch) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry, {.threads = 2});
  ir::VerifiedKernel k = parse(R"(kernel late workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param y: buffer<f32, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = x[mul(i, 2:u32)];
  }
})");
  size_t n = 1 << 16;
  Launch in(k.kernel(), rt::Grid::for_lanes(k.kernel(), n));
  in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, std::vector<float>(n + 1000, 1.0f));
  in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, std::vector<float>(n, -1.0f));
  expect_same_error(interp_error(k, in), failing_launch(cpu, k, in, {}, "late"), "late");
}

// Guarded code addresses a buffer index `x + c` (c a small constant) as zext(x) + c, so that
// adjacent accesses vectorise as one group. Where x + c wraps past 2^32 to a valid index, that
// address lies in the guard: the launch faults, reruns with explicit checks, and the rerun's
// results (the interpreter's wrapping indices) stand, for loads and stores, in every lane.
TEST(CpuSafety, WrappingIndexPlusConstantIsTheInterpreters) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry, {.threads = 2});
  ir::VerifiedKernel k = parse(R"(kernel wrap workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param y: buffer<f32, read_write>;
  param off: u32;
  let i: u32 = global_id(0);
  if lt(i, 1000:u32) {
    let v: f32 = add(x[add(add(i, off), 3:u32)], x[add(i, 1:u32)]);
    y[add(add(i, off), 2:u32)] = v;
  }
})");
  for (uint32_t off : {0u, 0xfffffffeu, 0xffffffffu, 0xffffff00u}) {
    SCOPED_TRACE(off);
    Launch in(k.kernel(), rt::Grid{{1024 / 64, 1, 1}});
    std::vector<float> xs(1100);
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = static_cast<float>(i) * 0.5f;
    in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, xs);
    in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, std::vector<float>(1100, -1.0f));
    in.set_scalar(k.kernel(), "off", off);
    if (off == 0xffffff00u) { // 0xffffff00 + i + 3 is out of bounds from i = 0: the error
      expect_same_error(interp_error(k, in), failing_launch(cpu, k, in, {}, "wrap"), "wrap");
      continue;
    }
    const uint64_t faults = cpu.stats().guard_faults;
    EXPECT_EQ(compare_bits(k.kernel(), run_interp(k, in), run_device(cpu, k, in)), "");
    // The wrapping offsets fault in the guard first (the point of the test), zero does not.
    EXPECT_EQ(cpu.stats().guard_faults - faults, off == 0 ? 0u : 1u);
  }
}

const char* kSpin = R"(kernel spin workgroup(1, 1, 1) {
  param y: buffer<u32, read_write>;
  y[0:u32] = 5:u32;
  while true {
  }
})";

TEST(CpuSafety, TimeoutEndsAnInfiniteLoop) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = parse(kSpin);
  Launch in(k.kernel(), rt::Grid{});
  in.buffer(k.kernel(), "y") = make_buffer(ScalarType::U32, std::vector<uint32_t>{1, 2});
  auto start = std::chrono::steady_clock::now();
  std::optional<Error> e =
      failing_launch(cpu, k, in, {.timeout = std::chrono::milliseconds(2000)}, "spin");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Timeout) << e->what();
  EXPECT_NE(std::string(e->what()).find("cpu"), std::string::npos) << e->what();
  EXPECT_GE(s, 1.9);
  EXPECT_LT(s, 3.0);
}

// Short for loops of constant bounds have no cancel poll of their own (lower_stmt.cpp,
// bounded_without_poll): the loop around them still polls. A for loop whose increment wraps
// before it reaches its end never ends, and keeps its poll.
TEST(CpuSafety, TimeoutEndsLoopsAroundAndThroughUnpolledForLoops) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  const char* kernels[] = {
      R"(kernel around workgroup(1, 1, 1) {
  param y: buffer<u32, read_write>;
  while true {
    for j: u32 = 0:u32 to 4096:u32 step 1:u32 {
      y[0:u32] = add(y[0:u32], j);
    }
  }
})",
      R"(kernel wraps workgroup(1, 1, 1) {
  param y: buffer<u32, read_write>;
  for j: u32 = 0:u32 to 4294967295:u32 step 2:u32 {
    y[0:u32] = add(y[0:u32], 1:u32);
  }
})",
      R"(kernel wraps_signed workgroup(1, 1, 1) {
  param y: buffer<i32, read_write>;
  for j: i32 = 0:i32 to 2147483647:i32 step 4:i32 {
    y[0:u32] = add(y[0:u32], 1:i32);
  }
})"};
  for (const char* text : kernels) {
    ir::VerifiedKernel k = parse(text);
    SCOPED_TRACE(k.name());
    Launch in(k.kernel(), rt::Grid{});
    const ScalarType t = k.kernel().params[0].type;
    in.buffer(k.kernel(), "y") = make_buffer(t, std::vector<uint32_t>{7, 8});
    auto start = std::chrono::steady_clock::now();
    std::optional<Error> e =
        failing_launch(cpu, k, in, {.timeout = std::chrono::milliseconds(300)}, k.name());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->kind(), ErrorKind::Timeout) << e->what();
    EXPECT_LT(s, 2.0);
  }
}

TEST(CpuSafety, CancelEndsAnInfiniteLoopWithBarriers) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry, {.threads = 2});
  ir::VerifiedKernel k = parse(R"(kernel spin_barrier workgroup(32, 1, 1) {
  param y: buffer<u32, read_write>;
  y[local_id(0)] = 5:u32;
  while true {
    barrier;
  }
})");
  Launch in(k.kernel(), rt::Grid{{4, 1, 1}});
  in.buffer(k.kernel(), "y") = make_buffer(ScalarType::U32, std::vector<uint32_t>(32, 9));
  std::atomic<bool> flag{false};
  std::thread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    flag = true;
  });
  auto start = std::chrono::steady_clock::now();
  std::optional<Error> e = failing_launch(cpu, k, in, {.cancel = &flag}, "spin_barrier");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  raiser.join();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Interrupted) << e->what();
  EXPECT_LT(s, 1.5);
  // An already raised flag: nothing runs.
  EXPECT_EQ(failing_launch(cpu, k, in, {.cancel = &flag}, "raised")->kind(),
            ErrorKind::Interrupted);
}

TEST(CpuSafety, CancellableCodeComputesTheSameBits) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = parse(R"(kernel sum_rows workgroup(8, 1, 1) {
  param x: buffer<f32, read>;
  param y: buffer<f32, write>;
  let i: u32 = global_id(0);
  let acc: f32 = 0.0:f32;
  for j: u32 = 0:u32 to 16:u32 step 1:u32 {
    acc = add(acc, x[add(mul(i, 16:u32), j)]);
  }
  y[i] = acc;
})");
  Launch in(k.kernel(), rt::Grid{{4, 1, 1}});
  std::vector<float> x(32 * 16);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 1.0f / static_cast<float>(i + 1);
  in.buffer(k.kernel(), "x") = make_buffer(ScalarType::F32, x);
  in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, std::vector<float>(32, 0.0f));
  EXPECT_EQ(compare_bits(k.kernel(), run_interp(k, in),
                         run_device(cpu, k, in, {.timeout = std::chrono::milliseconds(60000)})),
            "");
}

TEST(CpuSafety, HugeSizesAreCleanErrors) {
  try {
    rt::HostBuffer b(ScalarType::F32, uint64_t{1} << 62);
    ADD_FAILURE() << "a buffer of 2^64 bytes was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
  }
  try {
    rt::HostBuffer b(ScalarType::F32, uint64_t{1} << 50);
    ADD_FAILURE() << "a buffer of 4 PiB was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Device) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of host memory"), std::string::npos);
  }
  ir::VerifiedKernel k = parse(kSpin);
  for (uint64_t lanes : {~uint64_t{0}, uint64_t{1} << 32 | 1})
    EXPECT_THROW(rt::Grid::for_lanes(k.kernel(), lanes), Error);
  EXPECT_EQ(rt::Grid::for_lanes(k.kernel(), 0xffffffffull).groups[0], 0xffffffffu);
}

TEST(CpuSafety, SharedMemoryOverTheLimitIsALimitError) {
  policy::Registry registry;
  rt::CpuDevice cpu(&registry);
  ir::VerifiedKernel k = parse(R"(kernel big_shared workgroup(1, 1, 1) {
  param y: buffer<f32, write>;
  shared t: f32[20000000];
  y[0:u32] = t[0:u32];
})");
  Launch in(k.kernel(), rt::Grid{});
  in.buffer(k.kernel(), "y") = make_buffer(ScalarType::F32, std::vector<float>{1.0f});
  std::optional<Error> e = failing_launch(cpu, k, in, {}, "big_shared");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), ErrorKind::Limit) << e->what();
}

} // namespace
