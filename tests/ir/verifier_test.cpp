// Every verifier rejection, each checked by its message. Kernels are built either with the DSL's
// unverified build_kernel() or by hand, for shapes the DSL cannot produce.
#include "halfway/dsl.hpp"
#include "halfway/ir/error.hpp"
#include "halfway/ir/verifier.hpp"

#include <gtest/gtest.h>

using namespace halfway;
using ir::ScalarType;

namespace {

std::string rejection(ir::Kernel k) {
  try {
    ir::verify(std::move(k));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Verify);
    return e.what();
  }
  return "accepted";
}

#define EXPECT_REJECTED(kernel, fragment)                                                          \
  do {                                                                                             \
    std::string msg = rejection(kernel);                                                           \
    EXPECT_NE(msg.find(fragment), std::string::npos) << "message: " << msg;                        \
  } while (0)

// A hand-built kernel with one f32 buffer `x` (read_write) and one f16 buffer `h` (write).
ir::Kernel base() {
  ir::Kernel k;
  k.name = "k";
  k.workgroup = {64, 1, 1};
  k.params.push_back({"x", ir::Param::Kind::Buffer, ScalarType::F32, ir::Access::ReadWrite});
  k.params.push_back({"h", ir::Param::Kind::Buffer, ScalarType::F16, ir::Access::Write});
  return k;
}
ir::ExprId constant(ir::Kernel& k, ScalarType t, uint64_t bits) {
  ir::Expr e;
  e.op = ir::Op::Const;
  e.type = t;
  e.imm = bits;
  return k.add(e);
}
ir::ExprId binary(ir::Kernel& k, ir::Op op, ScalarType t, ir::ExprId a, ir::ExprId b) {
  ir::Expr e;
  e.op = op;
  e.type = t;
  e.nargs = 2;
  e.args = {a, b, ir::kNone, ir::kNone};
  return k.add(e);
}
ir::Stmt store(uint32_t mem, ir::ExprId index, ir::ExprId value) {
  ir::Stmt s;
  s.kind = ir::StmtKind::Store;
  s.mem = mem;
  s.a = index;
  s.b = value;
  return s;
}

TEST(Verifier, AcceptsWellFormedKernel) {
  auto k = base();
  auto i = constant(k, ScalarType::U32, 0);
  auto one = constant(k, ScalarType::F32, 0x3f800000);
  k.body.push_back(store(0, i, one));
  EXPECT_EQ(rejection(k), "accepted");
}

