// print(parse(text)) == text for canonical text, and parse(print(k)) hashes like k: for every
// example kernel, every .hk file in the repository, the kernels of the DSL tests, and text that
// stresses names, scopes and several kernels per file.
#include "examples.hpp"
#include "halfway/ir/hash.hpp"
#include "halfway/text/kernel_file.hpp"
#include "halfway/text/parse.hpp"
#include "text_test_util.hpp"

#include <gtest/gtest.h>
#include <map>

using namespace halfway;
using text_test::print_all;
using text_test::read;

namespace {

void expect_round_trip(const Kernel& k) {
  std::string printed = ir::print(k.kernel());
  std::vector<ir::Kernel> parsed = text::parse_kernels(printed, k.name() + ".hk");
  ASSERT_EQ(parsed.size(), 1u) << printed;
  EXPECT_EQ(ir::print(parsed[0]), printed);
  EXPECT_EQ(ir::structural_hash(parsed[0]), k.hash()) << printed;
  EXPECT_EQ(ir::verify(parsed[0]).hash(), k.hash()) << printed;
}

TEST(RoundTrip, EveryExampleKernel) {
  for (const Kernel& k : examples::all())
    expect_round_trip(k);
}

TEST(RoundTrip, EveryHkFileInTheRepository) {
  std::map<std::string, uint64_t> example_hash;
  for (const Kernel& k : examples::all())
    example_hash[k.name()] = k.hash();
  size_t files = 0;
  for (const std::string folder : {"examples/kernels", "tests/text/data"}) {
    for (const auto& path : text_test::hk_files(folder)) {
      ++files;
      std::string content = read(path);
      text::KernelFile file = text::parse_file(path.string());
      ASSERT_FALSE(file.kernels().empty()) << path;
      // A file may start with comment lines; everything from the first kernel on is canonical.
      EXPECT_EQ(print_all(file.kernels()), content.substr(content.find("kernel "))) << path;
      for (const ir::VerifiedKernel& k : file.verify_all()) {
        auto it = example_hash.find(k.name());
        if (it != example_hash.end()) {
          EXPECT_EQ(k.hash(), it->second) << k.name();
        }
      }
    }
  }
  EXPECT_GE(files, examples::all().size() + 1);
}

TEST(RoundTrip, AllExamplesInOneFile) {
  std::string text;
  std::vector<std::string> names;
  for (const Kernel& k : examples::all()) {
    text += ir::print(k.kernel());
    names.push_back(k.name());
  }
  text::KernelFile file(text, "all.hk");
  EXPECT_EQ(file.kernel_names(), names);
  EXPECT_EQ(print_all(file.kernels()), text);
  std::vector<ir::VerifiedKernel> verified = text::parse_verified(text, "all.hk");
  ASSERT_EQ(verified.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(verified[i].hash(), examples::all()[i].hash()) << names[i];
}

// The kernels the DSL tests build, one per construct they cover.
TEST(RoundTrip, DslTestKernels) {
  expect_round_trip(kernel("mix", {64}, {"h", "f", "y"},
                           [](In<f16> h, In<float> f, Out<float> y) { y[0u] = h[0u] + f[0u]; }));
  expect_round_trip(
      kernel("lit", {64}, {"a", "y"}, [](In<f16> a, Out<f16> y) { y[0u] = a[0u] * 0.1; }));
  expect_round_trip(
      kernel("litb", {64}, {"a", "y"}, [](In<bf16> a, Out<bf16> y) { y[0u] = a[0u] * 0.1; }));
  expect_round_trip(kernel("flow", {64}, {"y", "n"}, [](Out<float> y, Scalar<uint32_t> n) {
    Var acc(0.0f, "acc");
    For(0u, n, [&](Value<uint32_t> j) {
      If(j == 3u, [&] { Continue(); }).Else([&] { acc += 1.0f; });
      If(acc > 100.0f, [&] { Break(); });
    });
    y[global_id(0)] = acc;
  }));
  expect_round_trip(kernel("hist", {64}, {"bins", "x"}, [](InOut<uint32_t> bins, In<uint32_t> x) {
    auto old = atomic_add(bins[x[global_id(0)] & 15u], 1u);
    (void)old;
  }));
  expect_round_trip(kernel("pk", {64}, {"a", "y"}, [](In<f16> a, InOut<uint32_t> y) {
    y[0u] = pack<f16>(a[0u], a[1u]);
    y[1u] = bitcast<uint32_t>(to_f32(unpack<f16>(y[0u], 1)));
  }));
  expect_round_trip(kernel({64}, [](Out<float> y) { y[0u] = 1.0f; }));
  expect_round_trip(kernel("h", {128, 2, 1}, {"x", "y"}, [](In<float> x, Out<f16> y) {
    y[global_id(0)] = narrow<f16>(x[global_id(0)] * 2.0f, ir::RoundingMode::TowardZero);
  }));
}

// Locals may be named like keywords, ops and types; kernel names may need quotes and escapes.
TEST(RoundTrip, NamesThatLookLikeKeywords) {
  const std::string text = R"(kernel "a \"quoted\" \\ name" workgroup(1, 1, 1) {
  param f32: f32;
  param buffer: buffer<f32, read_write>;
  param param: buffer<u32, write>;
  shared shared: u32[4];
  param[0:u32] = 1:u32;
  shared[0:u32] = 2:u32;
  let if: u32 = 0:u32;
  let let: f32 = f32;
  let barrier: u32 = if;
  let add: u32 = add(barrier, if);
  let len: u32 = len(buffer);
  let nan: f32 = add(let, nan(0x7fc00000):f32);
  barrier = add;
  let else: f32 = let;
  if eq(if, 0:u32) {
    barrier;
  }
  else = nan;
  let = else;
  buffer[if] = let;
  for kernel: u32 = if to len step 1:u32 {
    buffer[kernel] = f32;
  }
  barrier;
}
)";
  std::vector<ir::Kernel> parsed = text::parse_kernels(text, "names.hk");
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].name, "a \"quoted\" \\ name");
  EXPECT_EQ(ir::print(parsed[0]), text);
  EXPECT_NO_THROW(ir::verify(parsed[0]));
}

