// Every class of undefined behaviour the interpreter reports, each triggered and its message
// checked; failed launches leave buffers untouched; the lowest failing workgroup is reported.
#include "examples.hpp"
#include "helpers.hpp"

using namespace halfway;
using namespace halfway::interp;
using namespace halfway::interp::test;
using ir::ScalarType;

namespace {

rt::HostBuffer iota_f32(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) + 0.5f;
  return buffer(ScalarType::F32, v);
}

TEST(Errors, OutOfBoundsLoadNamesBufferIndexLengthWorkgroupAndLane) {
  auto x = iota_f32(100), y = iota_f32(70); // y too short: y[70] is read by workgroup 1, lane 6
  const rt::HostBuffer before = y.clone();
  auto k = examples::saxpy();
  Error e = launch_error(k, rt::Grid::for_lanes(k.kernel(), 100),
                         {rt::Arg::of(x), rt::Arg::of(y), rt::Arg::f32(2)});
  EXPECT_EQ(e.kind(), ErrorKind::OutOfBounds);
  EXPECT_EQ(e.context().kernel, "saxpy");
  EXPECT_EQ(e.context().buffer, "y");
  EXPECT_EQ(e.context().index, 70u);
  EXPECT_EQ(e.context().length, 70u);
  EXPECT_EQ(e.context().workgroup, 1u);
  EXPECT_EQ(e.context().lane, 6u);
  EXPECT_TRUE(e.context().node.has_value());
  EXPECT_HAS(e.what(), "out-of-bounds access: kernel saxpy");
  EXPECT_HAS(e.what(), "load from buffer y out of bounds: index 70, length 70");
  EXPECT_HAS(e.what(), "[buffer y, index 70, length 70, workgroup 1, lane 6]");
  EXPECT_TRUE(y == before) << "a failed launch must leave y as it was";
}

TEST(Errors, OutOfBoundsStore) {
  auto k = kernel("shift_copy", {64}, {"x", "out"}, [](In<float> x, Out<float> out) {
    Var i(global_id(0), "i");
    If(i < x.size(), [&] { out[i + 3u] = x[i]; });
  });
  auto x = iota_f32(100), out = iota_f32(100);
  const rt::HostBuffer before = out.clone();
  Error e =
      launch_error(k, rt::Grid::for_lanes(k.kernel(), 100), {rt::Arg::of(x), rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::OutOfBounds);
  EXPECT_HAS(e.what(), "store to buffer out out of bounds: index 100, length 100");
  EXPECT_HAS(e.what(), "[buffer out, index 100, length 100, workgroup 1, lane 33]");
  EXPECT_TRUE(out == before);
}

TEST(Errors, NegativeIndex) {
  auto k = kernel("previous", {64}, {"x", "out"}, [](In<float> x, Out<float> out) {
    Var i(convert<int32_t>(global_id(0)), "i");
    out[i] = x[i - 1];
  });
  auto x = iota_f32(64), out = iota_f32(64);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(x), rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::OutOfBounds);
  EXPECT_HAS(e.what(), "load from buffer x at negative index -1 (length 64)");
  EXPECT_EQ(e.context().lane, 0u);
  EXPECT_FALSE(e.context().index.has_value());
}

TEST(Errors, SharedOutOfBounds) {
  auto k = kernel("shared_oob", {64}, {"out"}, [](Out<uint32_t> out) {
    Shared<uint32_t> tile("tile", 32);
    Var lid(local_id(0), "lid");
    tile[lid] = lid;
    Barrier();
    out[lid] = tile[0u];
  });
  rt::HostBuffer out(ScalarType::U32, 64);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::OutOfBounds);
  EXPECT_HAS(e.what(), "store to shared tile out of bounds: index 32, length 32");
  EXPECT_EQ(e.context().lane, 32u);
}

