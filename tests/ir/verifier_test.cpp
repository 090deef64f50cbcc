// Verifier rejections the text form cannot express: kernels built with the DSL's unverified
// build_kernel() or by hand (dangling references, names and shapes the parser refuses first).
// Every rejection a .hk file can reach is checked by its exact message, with file:line:column, in
// tests/lit/verify/.
#include "halfway/dsl.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/support/error.hpp"

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
ir::Stmt store(uint32_t mem, ir::ExprId index, ir::ExprId value) {
  ir::Stmt s;
  s.kind = ir::StmtKind::Store;
  s.mem = mem;
  s.a = index;
  s.b = value;
  return s;
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

TEST(Verifier, RejectsDuplicateNamesAndBadWorkgroups) {
  // The text form refuses a duplicate name while parsing; kernels built in C++ reach the verifier.
  auto k = base();
  k.params.push_back({"x", ir::Param::Kind::Scalar, ScalarType::F32, ir::Access::Read});
  EXPECT_REJECTED(k, "duplicate name 'x'");
  // The lane count saturates instead of wrapping (the messages are in tests/lit/verify/).
  ir::Kernel huge = base();
  huge.workgroup = {0xffffffffu, 0xffffffffu, 0xffffffffu};
  EXPECT_EQ(huge.workgroup_lanes(), 0xffffffffu);
  EXPECT_REJECTED(huge, "workgroup of over 2^32 lanes exceeds 1024");
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

TEST(Verifier, RejectsBadPack) {
  // The parser counts operands from the op table, so only a hand-built kernel gets this far.
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

} // namespace

namespace {

// Array shapes have one spelling each (ir::SharedArray), so that equal text means equal kernels.
TEST(Verifier, RejectsArrayShapesWithoutTheirCanonicalSpelling) {
  auto k = base();
  k.shared.push_back({"t", ScalarType::F32, 16, {16, 0, 0}});
  EXPECT_REJECTED(k, "shared array 't' lists one dimension; a rank-1 array leaves dims empty");
  k = base();
  k.shared.push_back({"t", ScalarType::F32, 16, {0, 4, 4}});
  EXPECT_REJECTED(k, "shared array 't' lists an inner dimension without an outer one");
  k = base();
  k.privates.push_back({"p", ScalarType::F32, 12, {4, 4, 0}});
  EXPECT_REJECTED(k, "private array 'p' has size 12, not the product of its dimensions [4][4]");
  k = base();
  k.privates.push_back({"p", ScalarType::F32, 0, {4, 0, 2}});
  EXPECT_REJECTED(k, "private array 'p' has a dimension of size 0");
  k = base();
  k.shared.push_back({"t", ScalarType::F32, 0, {65536, 65536, 0}});
  EXPECT_REJECTED(k, "shared array 't' has 2^32 elements or more ([65536][65536])");
  k = base();
  k.privates.push_back({"p", ScalarType::Bool, 4, {0, 0, 0}});
  EXPECT_REJECTED(k, "private array 'p' has element type bool");
}

// A load and a store give one index per dimension; atomics take rank-1 buffers and shared arrays.
TEST(Verifier, RejectsIndexCountsThatDoNotMatchTheRank) {
  auto k = base();
  k.shared.push_back({"t", ScalarType::F32, 12, {3, 4, 0}});
  ir::Expr load;
  load.op = ir::Op::Load;
  load.type = ScalarType::F32;
  load.space = ir::Space::Shared;
  load.ref = 0;
  load.nargs = 1;
  load.args[0] = constant(k, ScalarType::U32, 0);
  const ir::ExprId l = k.add(load);
  k.body.push_back(store(0, constant(k, ScalarType::U32, 0), l));
  EXPECT_REJECTED(k, "load from 't' takes 2 indices, not 1");

  k = base();
  k.privates.push_back({"p", ScalarType::F32, 12, {3, 4, 0}});
  ir::Stmt s = store(0, constant(k, ScalarType::U32, 0), constant(k, ScalarType::F32, 0));
  s.space = ir::Space::Private;
  k.body.push_back(s);
  EXPECT_REJECTED(k, "store to 'p' takes 2 indices");
  k.body.back().c = constant(k, ScalarType::U32, 1);
  EXPECT_EQ(rejection(k), "accepted");
  k.body.back().d = constant(k, ScalarType::U32, 1);
  EXPECT_REJECTED(k, "store to 'p' takes 2 indices");

  k = base();
  k.shared.push_back({"t", ScalarType::U32, 12, {3, 4, 0}});
  ir::Stmt a;
  a.kind = ir::StmtKind::Atomic;
  a.space = ir::Space::Shared;
  a.mem = 0;
  a.a = constant(k, ScalarType::U32, 0);
  a.b = constant(k, ScalarType::U32, 1);
  k.body.push_back(a);
  EXPECT_REJECTED(k, "atomic_add on shared array 't' of rank 2; atomics take rank-1 arrays");
  k.shared[0] = {"t", ScalarType::U32, 12, {0, 0, 0}};
  EXPECT_EQ(rejection(k), "accepted");
  k.privates.push_back({"p", ScalarType::U32, 4, {0, 0, 0}});
  k.body.back().space = ir::Space::Private;
  EXPECT_REJECTED(k, "atomic_add on private array 'p'; a private array is the lane's own");
  k.body.back().space = ir::Space::Shared;
  k.body.back().d = constant(k, ScalarType::U32, 0);
  EXPECT_REJECTED(k, "only a store takes a third index");
}

// A barrier under a condition read from a private array: lanes may hold different values.
TEST(Verifier, PrivateArrayLoadsAreLaneVariant) {
  auto k = build_kernel("bar", {64}, {"x"}, [](InOut<float> x) {
    Private<float, 4> p("p");
    If(p[0u] > 0.0f, [&] { Barrier(); });
    x[0u] = 1.0f;
  });
  EXPECT_REJECTED(k, "barrier");
}

} // namespace
