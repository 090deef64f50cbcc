// Malformed text and ill-formed kernels: each case marks with '$' where the caret must point, and
// lists fragments the message must contain. Parse errors and verifier errors on parsed text both
// name file:line:column and show the offending line with a caret.
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"
#include "halfway/text/parse.hpp"

#include <gtest/gtest.h>

using namespace halfway;

namespace {

// Lines 1-5; a case's body starts on line 6.
const std::string kHeader = "kernel k workgroup(64, 1, 1) {\n"
                            "  param x: buffer<f32, read_write>;\n"
                            "  param r: buffer<f32, read>;\n"
                            "  param h: buffer<f16, write>;\n"
                            "  param n: u32;\n";

struct Case {
  std::string text; // '$' marks the expected caret
  std::vector<std::string> fragments;
  ErrorKind kind = ErrorKind::Parse;
  bool whole = false; // text is a whole file, not a body to wrap in kHeader
};

Case body(std::string b, std::vector<std::string> fragments, ErrorKind kind = ErrorKind::Parse) {
  return Case{kHeader + b + "\n}\n", std::move(fragments), kind, false};
}
Case file(std::string t, std::vector<std::string> fragments, ErrorKind kind = ErrorKind::Parse) {
  return Case{std::move(t), std::move(fragments), kind, true};
}

void check(const Case& c) {
  size_t mark = c.text.find('$');
  ASSERT_NE(mark, std::string::npos) << c.text;
  std::string text = c.text;
  text.erase(mark, 1);
  uint32_t line = 1 + static_cast<uint32_t>(std::count(text.begin(), text.begin() + mark, '\n'));
  size_t line_start = text.rfind('\n', mark == 0 ? 0 : mark - 1);
  line_start = (mark == 0 || line_start == std::string::npos) ? 0 : line_start + 1;
  uint32_t column = static_cast<uint32_t>(mark - line_start + 1);
  std::string source_line = text.substr(line_start, text.find('\n', line_start) - line_start);
  try {
    text::parse_verified(text, "case.hk");
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.kind(), c.kind) << what;
    EXPECT_EQ(e.context().file, "case.hk") << what;
    EXPECT_EQ(e.context().line, line) << what;
    EXPECT_EQ(e.context().column, column) << what;
    std::string prefix = "case.hk:" + std::to_string(line) + ":" + std::to_string(column) + ": ";
    EXPECT_EQ(what.substr(0, prefix.size()), prefix) << what;
    std::string caret = "\n  " + source_line + "\n  " + std::string(column - 1, ' ') + "^";
    EXPECT_NE(what.find(caret), std::string::npos) << what;
    for (const std::string& f : c.fragments)
      EXPECT_NE(what.find(f), std::string::npos) << what;
  }
}