TEST(Errors, IntegerDivisionByZero) {
  auto k =
      kernel("quotient", {64}, {"a", "b", "q"}, [](In<int32_t> a, In<int32_t> b, Out<int32_t> q) {
        Var i(global_id(0), "i");
        q[i] = a[i] / b[i];
      });
  std::vector<int32_t> va(128, 7), vb(128, 2);
  vb[101] = 0;
  auto a = buffer(ScalarType::I32, va), b = buffer(ScalarType::I32, vb);
  rt::HostBuffer q(ScalarType::I32, 128);
  Error e = launch_error(k, rt::Grid{{2, 1, 1}}, {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(q)});
  EXPECT_EQ(e.kind(), ErrorKind::DivideByZero);
  EXPECT_HAS(e.what(), "integer division by zero: kernel quotient, node");
  EXPECT_HAS(e.what(), "div of i32 by zero");
  EXPECT_HAS(e.what(), "workgroup 1, lane 37");
  EXPECT_EQ(q, rt::HostBuffer(ScalarType::I32, 128)) << "q must stay zero";
}

TEST(Errors, IntegerRemainderByZero) {
  auto k = kernel("remainder", {64}, {"a", "b", "q"},
                  [](In<uint32_t> a, In<uint32_t> b, Out<uint32_t> q) {
                    Var i(global_id(0), "i");
                    q[i] = a[i] % b[i];
                  });
  std::vector<uint32_t> va(64, 7), vb(64, 3);
  vb[9] = 0;
  auto a = buffer(ScalarType::U32, va), b = buffer(ScalarType::U32, vb);
  rt::HostBuffer q(ScalarType::U32, 64);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(q)});
  EXPECT_EQ(e.kind(), ErrorKind::DivideByZero);
  EXPECT_HAS(e.what(), "rem of u32 by zero");
  EXPECT_EQ(e.context().lane, 9u);
}

template <class T> Error shift_error(ScalarType t, T amount, uint32_t lane) {
  auto k = kernel("shift", {64}, {"a", "s", "r"}, [](In<T> a, In<T> s, Out<T> r) {
    Var i(global_id(0), "i");
    r[i] = a[i] << s[i];
  });
  std::vector<T> va(64, 1), vs(64, 3);
  vs[lane] = amount;
  auto a = buffer(t, va), s = buffer(t, vs);
  rt::HostBuffer r(t, 64);
  return launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(a), rt::Arg::of(s), rt::Arg::of(r)});
}

TEST(Errors, ShiftByWidthOrMore) {
  Error e = shift_error<uint32_t>(ScalarType::U32, 32, 5);
  EXPECT_EQ(e.kind(), ErrorKind::ShiftOverflow);
  EXPECT_HAS(e.what(), "shift overflow: kernel shift");
  EXPECT_HAS(e.what(), "shl of u32 by 32, not below the width 32");
  EXPECT_EQ(e.context().lane, 5u);
  Error neg = shift_error<int16_t>(ScalarType::I16, -1, 60);
  EXPECT_HAS(neg.what(), "shl of i16 by -1, not below the width 16");
  EXPECT_EQ(neg.context().lane, 60u);
  Error wide = shift_error<uint64_t>(ScalarType::U64, 64, 0);
  EXPECT_HAS(wide.what(), "shl of u64 by 64");
}

// A barrier reached by part of a workgroup. The verifier refuses every shape that could do this
// (see tests/ir/verifier_test.cpp), including this one, which once slipped through: assigning a
// lane-dependent value to a for loop's own variable. The interpreter's run-time barrier check
// stays as defence in depth; no verified kernel reaches it.
TEST(Errors, BarrierReachedByPartOfTheWorkgroup) {
  ir::Kernel k = build_kernel("split_loop", {64}, {"out"}, [](Out<int32_t> out) {
    For(0, 4, [&](Value<int32_t>) { Barrier(); });
    out[local_id(0)] = 1;
  });
  // for j = 0; j < 4; j += 1 { barrier; j = j + local_id }
  ir::Stmt& loop = k.body[0];
  ir::Expr get{.op = ir::Op::LocalGet, .type = ScalarType::I32};
  get.ref = loop.local;
  ir::Expr lid{.op = ir::Op::LocalId, .type = ScalarType::U32};
  ir::Expr lid32{.op = ir::Op::Convert, .type = ScalarType::I32, .nargs = 1};
  lid32.args[0] = k.add(lid);
  ir::Expr sum{.op = ir::Op::Add, .type = ScalarType::I32, .nargs = 2};
  sum.args[0] = k.add(get);
  sum.args[1] = k.add(lid32);
  ir::Stmt assign;
  assign.kind = ir::StmtKind::Assign;
  assign.local = loop.local;
  assign.a = k.add(sum);
  loop.body.push_back(assign);
  try {
    ir::verify(std::move(k));
    FAIL() << "a lane-dependent for loop with a barrier passed verification";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Verify);
    EXPECT_HAS(e.what(), "barrier in non-uniform control flow");
  }
}

