// Hostile input: text above the size cap is refused (a file before it is read), control characters
// in names and source lines are escaped in every message, and a large kernel parses in memory
// and time proportional to its size.
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"
#include "halfway/text/parse.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace halfway;

namespace {

#define EXPECT_HAS(text, fragment)                                                                 \
  EXPECT_NE(std::string(text).find(fragment), std::string::npos) << "message: " << (text)

Error parse_error(const std::string& text) {
  try {
    text::parse_kernels(text, "t.hk");
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "parsed: " << text;
  return Error(ErrorKind::Internal, "no error");
}

bool has_control(const std::string& s) {
  for (char c : s)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
      return true;
  return false;
}

TEST(Limits, TextAboveTheCapIsRefused) {
  std::string text(text::kMaxTextBytes + 1, ' ');
  Error e = parse_error(text);
  EXPECT_EQ(e.kind(), ErrorKind::Parse);
  EXPECT_HAS(e.what(), "t.hk: parse error: kernel text of 16777217 bytes is larger than the limit "
                       "of 16777216 bytes (16 MiB)");
}

TEST(Limits, FileAboveTheCapIsRefusedBeforeReading) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("halfway_big_" + std::to_string(::getpid()) + ".hk"))
                               .string();
  {
    std::ofstream out(path, std::ios::binary);
    out << "kernel k workgroup(1, 1, 1) {\n}\n";
  }
  // A sparse file: 1 GiB that the parser must refuse from its size alone.
  std::filesystem::resize_file(path, uint64_t{1} << 30);
  try {
    text::parse_file(path);
    ADD_FAILURE() << "a 1 GiB file was parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_EQ(e.context().file, path);
    EXPECT_HAS(e.what(), "cannot read kernel file " + path +
                             ": it is 1073741824 bytes, larger than the limit of 16777216 bytes");
  }
  std::filesystem::remove(path);
}

TEST(Limits, ControlCharactersAreEscapedInMessages) {
  // An ANSI colour sequence in a comment on the failing line and in a quoted kernel name.
  Error e = parse_error("kernel k workgroup(1, 1, 1) {\n"
                        "  let x: f32 = \x1b[31m;  // \x1b[31mred\x07\n"
                        "}\n");
  EXPECT_FALSE(has_control(e.what())) << e.what();
  EXPECT_HAS(e.what(), "let x: f32 = \\x1b[31m;  // \\x1b[31mred\\x07");
  // The caret is under the escape: 15 columns of text, then the four of \x1b.
  EXPECT_HAS(e.what(), "\n                 ^");

  Error dup = parse_error("kernel \"a\x1b]0;title\x07\" workgroup(1, 1, 1) {\n}\n"
                          "kernel \"a\x1b]0;title\x07\" workgroup(1, 1, 1) {\n}\n");
  EXPECT_FALSE(has_control(dup.what())) << dup.what();
  EXPECT_HAS(dup.what(), "duplicate kernel name 'a\\x1b]0;title\\x07'");
}

TEST(Limits, TabsKeepTheCaretAlignedAndUtf8IsKept) {
  Error e = parse_error("kernel k workgroup(1, 1, 1) {\n"
                        "\tlet x: f32 = 1.0:f32 // é\n"
                        "}\n");
  // The missing ";" goes just after 1.0:f32: a tab, then 20 columns.
  EXPECT_HAS(e.what(), "\tlet x: f32 = 1.0:f32 // é\n  \t                    ^");
  EXPECT_EQ(printable("a\xc2\x9b"
                      "b\xff\xe2\x82\xac\r"),
            "a\\xc2\\x9bb\\xff\xe2\x82\xac\\x0d");
}

TEST(Limits, LargeKernelParsesInLinearTime) {
  // 30000 lets and stores (about 2 MB): name lookup and verification must not be quadratic.
  std::string text = "kernel big workgroup(64, 1, 1) {\n  param x: buffer<f32, read>;\n"
                     "  param y: buffer<f32, write>;\n  let i: u32 = global_id(0);\n";
  for (int n = 0; n < 30000; ++n)
    text += "  let v" + std::to_string(n) + ": f32 = add(mul(x[i], 2.0:f32), x[i]);\n  y[i] = v" +
            std::to_string(n) + ";\n";
  text += "}\n";
  const auto start = std::chrono::steady_clock::now();
  auto kernels = text::parse_verified(text, "big.hk");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]->body.size(), 60001u);
  EXPECT_LT(took, 5.0);
}

TEST(Limits, FuzzSeedCorpusParsesAndVerifies) {
  // The hand-written seeds must stay valid kernels, or the fuzzers start from nothing.
  int seeds = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(HALFWAY_SOURCE_DIR) + "/fuzz/corpus")) {
    SCOPED_TRACE(entry.path().string());
    auto file = text::parse_file(entry.path().string());
    EXPECT_FALSE(file.verify_all().empty());
    ++seeds;
  }
  EXPECT_GE(seeds, 5);
}

} // namespace