TEST(RoundTrip, CommentsAndSpacingAreNotKept) {
  const std::string text = "// a comment before the kernel\n"
                           "kernel   saxpy workgroup( 64,1 ,1 ){ // trailing comment\n"
                           "param x : buffer < f32 , read > ; param y: buffer<f32, read_write>;\n"
                           "  param a: f32;\n"
                           "  let i: u32 = global_id( 0 );\n"
                           "  if lt(i, len(x)) { y[i] = add(mul(a, x[i]), y[i]); }\n"
                           "}\n";
  std::vector<ir::Kernel> parsed = text::parse_kernels(text, "spaced.hk");
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(ir::print(parsed[0]), ir::print(examples::saxpy().kernel()));
  EXPECT_EQ(ir::structural_hash(parsed[0]), examples::saxpy().hash());
}

// Expressions are read twice: by the grammar, which checks them, and by the lowering, which reads
// them again from where they start. Spaces, line breaks and comments anywhere inside every form
// of expression must give the IR of the compact text.
TEST(RoundTrip, SpacingInsideExpressionsReadsLikeCompactText) {
  const std::string compact = "kernel k workgroup(1, 1, 1) {\n"
                              "param x: buffer<f32, read>;\n"
                              "param y: buffer<u32, read_write>;\n"
                              "shared t: f16[4][2];\n"
                              "let i: u32 = global_id(0);\n"
                              "let f: f32 = add(x[i], -1.5e+3:f32);\n"
                              "let h: f16 = narrow<f16, rtz>(f);\n"
                              "t[1:u32][0:u32] = h;\n"
                              "let g: f16 = t[i][1:u32];\n"
                              "let w: u32 = pack<f16>(h, g);\n"
                              "let u: f16 = unpack<f16, 1>(w);\n"
                              "let n: f32 = -inf:f32;\n"
                              "let b: bool = true;\n"
                              "let l: u32 = len(y);\n"
                              "let old: u32 = atomic_add(y[0:u32], 1:u32);\n"
                              "atomic_max(y[1:u32], w);\n"
                              "y[i] = select(b, l, bitcast<u32>(f));\n"
                              "}\n";
  const std::string spaced = "kernel k workgroup(1, 1, 1) {\n"
                             "param x: buffer<f32, read>;\n"
                             "param y: buffer<u32, read_write>;\n"
                             "shared t: f16[4][2];\n"
                             "let i: u32 = global_id( // the dimension\n"
                             "  0 ) ;\n"
                             "let f: f32 = add ( x [ i ] , // an operand\n"
                             "  -1.5e+3 : f32 ) ;\n"
                             "let h: f16 = narrow < f16 , rtz > ( f ) ;\n"
                             "t [ 1 : u32 ] [ 0:u32 ] = h;\n"
                             "let g: f16 = t [ i ]\n [ 1:u32 ] ;\n"
                             "let w: u32 = pack <f16> (h,g);\n"
                             "let u: f16 = unpack<\tf16 ,1 >(\nw\n);\n"
                             "let n: f32 = -inf : f32;\n"
                             "let b: bool = true ;\n"
                             "let l: u32 = len ( y ) ;\n"
                             "let old: u32 = atomic_add ( y [ 0:u32 ] , 1:u32 ) ;\n"
                             "atomic_max (y[ 1:u32 ], w) ;\n"
                             "y [ i ] = select ( b , l , bitcast < u32 > ( f ) ) ;\n"
                             "}\n";
  const ir::Kernel a = text::parse_kernels(compact, "compact.hk").at(0);
  const ir::Kernel b = text::parse_kernels(spaced, "spaced.hk").at(0);
  EXPECT_EQ(ir::print(b), ir::print(a));
  EXPECT_EQ(ir::structural_hash(b), ir::structural_hash(a));
  EXPECT_EQ(b.exprs.size(), a.exprs.size());
  // The printed form is the compact one, node for node.
  EXPECT_NE(ir::print(a).find("y[i] = select(b, l, bitcast<u32>(f));"), std::string::npos);
}