TEST(Errors, SharedReadAfterAnotherLanesWriteWithoutBarrier) {
  auto k = kernel("neighbour", {64}, {"out"}, [](Out<uint32_t> out) {
    Shared<uint32_t> tile("tile", 64);
    Var lid(local_id(0), "lid");
    tile[lid] = lid;
    out[lid] = tile[(lid + 1u) % 64u]; // needs a barrier before it
  });
  rt::HostBuffer out(ScalarType::U32, 64);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::DataRace);
  EXPECT_HAS(e.what(), "shared-memory data race: kernel neighbour");
  EXPECT_HAS(e.what(),
             "lane 1 wrote shared tile[1] and lane 0 reads it with no barrier in between");
  EXPECT_HAS(e.what(), "[buffer tile, index 1, length 64, workgroup 0, lane 0]");
}

TEST(Errors, SharedWriteWriteRace) {
  auto k = kernel("last_writer", {64}, {"out"}, [](Out<uint32_t> out) {
    Shared<uint32_t> tile("tile", 1);
    tile[0u] = local_id(0);
    Barrier();
    out[local_id(0)] = tile[0u];
  });
  rt::HostBuffer out(ScalarType::U32, 64);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::DataRace);
  EXPECT_HAS(e.what(),
             "lane 0 wrote shared tile[0] and lane 1 writes it with no barrier in between");
}

TEST(Errors, PlainReadOfAnElementOtherLanesUpdateAtomically) {
  auto k = kernel("count", {64}, {"out"}, [](Out<uint32_t> out) {
    Shared<uint32_t> counter("counter", 1);
    atomic_add(counter[0u], 1u); // atomics do not race with each other
    out[local_id(0)] = counter[0u];
  });
  rt::HostBuffer out(ScalarType::U32, 64);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::DataRace);
  EXPECT_HAS(e.what(), "lane 1 updated atomically shared counter[0] and lane 0 reads it");
}

// Reads of an array with no write since the barrier are logged and checked when the first write
// comes (Exec::shared_access): the write still finds the earlier read by another lane.
TEST(Errors, SharedWriteAfterAnotherLanesReadWithoutBarrier) {
  auto k = kernel("read_then_write", {64}, {"out"}, [](Out<uint32_t> out) {
    Shared<uint32_t> tile("tile", 64);
    Var lid(local_id(0), "lid");
    out[lid] = tile[(lid + 1u) % 64u]; // lane 63 reads tile[0]
    tile[lid] = lid;                   // lane 0 writes it
  });
  rt::HostBuffer out(ScalarType::U32, 64);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::DataRace);
  EXPECT_HAS(e.what(),
             "lane 63 read shared tile[0] and lane 0 writes it with no barrier in between");
  EXPECT_EQ(e.context().lane, 0u);
}

// The same through a rank-2 array read by every lane at once (the all-lanes path), and a read
// that only one lane makes after many others read: the first two distinct readers are named.
TEST(Errors, Rank2SharedWriteAfterReadsWithoutBarrier) {
  auto k = kernel("tile_race", {4, 4}, {"out"}, [](Out<float> out) {
    Shared<float, 4, 4> tile("tile");
    Var tx(local_id(0), "tx");
    Var ty(local_id(1), "ty");
    Var lane(ty * 4u + tx, "lane");
    out[lane] = tile[tx][ty] + tile[0u][0u]; // every lane reads tile[0][0]
    If(lane == 5u, [&] { tile[0u][0u] = 1.0f; });
  });
  rt::HostBuffer out(ScalarType::F32, 16);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::DataRace);
  EXPECT_HAS(e.what(),
             "lane 0 read shared tile[0] and lane 5 writes it with no barrier in between");
}