TEST(Errors, MalformedText) {
  const std::vector<Case> cases = {
      body("  x[0:u32] = 1.0:f32$\n  barrier;", {"expected ';', found 'barrier'"}),
      body("  x[0:u32] = 1.0:f32$ // no semicolon\n  barrier;", {"expected ';', found 'barrier'"}),
      body("  x[0:u32] = add(1.0:f32, 2.0:f32$\n  barrier;", {"expected ')', found 'barrier'"}),
      body("  x[0:u32] = add(x[1:u32], $);", {"expected an expression, found ')'"}),
      body("  x[0:u32] = add(x[1:u32] $x[2:u32]);", {"expected ')', found 'x'"}),
      file(kHeader + "  x[0:u32] = 1.0:f32;$\n",
           {"expected a statement or '}', found end of input"}),
      body("  $y[0:u32] = 1.0:f32;", {"unknown buffer, shared or private array 'y'"}),
      body("  x[0:u32] = $frob(1.0:f32);", {"unknown operation 'frob'"}),
      body("  x[0:u32] = $load(1:u32);", {"unknown operation 'load'"}),
      body("  x[0:u32] = add(1.0:f32, 2.0:$f33);", {"unknown type 'f33'", "bool, i8"}),
      body("  x[0:u32] = $1.5;", {"constant 1.5 needs a type suffix"}),
      body("  x[0:u32] = 1.5:$;", {"expected an identifier, found ';'"}),
      body("  let y: f32 = $z;", {"unknown name 'z'"}),
      body("  let y: f32 = $x;", {"'x' is a buffer", "x[i]", "len(x)"}),
      body("  $n = 1:u32;", {"cannot assign to parameter 'n'"}),
      body("  $x = 1.0:f32;", {"'x' is a buffer: store to an element with x[i] = ..."}),
      body("  $w = 1.0:f32;", {"assignment to unknown local 'w'; declare it with let"}),
      body("  let y: f32 = $n[0:u32];", {"'n' is a scalar parameter"}),
      body("  let i: u32 = 0:u32;\n  let y: f32 = $i[0:u32];", {"'i' is a local"}),
      body("  x[0:u32] = $widen<f16>(1.0:f32);", {"converting f32 to f16 rounds", "narrow<f16>"}),
      body("  x[0:u32] = narrow<f32>($narrow<f64>(1.0:f32));",
           {"f32 to f64 is exact", "widen<f64>"}),
      body("  let i: i32 = $narrow<i32>(1.0:f32);",
           {"is not between two float types", "convert<i32>"}),
      body("  h[0:u32] = narrow<f16, $rtq>(1.0:f32);", {"expected a rounding mode", "'rtq'"}),
      body("  h[0:u32] = narrow<f16, sat, $rtz>(1.0:f32);", {"expected a rounding mode"}),
      body("  h[0:u32] = $narrow(1.0:f32);",
           {"write narrow<type[, rte|rtz|rtp|rtn][, sat]>(value)"}),
      body("  x[0:u32] = narrow<f32$(1.0:f64);", {"expected '>', found '('"}),
      body("  x[0:u32] = $add(1.0:f32);", {"add takes 2 operands, not 1 operand"}),
      body("  x[0:u32] = add<$f32>(1.0:f32, 1.0:f32);", {"add takes no <...> arguments"}),
      body("  x[0:u32] = $atomic_add(x[0:u32], 1.0:f32);",
           {"atomic_add is a statement, not a value"}),
      body("  $add(1.0:f32, 2.0:f32);", {"cannot stand alone"}),
      body("  atomic_add($n, 1:u32);",
           {"first operand of atomic_add is a buffer or shared element"}),
      body("  $atomic_cmpxchg(x[0:u32], 1:u32);", {"takes an element, a value and a comparand"}),
      body("  let i: u32 = global_id($3);", {"dimension of global_id is a plain 0, 1 or 2"}),
      body("  let i: u32 = global_id($0:u32);", {"plain 0, 1 or 2"}),
      body("  let i: u32 = len($n);", {"len() takes a buffer parameter, and 'n' is not one"}),
      body("  let w: u32 = $pack<f16>(1.0:f16);", {"pack takes 2 operands, not 1 operand"}),
      body("  let w: u32 = pack<$f32>(1.0:f32, 1.0:f32);", {"take f16, bf16, e4m3 or e5m2"}),
      body("  let v: f16 = unpack<f16, $one>(1:u32);", {"lane of unpack is a number"}),
      body("  let $true: bool = false;", {"'true' is a constant and cannot name a local"}),
      body("  let y: f32 = $-inf;", {"constant -inf needs a type suffix"}),
      body("  if lt(n, 1:u32) {\n    barrier;\n  } else $barrier;",
           {"expected '{' or 'if', found 'barrier'"}),
      body("  for i: u32 = 0:u32 $step 1:u32 {\n  }", {"expected 'to', found 'step'"}),
      body("  let i $u32 = 0:u32;", {"expected ':', found 'u32'"}),
      file("$kernal k workgroup(1, 1, 1) {\n}\n",
           {"expected 'kernel', 'pipeline' or the end of the text", "'kernal'"}),
      file("kernel workgroup$(1, 1, 1) {\n}\n", {"expected 'workgroup', found '('"}),
      file("kernel k workgroup(1, 1, $-1) {\n}\n",
           {"expected a size (an unsigned 32-bit integer or a constant)"}),
      file("kernel k workgroup(1, 1, $99999999999) {\n}\n", {"expected a size"}),
      file("kernel \"k$\nworkgroup(1, 1, 1) {\n}\n", {"expected '\"', found end of line"}),
      file("kernel k workgroup(1, 1, 1) {\n  param x: buffer<f32, $rw>;\n}\n",
           {"unknown access mode 'rw'; use read, write or read_write"}),
      file("kernel k workgroup(1, 1, 1) {\n  param x: buffer<f32$>;\n}\n", {"expected ','"}),
      file("kernel k workgroup(1, 1, 1) {\n  param x: f32;\n  shared $x: f32[4];\n}\n",
           {"duplicate name 'x': a parameter has it"}),
      file("kernel k workgroup(1, 1, 1) {\n  shared t: f32[$-4];\n}\n", {"expected a size"}),
      file("kernel k workgroup(1, 1, 1) {\n}\n$kernel k workgroup(2, 1, 1) {\n}\n",
           {"duplicate kernel name 'k'; the first is at line 1"}),
      file("kernel k workgroup(1, 1, 1) {\n  barrier;\n}\n$}\n",
           {"expected 'kernel', 'pipeline' or the end"}),
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    check(c);
  }
}