TEST(RoundTrip, EmptyTextHasNoKernels) {
  EXPECT_TRUE(text::parse_kernels("", "empty.hk").empty());
  EXPECT_TRUE(text::parse_kernels("  // only a comment\n\n", "empty.hk").empty());
}

TEST(Parse, StatementsAndExpressionsCarryTheirLines) {
  const std::string text = ir::print(examples::saxpy().kernel());
  ir::Kernel k = text::parse_kernels(text, "saxpy.hk").at(0);
  ASSERT_EQ(k.body.size(), 2u);
  EXPECT_EQ(k.body[0].line, 5u); // let i
  EXPECT_EQ(k.body[1].line, 6u); // if
  EXPECT_EQ(k.expr(k.body[1].a).line, 6u);
  ASSERT_EQ(k.body[1].body.size(), 1u);
  EXPECT_EQ(k.body[1].body[0].line, 7u); // the store
  EXPECT_EQ(k.expr(k.body[1].body[0].b).line, 7u);
}

TEST(Parse, ReadsOfANameOnALineShareOneNode) {
  // One line: every read of x, n and c is one node each; the same statements one per line are a
  // node per read. Sharing changes neither the printed text nor the hash (specs/ir-text.md §1).
  const std::string head = "kernel k workgroup(1, 1, 1) {\n"
                           "param y: buffer<u32, write>;\n"
                           "param n: u32;\n"
                           "const c: u32 = 7;\n"
                           "let x: u32 = n;\n";
  const std::string line = "x = add(x, c); y[x] = n; y[n] = add(x, c);\n";
  const std::string lines = "x = add(x, c);\ny[x] = n;\ny[n] = add(x, c);\n";
  const ir::Kernel one = text::parse_kernels(head + line + "}\n", "one.hk").at(0);
  const ir::Kernel many = text::parse_kernels(head + lines + "}\n", "many.hk").at(0);
  EXPECT_EQ(ir::print(one), ir::print(many));
  EXPECT_EQ(ir::structural_hash(one), ir::structural_hash(many));
  // Head: n. Line: x, c, add, n, add = 5 nodes, against 10 when each statement has its line
  // (x, c, add; x, n; n, x, c, add).
  EXPECT_EQ(one.exprs.size(), 1u + 5u);
  EXPECT_EQ(many.exprs.size(), 1u + 9u);
  // The line's node of n is not the head's: a node keeps its own line.
  EXPECT_EQ(one.expr(one.body[2].b).line, 6u);
  EXPECT_EQ(one.expr(one.body[0].a).line, 5u);
}

