// Files and kernels by name: what the CLI does with a .hk file, including the clear errors for a
// missing file and an unknown kernel.
#include "examples.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

using namespace halfway;

namespace {

const std::string kTwo = "kernel a workgroup(1, 1, 1) {\n}\n"
                         "kernel \"b<f16>\" workgroup(2, 1, 1) {\n}\n";

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(KernelFile, FindsKernelsByName) {
  text::KernelFile f(kTwo, "two.hk");
  EXPECT_EQ(f.file_name(), "two.hk");
  EXPECT_EQ(f.text(), kTwo);
  EXPECT_EQ(f.kernel_names(), (std::vector<std::string>{"a", "b<f16>"}));
  EXPECT_EQ(f.kernel("b<f16>").workgroup[0], 2u);
  EXPECT_EQ(f.verify("a").name(), "a");
  EXPECT_EQ(f.verify(size_t{1}).name(), "b<f16>");
  EXPECT_EQ(f.verify_all().size(), 2u);
}

TEST(KernelFile, UnknownKernelNamesTheOnesThereAre) {
  text::KernelFile f(kTwo, "two.hk");
  EXPECT_EQ(usage_error([&] { f.kernel("c"); }),
            "two.hk: usage error: unknown kernel c in two.hk; it has a, b<f16>");
  EXPECT_NE(usage_error([&] { f.verify("c"); }).find("unknown kernel c"), std::string::npos);
  EXPECT_NE(usage_error([&] { f.verify(size_t{2}); }).find("kernel index 2"), std::string::npos);
  text::KernelFile empty("// nothing here\n", "empty.hk");
  EXPECT_NE(usage_error([&] { empty.kernel("a"); }).find("it has no kernels"), std::string::npos);
}

TEST(KernelFile, ReadsExampleFiles) {
  std::string path = std::string(HALFWAY_SOURCE_DIR) + "/examples/kernels/linear_f16.hk";
  text::KernelFile f = text::parse_file(path);
  EXPECT_EQ(f.file_name(), path);
  EXPECT_EQ(f.verify("linear<f16>").hash(), examples::linear<f16>().hash());
}

TEST(KernelFile, MissingOrUnreadableFilesAreUsageErrors) {
  std::string missing = std::string(HALFWAY_BINARY_DIR) + "/no/such/kernel.hk";
  std::string msg = usage_error([&] { text::parse_file(missing); });
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;
  EXPECT_NE(msg.find("no such file"), std::string::npos) << msg;

  msg = usage_error([&] { text::parse_file(HALFWAY_SOURCE_DIR); });
  EXPECT_NE(msg.find("it is a directory"), std::string::npos) << msg;

  if (geteuid() != 0) { // root reads any file
    auto path = std::filesystem::path(HALFWAY_BINARY_DIR) / "text_test_unreadable.hk";
    std::ofstream(path) << kTwo;
    std::filesystem::permissions(path, std::filesystem::perms::none);
    msg = usage_error([&] { text::parse_file(path.string()); });
    EXPECT_NE(msg.find("Permission denied"), std::string::npos) << msg;
    std::filesystem::remove(path);
  }
}

TEST(KernelFile, ParseErrorsNameTheFile) {
  auto path = std::filesystem::path(HALFWAY_BINARY_DIR) / "text_test_bad.hk";
  std::ofstream(path) << "kernel k workgroup(1, 1, 1) {\n  barrier\n}\n";
  try {
    text::parse_file(path.string());
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Parse);
    EXPECT_EQ(std::string(e.what()).rfind(
                  path.string() + ":2:10: parse error: expected ';', found '}'", 0),
              0u)
        << e.what();
  }
  std::filesystem::remove(path);
}

} // namespace