TEST(Errors, DeepNestingIsRefusedNotOverflowed) {
  std::string deep = "  let b: bool = ";
  for (int i = 0; i < 1000; ++i)
    deep += "not(";
  deep += "true";
  for (int i = 0; i < 1000; ++i)
    deep += ")";
  deep += ";";
  std::string text = kHeader + deep + "\n}\n";
  try {
    text::parse_kernels(text, "deep.hk");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Parse);
    EXPECT_EQ(e.context().line, 6u);
    EXPECT_NE(e.message().find("nesting is deeper than"), std::string::npos) << e.what();
  }
  // Nesting up to the limit parses.
  std::string ok = "  let b: bool = ";
  for (int i = 0; i < 100; ++i)
    ok += "not(";
  ok += "true";
  for (int i = 0; i < 100; ++i)
    ok += ")";
  EXPECT_NO_THROW(text::parse_verified(kHeader + ok + ";\n}\n", "ok.hk"));
}

// Each `else if` nests one if deeper in the IR and in the parser: a long chain is refused like deep
// braces, while as many links spread over separate chains are not.
TEST(Errors, LongElseIfChainsCountAsNesting) {
  auto chain = [](int links) {
    std::string s = "  if lt(n, 0:u32) {\n  }";
    for (int i = 0; i < links; ++i)
      s += " else if lt(n, " + std::to_string(i) + ":u32) {\n    x[0:u32] = 1.0:f32;\n  }";
    return s + "\n";
  };
  try {
    text::parse_kernels(kHeader + chain(1000) + "}\n", "chain.hk");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Parse);
    EXPECT_NE(e.message().find("nesting is deeper than 128 levels"), std::string::npos) << e.what();
  }
  std::string many;
  for (int i = 0; i < 20; ++i)
    many += chain(100);
  std::vector<ir::Kernel> k = text::parse_kernels(kHeader + many + "}\n", "chains.hk");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].body.size(), 20u);
  // A chain inside a block ends with the block.
  std::string nested =
      "  if lt(n, 1:u32) {\n" + chain(100) + "  } else if lt(n, 2:u32) {\n" + chain(100) + "  }\n";
  EXPECT_NO_THROW(text::parse_verified(kHeader + nested + "}\n", "nested.hk"));
}

TEST(Errors, VerifierErrorsPointAtTheirSourceLine) {
  const std::vector<Case> cases = {
      body("  let v: f16 = 1.0:f16;\n  $v = x[0:u32];", {"implicit narrowing from f32 to f16"},
           ErrorKind::Verify),
      body("  $h[0:u32] = x[0:u32];", {"implicit narrowing from f32 to f16 in store to h"},
           ErrorKind::Verify),
      body("  x[0:u32] = $add(x[0:u32], 1.0:f16);", {"add mixes f16 and f32"}, ErrorKind::Verify),
      body("  x[0:u32] = add(x[0:u32], $neg(true));", {"neg is not defined for bool"},
           ErrorKind::Verify),
      body("  if lt(global_id(0), 4:u32) {\n    $barrier;\n  }",
           {"barrier in non-uniform control flow"}, ErrorKind::Verify),
      body("  $break;", {"break outside a loop"}, ErrorKind::Verify),
      body("  $let n: u32 = 1:u32;", {"local 'n' shadows a parameter"}, ErrorKind::Verify),
      body("  let i: u32 = 0:u32;\n  if true {\n    $let i: u32 = 1:u32;\n  }",
           {"shadows another local in scope"}, ErrorKind::Verify),
      body("  $r[0:u32] = 1.0:f32;", {"store to read-only buffer 'r'"}, ErrorKind::Verify),
      body("  let y: f32 = $h[0:u32];", {"load from write-only buffer 'h'"}, ErrorKind::Verify),
      body("  $atomic_add(x[0:u32], 1.0:f32);", {"atomics take i32, u32, i64 or u64"},
           ErrorKind::Verify),
      body("  x[0:u32] = $narrow<e5m2, rte, sat>(1.0:f32);", {"only defined for e4m3"},
           ErrorKind::Verify),
      body("  let w: f32 = $unpack<f16, 2>(1:u32);", {"unpack lane 2 is out of range"},
           ErrorKind::Verify),
      file("$kernel k workgroup(2048, 1, 1) {\n}\n", {"exceeds 1024"}, ErrorKind::Verify),
      file("kernel a workgroup(1, 1, 1) {\n}\n$kernel b workgroup(0, 1, 1) {\n}\n",
           {"kernel b", "zero dimension"}, ErrorKind::Verify),
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    check(c);
  }
}

} // namespace