// A read-only loop longer than the read log (Exec::kMaxLoggedReads, 65536 reads) switches to
// checking every access at once; a later write by another lane is still a race, and reads before a
// barrier never race with writes after it.
TEST(Errors, LongReadOnlyLoopThenWrite) {
  auto k = kernel("long_reads", {64}, {"out", "rounds", "race"},
                  [](Out<uint32_t> out, Scalar<uint32_t> rounds, Scalar<uint32_t> race) {
                    Shared<uint32_t> tile("tile", 64);
                    Var lid(local_id(0), "lid");
                    Var sum(0u, "sum");
                    For(0u, rounds, [&](Value<uint32_t>) {
                      // Not every lane: the lane-by-lane path.
                      If(lid != 7u, [&] { sum = sum + tile[(lid + 3u) % 64u]; });
                    });
                    If(race == 0u, [&] { Barrier(); });
                    tile[lid] = lid;
                    out[lid] = sum;
                  });
  for (uint32_t rounds : {1u, 2000u}) {
    rt::HostBuffer out(ScalarType::U32, 64);
    Error e = launch_error(k, rt::Grid{{1, 1, 1}},
                           {rt::Arg::of(out), rt::Arg::u32(rounds), rt::Arg::u32(1)});
    EXPECT_EQ(e.kind(), ErrorKind::DataRace) << rounds;
    EXPECT_HAS(e.what(),
               "lane 61 read shared tile[0] and lane 0 writes it with no barrier in between");
    launch(k, 64, {rt::Arg::of(out), rt::Arg::u32(rounds), rt::Arg::u32(0)});
  }
}

// A barrier whose last interval wrote the array starts the next one checking it at once (no log):
// the race in the second round is found there with the same message.
TEST(Errors, RaceInAnIntervalCheckedAtOnce) {
  auto k = kernel("rounds", {64}, {"out"}, [](Out<uint32_t> out) {
    Shared<uint32_t> tile("tile", 64);
    Var lid(local_id(0), "lid");
    For(0u, 2u, [&](Value<uint32_t> r) {
      Barrier();
      Var v(tile[(lid + r) % 64u], "v"); // round 0 reads its own element, round 1 the next
      tile[lid] = v + 1u;
    });
    out[lid] = tile[lid];
  });
  rt::HostBuffer out(ScalarType::U32, 64);
  Error e = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(out)});
  EXPECT_EQ(e.kind(), ErrorKind::DataRace);
  EXPECT_HAS(e.what(),
             "lane 63 read shared tile[0] and lane 0 writes it with no barrier in between");
}

TEST(Errors, BarrierSeparatesSharedAccesses) {
  auto k = kernel("neighbour_ok", {64}, {"out"}, [](Out<uint32_t> out) {
    Shared<uint32_t> tile("tile", 64);
    Var lid(local_id(0), "lid");
    tile[lid] = lid * 10u;
    Barrier();
    out[lid] = tile[(lid + 1u) % 64u];
  });
  rt::HostBuffer out(ScalarType::U32, 64);
  launch(k, 64, {rt::Arg::of(out)});
  auto got = contents<uint32_t>(out);
  for (uint32_t l = 0; l < 64; ++l)
    EXPECT_EQ(got[l], (l + 1) % 64 * 10);
}

