// Parser memory on the densest text: every shape of valid kernel text that packs the most IR into
// the fewest bytes is generated at a few MB and parsed from a file (text::parse_file, the path the
// command line takes), and the peak of the heap during the parse must stay at or below
// kMaxParseMemoryRatio times the file's size (specs/ir-text.md). The heap is measured by replacing
// the global operator new and delete of this test binary, which counts exactly the bytes the
// parse holds at once (the text included) and does not depend on what else runs on the machine.
//
// HALFWAY_PARSE_MEMORY_MB=N parses N MB of each shape instead of the default (up to the 16 MiB
// cap) and prints each ratio; tests/text/parse_memory.py measures the peak RSS of the command line.
#include "halfway/text/kernel_file.hpp"
#include "halfway/text/parse.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <malloc.h>
#include <new>
#include <string>
#include <unistd.h>

namespace {

// Bytes live on the heap now, and the most since the last reset.
std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};

void* counted_alloc(size_t size, size_t align) {
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (size + align - 1) / align * align)
                : std::malloc(size ? size : 1);
  if (!p)
    throw std::bad_alloc();
  const size_t now = g_live.fetch_add(malloc_usable_size(p)) + malloc_usable_size(p);
  size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void counted_free(void* p) {
  if (!p)
    return;
  g_live.fetch_sub(malloc_usable_size(p));
  std::free(p);
}

} // namespace