TEST(Parse, ANameThatMeansTwoLocalsOnOneLineReadsEach) {
  // The inner x shadows the outer one inside the braces only; the estimate of the body's nodes
  // ends its stretch there too, so that it stays an upper bound (source.hpp, estimate_body).
  const std::string text = "kernel k workgroup(1, 1, 1) {\n"
                           "param y: buffer<u32, write>;\n"
                           "let x: u32 = 1:u32;\n"
                           "y[x] = x; if true { let x: u32 = add(x, x); y[x] = x; } y[x] = x;\n"
                           "}\n";
  ir::Kernel k = text::parse_kernels(text, "shadow.hk").at(0);
  ASSERT_EQ(k.locals.size(), 2u);
  const ir::Stmt& inner = k.body[2].body[1];
  EXPECT_EQ(k.expr(k.body[1].b).ref, 0u);
  EXPECT_EQ(k.expr(k.body[2].body[0].a).op, ir::Op::Add);
  EXPECT_EQ(k.expr(k.expr(k.body[2].body[0].a).args[0]).ref, 0u); // the let reads the outer x
  EXPECT_EQ(k.expr(inner.a).ref, 1u);
  EXPECT_EQ(k.expr(inner.b).ref, 1u);
  EXPECT_EQ(k.expr(k.body[3].b).ref, 0u);
  EXPECT_EQ(k.body[1].b, k.body[3].b); // the outer x's one node on the line
  EXPECT_EQ(inner.a, inner.b);
}

TEST(Parse, NamesResolveToTheInnermostLocalElseAParameter) {
  const std::string text = R"(kernel k workgroup(1, 1, 1) {
  param y: buffer<u32, write>;
  param n: u32;
  if eq(n, 0:u32) {
    let v: u32 = 1:u32;
    y[0:u32] = v;
  } else {
    let v: u32 = 2:u32;
    y[0:u32] = v;
  }
  y[1:u32] = n;
}
)";
  ir::Kernel k = text::parse_kernels(text, "scopes.hk").at(0);
  ASSERT_EQ(k.locals.size(), 2u);
  const ir::Stmt& branch = k.body[0];
  EXPECT_EQ(k.expr(branch.body[1].b).ref, branch.body[0].local);
  EXPECT_EQ(k.expr(branch.else_body[1].b).ref, branch.else_body[0].local);
  EXPECT_NE(branch.body[0].local, branch.else_body[0].local);
  EXPECT_EQ(k.expr(k.body[1].b).op, ir::Op::ParamGet);
  EXPECT_NO_THROW(ir::verify(k));
  EXPECT_EQ(ir::print(k), text);
}

TEST(Parse, ALocalIsNotVisibleAfterItsBlock) {
  const std::string text = "kernel k workgroup(1, 1, 1) {\n"
                           "  param y: buffer<u32, write>;\n"
                           "  for i: u32 = 0:u32 to 4:u32 step 1:u32 {\n"
                           "    let v: u32 = i;\n"
                           "  }\n"
                           "  y[0:u32] = v;\n"
                           "}\n";
  try {
    text::parse_kernels(text, "scope.hk");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.context().line, 6u);
    EXPECT_NE(std::string(e.what()).find("unknown name 'v'"), std::string::npos) << e.what();
  }
}

} // namespace