TEST(Verifier, RejectsTypeMismatchInArithmetic) {
  auto k = base();
  auto i = constant(k, ScalarType::U32, 0);
  auto f = constant(k, ScalarType::F32, 0x3f800000);
  auto h = constant(k, ScalarType::F16, 0x3c00);
  auto sum = binary(k, ir::Op::Add, ScalarType::F32, f, h);
  k.body.push_back(store(0, i, sum));
  std::string msg = rejection(k);
  EXPECT_NE(msg.find("kernel k"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node " + std::to_string(sum)), std::string::npos) << msg;
  EXPECT_NE(msg.find("add mixes f16 and f32; convert explicitly"), std::string::npos) << msg;
}

TEST(Verifier, RejectsImplicitNarrowingInStore) {
  auto k = base();
  auto i = constant(k, ScalarType::U32, 0);
  auto f = constant(k, ScalarType::F32, 0x3f800000);
  k.body.push_back(store(1, i, f));
  EXPECT_REJECTED(k, "implicit narrowing from f32 to f16 in store to h; write narrow<f16>(...)");
}

TEST(Verifier, RejectsImplicitNarrowingInLet) {
  auto k = base();
  k.locals.push_back({"v", ScalarType::BF16});
  ir::Stmt s;
  s.kind = ir::StmtKind::Let;
  s.local = 0;
  s.a = constant(k, ScalarType::F32, 0);
  k.body.push_back(s);
  EXPECT_REJECTED(k, "implicit narrowing from f32 to bf16 in let v");
}

TEST(Verifier, RejectsStoreToReadOnlyBuffer) {
  auto k = build_kernel("ro", {64}, {"x"}, [](In<float> x) { (void)x; });
  auto i = constant(k, ScalarType::U32, 0);
  auto f = constant(k, ScalarType::F32, 0);
  k.body.push_back(store(0, i, f));
  EXPECT_REJECTED(k, "store to read-only buffer 'x'");
}

TEST(Verifier, RejectsLoadFromWriteOnlyBuffer) {
  auto k = build_kernel("wo", {64}, {"y"}, [](Out<float> y) { y[0u] = y[1u] + 1.0f; });
  EXPECT_REJECTED(k, "load from write-only buffer 'y'");
}

TEST(Verifier, RejectsUseOfUndefinedLocal) {
  auto k = base();
  k.locals.push_back({"ghost", ScalarType::F32});
  ir::Expr get;
  get.op = ir::Op::LocalGet;
  get.type = ScalarType::F32;
  get.ref = 0;
  auto g = k.add(get);
  k.body.push_back(store(0, constant(k, ScalarType::U32, 0), g));
  EXPECT_REJECTED(k, "use of undefined local 'ghost'");
}

TEST(Verifier, RejectsLocalUsedAfterItsScope) {
  auto k = build_kernel("scope", {64}, {"x"}, [](InOut<float> x) {
    Value<float> leaked = 0.0f;
    If(global_id(0) == 0u, [&] {
      Var inner(1.0f, "inner");
      leaked = inner;
    });
    x[0u] = leaked;
  });
  EXPECT_REJECTED(k, "use of undefined local 'inner'");
}

TEST(Verifier, RejectsBarrierUnderLaneDependentIf) {
  auto k = build_kernel("bad_barrier", {64}, {"x"}, [](InOut<float> x) {
    If(local_id(0) < 32u, [&] { Barrier(); });
    x[0u] = 1.0f;
  });
  EXPECT_REJECTED(k, "barrier in non-uniform control flow");
}

TEST(Verifier, RejectsBarrierAfterDivergentReturn) {
  auto k = build_kernel("early_exit", {64}, {"x"}, [](InOut<float> x) {
    If(global_id(0) >= x.size(), [&] { Return(); });
    Barrier();
  });
  EXPECT_REJECTED(k, "barrier in non-uniform control flow");
}

TEST(Verifier, RejectsBarrierInLoopBoundedByLaneTaintedLocal) {
  auto k = build_kernel("tainted_loop", {64}, {"x"}, [](InOut<float> x) {
    Var n(local_id(0) + 1u, "n");
    For(0u, n, [&](Value<uint32_t>) { Barrier(); });
    x[0u] = 1.0f;
  });
  EXPECT_REJECTED(k, "barrier in non-uniform control flow");
}

TEST(Verifier, AcceptsBarrierUnderUniformControl) {
  auto k = build_kernel("uniform", {64}, {"x"}, [](InOut<float> x) {
    Var stride(32u, "stride");
    While([&] { return stride > 0u; },
          [&] {
            If(local_id(0) < stride, [&] { x[local_id(0)] = x[local_id(0)] + 1.0f; });
            Barrier();
            stride = stride >> 1u;
          });
    If(group_id(0) == 0u, [&] { Barrier(); });
  });
  EXPECT_EQ(rejection(k), "accepted");
}

TEST(Verifier, RejectsArithmeticOnFp8) {
  auto k = base();
  auto a = constant(k, ScalarType::E4M3, 0x38);
  auto sum = binary(k, ir::Op::Add, ScalarType::E4M3, a, a);
  auto wide = k.add({ir::Op::Convert, ScalarType::F32, 1, {sum, ir::kNone, ir::kNone, ir::kNone}});
  k.body.push_back(store(0, constant(k, ScalarType::U32, 0), wide));
  EXPECT_REJECTED(k, "add is not defined for e4m3: fp8 is a storage format; widen to f32 first");
}

TEST(Verifier, RejectsBreakOutsideLoop) {
  auto k = base();
  ir::Stmt s;
  s.kind = ir::StmtKind::Break;
  k.body.push_back(s);
  EXPECT_REJECTED(k, "break outside a loop");
}

TEST(Verifier, RejectsNonBoolCondition) {
  auto k = base();
  ir::Stmt s;
  s.kind = ir::StmtKind::If;
  s.a = constant(k, ScalarType::U32, 1);
  k.body.push_back(s);
  EXPECT_REJECTED(k, "if condition has type u32, not bool");
}

TEST(Verifier, RejectsFloatIndex) {
  auto k = base();
  k.body.push_back(store(0, constant(k, ScalarType::F32, 0), constant(k, ScalarType::F32, 0)));
  EXPECT_REJECTED(k, "index into 'x' has type f32; indices are integers");
}

TEST(Verifier, RejectsDuplicateNamesAndBadWorkgroups) {
  auto k = base();
  k.params.push_back({"x", ir::Param::Kind::Scalar, ScalarType::F32, ir::Access::Read});
  EXPECT_REJECTED(k, "duplicate name 'x'");
  auto w = base();
  w.workgroup = {64, 32, 1};
  EXPECT_REJECTED(w, "workgroup of 2048 lanes exceeds 1024");
  auto z = base();
  z.workgroup = {0, 1, 1};
  EXPECT_REJECTED(z, "workgroup size has a zero dimension");
  // Sizes whose product wraps 32 or 64 bits are refused, not reduced modulo 2^n.
  ir::Kernel wrap = base();
  wrap.workgroup = {65536, 65536, 1};
  EXPECT_REJECTED(wrap, "workgroup of over 2^32 lanes exceeds 1024 (65536 x 65536 x 1)");
  ir::Kernel huge = base();
  huge.workgroup = {0xffffffffu, 0xffffffffu, 0xffffffffu};
  EXPECT_REJECTED(huge, "workgroup of over 2^32 lanes exceeds 1024");
  EXPECT_EQ(huge.workgroup_lanes(), 0xffffffffu);
}

TEST(Verifier, RejectsNamesTheTextFormCannotReadBack) {
  auto k = base();
  k.params.push_back({"true", ir::Param::Kind::Scalar, ScalarType::F32, ir::Access::Read});
  EXPECT_REJECTED(k, "parameter name 'true' is reserved for literals");
  auto n = base();
  n.name = "two\nlines";
  EXPECT_REJECTED(n, "kernel name contains a control character");
  EXPECT_REJECTED(n, "kernel two\\x0alines:"); // the message escapes it
  for (const char* bad : {"csi\xc2\x9b", "byte\xff", "esc\x1b[31m", "del\x7f"}) {
    auto b = base();
    b.name = bad;
    EXPECT_REJECTED(b, "kernel name contains a control character or malformed UTF-8");
  }
  auto utf8 = base();
  utf8.name = "caf\xc3\xa9<f16>";
  EXPECT_EQ(rejection(utf8), "accepted");
}

TEST(Verifier, RejectsLocalShadowing) {
  auto k = build_kernel("shadow", {64}, {"x"}, [](InOut<float> x) {
    Var a(1.0f, "v");
    If(global_id(0) == 0u, [&] {
      Var b(2.0f, "v");
      x[0u] = a + b;
    });
  });
  EXPECT_REJECTED(k, "local 'v' shadows another local in scope");
}

TEST(Verifier, RejectsAtomicsOnFloatsAndReadOnlyBuffers) {
  auto k = base();
  ir::Stmt s;
  s.kind = ir::StmtKind::Atomic;
  s.atomic = ir::AtomicOp::Add;
  s.mem = 0;
  s.a = constant(k, ScalarType::U32, 0);
  s.b = constant(k, ScalarType::F32, 0);
  k.body.push_back(s);
  EXPECT_REJECTED(k, "atomic_add on f32 elements; atomics take i32, u32, i64 or u64");
}

TEST(Verifier, RejectsBadPackAndBitcast) {
  auto k = base();
  auto h = constant(k, ScalarType::F16, 0x3c00);
  ir::Expr p;
  p.op = ir::Op::Pack;
  p.type = ScalarType::U32;
  p.aux = ScalarType::F16;
  p.nargs = 3;
  p.args = {h, h, h, ir::kNone};
  auto packed = k.add(p);
  auto as_float =
      k.add({ir::Op::Bitcast, ScalarType::F32, 1, {packed, ir::kNone, ir::kNone, ir::kNone}});
  k.body.push_back(store(0, constant(k, ScalarType::U32, 0), as_float));
  EXPECT_REJECTED(k, "pack<f16> takes 2 operands");

  auto b = base();
  auto f = constant(b, ScalarType::F32, 0);
  auto wide = b.add({ir::Op::Bitcast, ScalarType::U64, 1, {f, ir::kNone, ir::kNone, ir::kNone}});
  ir::Stmt let;
  b.locals.push_back({"w", ScalarType::U64});
  let.kind = ir::StmtKind::Let;
  let.local = 0;
  let.a = wide;
  b.body.push_back(let);
  EXPECT_REJECTED(b, "bitcast from f32 to u64 changes the width");
}

TEST(Verifier, NeverCrashesOnDanglingReferences) {
  auto k = base();
  k.body.push_back(store(7, 12345, 999));
  EXPECT_REJECTED(k, "access to a missing buffer");
  auto e = base();
  e.body.push_back(store(0, 12345, 999));
  EXPECT_REJECTED(e, "reference to a missing expression node");
}

TEST(Verifier, DslRefusesToUseBuilderOutsideKernel) {
  try {
    (void)global_id(0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("outside a kernel body"), std::string::npos);
  }
}

TEST(Verifier, RejectsSharedMemoryPastTheAbsoluteCap) {
  ir::Kernel one = base();
  one.shared.push_back({"t", ScalarType::F64, 4294967295u});
  EXPECT_REJECTED(one, "kernel k: shared array 't' of 4294967295 f64 elements (34359738360 "
                       "bytes) takes the kernel's shared memory to 34359738360 bytes, over the "
                       "limit of 2147483648 bytes");
  // Two arrays, each within the cap, over it together.
  ir::Kernel two = base();
  two.shared.push_back({"a", ScalarType::F32, 1u << 29});
  two.shared.push_back({"b", ScalarType::U8, 2});
  EXPECT_REJECTED(two, "shared array 'b' of 2 u8 elements (2 bytes) takes the kernel's shared "
                       "memory to 2147483650 bytes");
  // Exactly the cap is allowed.
  ir::Kernel cap = base();
  cap.shared.push_back({"a", ScalarType::F32, 1u << 29});
  EXPECT_EQ(rejection(cap), "accepted");
}

} // namespace