void* operator new(size_t size) {
  return counted_alloc(size, 0);
}
void* operator new[](size_t size) {
  return counted_alloc(size, 0);
}
void* operator new(size_t size, std::align_val_t a) {
  return counted_alloc(size, static_cast<size_t>(a));
}
void* operator new[](size_t size, std::align_val_t a) {
  return counted_alloc(size, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept {
  counted_free(p);
}
void operator delete[](void* p) noexcept {
  counted_free(p);
}
void operator delete(void* p, size_t) noexcept {
  counted_free(p);
}
void operator delete[](void* p, size_t) noexcept {
  counted_free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  counted_free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  counted_free(p);
}
void operator delete(void* p, size_t, std::align_val_t) noexcept {
  counted_free(p);
}
void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  counted_free(p);
}

using namespace halfway;

namespace {

// The parse may hold at most this many bytes per byte of text (specs/ir-text.md).
constexpr double kMaxParseMemoryRatio = 20.0;

size_t target_bytes() {
  if (const char* mb = std::getenv("HALFWAY_PARSE_MEMORY_MB"))
    return static_cast<size_t>(std::atof(mb) * 1e6);
  return 3'000'000;
}

// A shape: the kernel's head (declarations and the locals the body uses), then a body piece
// repeated until the text has `bytes` bytes. The piece gets its repetition number, for names.
struct Shape {
  const char* name;
  std::string head;
  std::function<std::string(size_t)> piece;
};

const std::string kHead = "kernel k workgroup(1, 1, 1) {\n"
                          "param y: buffer<u32, write>;\n"
                          "let x: u32 = global_id(0);\n"
                          "let b: bool = true;\n"
                          "let f: f32 = 1.5:f32;\n";

// Identifiers a, b, ..., _9, aa, ... from a number (letters first, so that each is valid).
std::string ident(size_t n) {
  static const char kFirst[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static const char kRest[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
  std::string s(1, kFirst[n % 52]);
  for (n /= 52; n; n /= 63)
    s += kRest[n % 63];
  return "v" + s; // never a keyword nor a name of the head
}

// A balanced tree of `or` over x with 2^depth leaves: 6 bytes of text per `or`.
std::string or_tree(int depth) {
  if (depth == 0)
    return "x";
  std::string sub = or_tree(depth - 1);
  return "or(" + sub + "," + sub + ")";
}

// `depth` ifs, one inside the other, around one assignment.
std::string nested_ifs(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i)
    s += "if b{";
  return s + "x=x;" + std::string(static_cast<size_t>(depth), '}');
}

std::vector<Shape> shapes() {
  const std::string tree10 = or_tree(10);
  return {
      // 48 / 7 + 1 = 7.9
      {"store", kHead, [](size_t) { return std::string("y[x]=x;"); }},
      // (48 + 40 + 4) / 8 + 1 = 12.5: a line start and a node for x per statement
      {"store_lines", kHead, [](size_t) { return std::string("y[x]=x;\n"); }},
      // 48 / 4 + 1 = 13: the reads of x on the line share one node
      {"assign", kHead, [](size_t) { return std::string("x=x;"); }},
      // (48 + 40 + 4) / 5 + 1 = 19.4: the densest shape, a new line and so a new node per statement
      {"assign_lines", kHead, [](size_t) { return std::string("x=x;\n"); }},
      {"constants", kHead, [](size_t) { return std::string("x=1:u32;"); }},
      {"float_constants", kHead, [](size_t) { return std::string("f=1.5:f32;"); }},
      // 48 / 6 + 1 = 9
      {"if_empty", kHead, [](size_t) { return std::string("if b{}"); }},
      {"if_else_empty", kHead, [](size_t) { return std::string("if b{}else{}"); }},
      // (48 + 40 + 8) / 6 + 1 = 17: a one-statement block per if and its 8-byte header
      {"nested_ifs", kHead, [](size_t) { return nested_ifs(100); }},
      {"returns", kHead, [](size_t) { return std::string("return;"); }},
      {"barriers", kHead, [](size_t) { return std::string("barrier;"); }},
      // A block's own local per block, read where it shadows nothing: the estimate of the nodes
      // ends a stretch at each such block's end (source.hpp), so it still reserves exactly.
      {"block_locals", kHead, [](size_t) { return std::string("if b{let v:u32=x;y[v]=v;}"); }},
      {"locals", kHead, [](size_t n) { return "let " + ident(n) + ":u32=x;"; }},
      {"long_names", kHead,
       [](size_t n) { return "let " + ident(n) + std::string(200, 'q') + ":u32=x;"; }},
      {"small_trees", kHead, [tree10](size_t) { return "x=" + tree10 + ";"; }},
      {"conversions", kHead, [](size_t) { return std::string("f=narrow<f32>(widen<f64>(f));"); }},
      {"loads", kHead, [](size_t) { return std::string("x=y[y[y[y[y[x]]]]];"); }},
  };
}

// Writes the shape's text of about `bytes` bytes to a file; returns its size.
size_t write_shape(const Shape& s, size_t bytes, const std::string& path) {
  std::string text = s.head;
  for (size_t n = 0; text.size() < bytes; ++n)
    text += s.piece(n);
  text += "\n}\n";
  std::ofstream(path, std::ios::binary) << text;
  return text.size();
}

// One statement whose expression is a balanced tree of about `bytes` bytes.
size_t write_one_tree(size_t bytes, const std::string& path) {
  int depth = 1; // the tree of depth d is about 6 << d bytes
  while ((size_t{6} << (depth + 1)) <= bytes)
    ++depth;
  std::string text = kHead + "x=" + or_tree(depth) + ";\n}\n";
  std::ofstream(path, std::ios::binary) << text;
  return text.size();
}

struct Measured {
  size_t peak = 0; // bytes
  double ratio = 0;
  size_t nodes = 0; // expressions and statements
};

// Parses the file; returns the heap's peak during the parse, less `baseline`, per byte of the file.
Measured measure(const std::string& path, size_t size, size_t baseline = 0) {
  const size_t before = g_live.load();
  g_peak.store(before);
  Measured m;
  {
    text::KernelFile file = text::parse_file(path);
    m.peak = g_peak.load() - before;
    for (const ir::Kernel& k : file.kernels()) {
      m.nodes += k.exprs.size();
      ir::for_each_stmt(k.body, [&](const ir::Stmt&) { ++m.nodes; });
    }
  }
  EXPECT_EQ(g_live.load(), before) << "the parse leaked";
  m.ratio = static_cast<double>(m.peak - std::min(m.peak, baseline)) / static_cast<double>(size);
  return m;
}

class ParseMemory : public ::testing::Test {
protected:
  // The baseline is the peak of parsing an empty kernel: mostly the buffer parse_file reads the
  // file with, which does not grow with the text.
  void SetUp() override {
    std::ofstream(path_) << kHead << "}\n";
    baseline_ = measure(path_, kHead.size() + 2).peak;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void report(const char* name, size_t size, const Measured& m) {
    std::fprintf(stderr, "%-16s %10zu bytes %9zu nodes  peak %6.2fx\n", name, size, m.nodes,
                 m.ratio);
  }
  std::string path_ = (std::filesystem::temp_directory_path() /
                       ("halfway_parse_memory_" + std::to_string(::getpid()) + ".hk"))
                          .string();
  size_t baseline_ = 0;
};

TEST_F(ParseMemory, DenseShapesStayUnderTheRatio) {
  for (const Shape& s : shapes()) {
    const size_t size = write_shape(s, target_bytes(), path_);
    const Measured m = measure(path_, size, baseline_);
    report(s.name, size, m);
    EXPECT_GT(m.nodes, size / 250) << s.name; // the shape really is IR (long_names: 1 per 213)
    EXPECT_LE(m.ratio, kMaxParseMemoryRatio) << s.name;
  }
}

TEST_F(ParseMemory, OneHugeExpressionIsBounded) {
  // The syntax of one top-level statement is held at once, next to the IR, but an expression's is
  // only where it starts: the lowering reads the expression again from the text, building its IR
  // as it reads. One statement holding an expression of several MB is then its IR (an `or` node of
  // 40 bytes per 6 bytes of text, the leaves one shared node) and the text.
  const size_t size = write_one_tree(target_bytes(), path_);
  const Measured m = measure(path_, size, baseline_);
  report("one_tree", size, m);
  EXPECT_GT(m.nodes,
            size / 7); // an `or` per 6 bytes: its leaves, all `x` on one line, share a node
  EXPECT_LE(m.ratio, kMaxParseMemoryRatio);
}

TEST_F(ParseMemory, TheCounterSeesTheParse) {
  // The measurement itself: the baseline is the read buffer (1 MiB) and little else, and a
  // kernel of 1 MB of `x=x;` lines holds at least its text and its IR (a statement and a node
  // each) at the peak.
  EXPECT_GT(baseline_, size_t{1} << 20);
  EXPECT_LT(baseline_, size_t{3} << 20);
  const Shape s{"assign_lines", kHead, [](size_t) { return std::string("x=x;\n"); }};
  const size_t size = write_shape(s, 1'000'000, path_);
  const Measured m = measure(path_, size, baseline_);
  const size_t statements = (size - kHead.size()) / 5;
  EXPECT_GE(m.peak, size + statements * (sizeof(ir::Stmt) + sizeof(ir::Expr)));
}

} // namespace