// Buffers are restored however the launch fails, with many workgroups on several threads, and
// when one buffer is bound to two parameters.
TEST(Errors, FailedLaunchLeavesEveryBufferAsItWas) {
  auto k = kernel("two_outputs", {64}, {"x", "d", "y", "z"},
                  [](In<int32_t> x, In<int32_t> d, InOut<int32_t> y, Out<int32_t> z) {
                    Var i(global_id(0), "i");
                    y[i] = y[i] + x[i];
                    z[i] = x[i] / d[i];
                  });
  const size_t n = 64 * 1000;
  std::vector<int32_t> vx(n), vd(n, 1), vy(n), vz(n);
  for (size_t i = 0; i < n; ++i)
    vx[i] = static_cast<int32_t>(i), vy[i] = 3, vz[i] = -1;
  vd[n - 5] = 0; // the last workgroup fails, after every other one wrote y and z
  for (unsigned threads : {1u, 2u, 4u}) {
    auto x = buffer(ScalarType::I32, vx), d = buffer(ScalarType::I32, vd);
    auto y = buffer(ScalarType::I32, vy), z = buffer(ScalarType::I32, vz);
    Options o;
    o.threads = threads;
    Error e = launch_error(k, rt::Grid{{1000, 1, 1}},
                           {rt::Arg::of(x), rt::Arg::of(d), rt::Arg::of(y), rt::Arg::of(z)}, o);
    EXPECT_EQ(e.kind(), ErrorKind::DivideByZero);
    EXPECT_EQ(contents<int32_t>(y), vy) << threads << " threads";
    EXPECT_EQ(contents<int32_t>(z), vz) << threads << " threads";
  }
  // One buffer as both outputs.
  auto x = buffer(ScalarType::I32, vx), d = buffer(ScalarType::I32, vd),
       yz = buffer(ScalarType::I32, vy);
  launch_error(k, rt::Grid{{1000, 1, 1}},
               {rt::Arg::of(x), rt::Arg::of(d), rt::Arg::of(yz), rt::Arg::of(yz)});
  EXPECT_EQ(contents<int32_t>(yz), vy);
}

// Workgroup 2 fails in a later statement than workgroup 5 does; both run in one lockstep batch
// (and, with many workgroups, in different batches on different threads). Workgroup 2 is reported.
TEST(Errors, LowestFailingWorkgroupIsReported) {
  auto k = kernel("two_divisions", {64}, {"x", "d1", "d2", "y"},
                  [](In<int32_t> x, In<int32_t> d1, In<int32_t> d2, Out<int32_t> y) {
                    Var i(global_id(0), "i");
                    Var q(x[i] / d1[i], "q");
                    y[i] = q / d2[i];
                  });
  for (uint32_t groups : {8u, 4096u}) {
    const size_t n = 64 * size_t{groups};
    std::vector<int32_t> vx(n, 12), d1(n, 1), d2(n, 1);
    d1[5 * 64 + 10] = 0;       // workgroup 5, first division
    d2[2 * 64 + 40] = 0;       // workgroup 2, second division
    d1[(groups - 1) * 64] = 0; // the last workgroup too
    auto x = buffer(ScalarType::I32, vx), b1 = buffer(ScalarType::I32, d1),
         b2 = buffer(ScalarType::I32, d2);
    rt::HostBuffer y(ScalarType::I32, n);
    std::vector<rt::Arg> args = {rt::Arg::of(x), rt::Arg::of(b1), rt::Arg::of(b2), rt::Arg::of(y)};
    for (int mode = 0; mode < 3; ++mode) {
      Options o;
      o.deterministic = mode == 0;
      o.threads = mode == 2 ? 4 : 0;
      Error e = launch_error(k, rt::Grid{{groups, 1, 1}}, args, o);
      EXPECT_EQ(e.context().workgroup, 2u) << groups << " groups, mode " << mode;
      EXPECT_EQ(e.context().lane, 40u);
      EXPECT_HAS(e.what(), "div of i32 by zero");
    }
  }
}

TEST(Errors, ArgumentsThatDoNotFitAreUsageErrors) {
  auto k = examples::saxpy();
  auto x = iota_f32(64);
  rt::HostBuffer y16(ScalarType::F16, 64);
  Error count = launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(x)});
  EXPECT_EQ(count.kind(), ErrorKind::Usage);
  Error type =
      launch_error(k, rt::Grid{{1, 1, 1}}, {rt::Arg::of(x), rt::Arg::of(y16), rt::Arg::f32(1)});
  EXPECT_EQ(type.kind(), ErrorKind::Usage);
  EXPECT_HAS(type.what(), "buffer y holds f32 elements; a f16 buffer was given");
}

} // namespace
