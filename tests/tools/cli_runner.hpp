#pragma once
// One way for every test to run the built `halfway` binary (HALFWAY_CLI, set by the test's
// CMake target) and look at what it did: exit status, stdout and stderr.
//
// Every run sets HALFWAY_VK_VALIDATION=1, so a Vulkan run fails on any validation message, and
// ASAN_OPTIONS=detect_leaks=0: under AddressSanitizer, Mesa's lavapipe and the validation layer
// leak at exit in libraries already unloaded when the report is written; halfway's own leaks are
// caught by the unit tests.

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace halfway::test {

struct CliRun {
  int status = -1; // the exit status; minus the signal number when a signal ended the run
  std::string out; // stdout (with stderr interleaved under Streams::Merged)
  std::string err; // stderr under Streams::Apart
  std::string all() const { return out + err; }
};

enum class Streams {
  Apart,      // stdout in `out`, stderr in `err`
  Merged,     // both in `out`, in the order they were written
  StdoutOnly, // stderr discarded
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What pclose/waitpid report, as CliRun::status.
inline int decode_status(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return -WTERMSIG(status);
  return -1000;
}

// Runs `env halfway args` through the shell (so `args` may hold redirections and quotes).
inline CliRun run_cli(const std::string& args, Streams streams = Streams::Apart,
                      const std::string& env = "") {
  std::filesystem::path err_file;
  std::string redirect = " 2>/dev/null";
  if (streams == Streams::Merged) {
    redirect = " 2>&1";
  } else if (streams == Streams::Apart) {
    std::string name =
        (std::filesystem::temp_directory_path() / "halfway_cli_stderr_XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0)
      return {};
    ::close(fd);
    err_file = name;
    redirect = " 2>'" + name + "'";
  }
  const std::string cmd = "ASAN_OPTIONS=detect_leaks=0 HALFWAY_VK_VALIDATION=1 " + env + " " +
                          std::string(HALFWAY_CLI) + " " + args + redirect;
  CliRun r;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
      r.out.append(buf.data(), n);
    r.status = decode_status(::pclose(p));
  }
  if (!err_file.empty()) {
    r.err = slurp(err_file);
    std::error_code ec;
    std::filesystem::remove(err_file, ec);
  }
  return r;
}

} // namespace halfway::test

#define EXPECT_HAS(text, fragment)                                                                 \
  EXPECT_NE(std::string(text).find(fragment), std::string::npos) << (text)

// Status 2, the fragment in stderr, no internal error.
#define EXPECT_FAILS_WITH(run, fragment)                                                           \
  do {                                                                                             \
    const ::halfway::test::CliRun& r_ = (run);                                                     \
    EXPECT_EQ(r_.status, 2) << r_.all();                                                           \
    EXPECT_HAS(r_.err, fragment);                                                                  \
    EXPECT_EQ(r_.all().find("internal error"), std::string::npos) << r_.all();                     \
  } while (0)
