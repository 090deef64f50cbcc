// The command line's defences, tested on the built binary: counts and sizes, output files,
// .npy headers, the one JSON document, logs on stderr, opt-in flags, scalars, terminal escaping,
// devices, timeouts and Ctrl-C. Every failure must be exit status 2 (never a signal), say what
// is wrong and name the file, kernel or buffer, and leave existing files alone.
#include "cli_runner.hpp"
#include "cli_util.hpp"
#include "halfway/io/npy.hpp"
#include "halfway/support/driver_call.hpp"
#include "halfway/support/error.hpp"

#include <array>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;

namespace {

using halfway::test::CliRun;
using halfway::test::slurp;

// A tiny JSON checker (RFC 8259 syntax), enough to tell one valid document from anything else.
class JsonChecker {
public:
  explicit JsonChecker(std::string_view s) : s_(s) {}
  bool document() {
    ws();
    if (!value())
      return false;
    ws();
    return i_ == s_.size();
  }

private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  bool lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w)
      return false;
    i_ += w.size();
    return true;
  }
  bool string() {
    if (i_ >= s_.size() || s_[i_] != '"')
      return false;
    for (++i_; i_ < s_.size(); ++i_) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20)
        return false;
      if (c == '\\') {
        if (++i_ >= s_.size())
          return false;
        char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k)
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_])))
              return false;
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
      }
    }
    return false;
  }
  bool number() {
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-')
      ++i_;
    size_t digits = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
      ++i_;
    if (i_ == digits)
      return false;
    if (s_[digits] == '0' && i_ - digits > 1)
      return false;
    if (i_ < s_.size() && s_[i_] == '.') {
      size_t f = ++i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
        ++i_;
      if (i_ == f)
        return false;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'))
        ++i_;
      size_t e = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
        ++i_;
      if (i_ == e)
        return false;
    }
    return i_ > start;
  }
  bool value() {
    ws();
    if (i_ >= s_.size())
      return false;
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == '}')
        return ++i_, true;
      for (;;) {
        ws();
        if (!string())
          return false;
        ws();
        if (!lit(":"))
          return false;
        if (!value())
          return false;
        ws();
        if (lit("}"))
          return true;
        if (!lit(","))
          return false;
      }
    }
    if (c == '[') {
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']')
        return ++i_, true;
      for (;;) {
        if (!value())
          return false;
        ws();
        if (lit("]"))
          return true;
        if (!lit(","))
          return false;
      }
    }
    if (c == '"')
      return string();
    if (lit("true") || lit("false") || lit("null"))
      return true;
    return number();
  }
  std::string_view s_;
  size_t i_ = 0;
};

bool valid_json(const std::string& s) {
  return JsonChecker(s).document();
}

std::string example(const std::string& name) {
  return std::string(HALFWAY_SOURCE_DIR) + "/examples/kernels/" + name + ".hk";
}

// A kernel that loops n times in one lane: long enough to time out or interrupt.
const char* kSpin = R"(kernel spin workgroup(1, 1, 1) {
  param y: buffer<u32, write>;
  param n: u32;
  let acc: u32 = 0:u32;
  for t: u32 = 0:u32 to n step 1:u32 {
    acc = add(acc, t);
  }
  y[0:u32] = acc;
}
)";

// Scalars of several types.
const char* kScalars = R"(kernel scalars workgroup(64, 1, 1) {
  param y: buffer<f16, write>;
  param h: f16;
  param u: u32;
  param s: i32;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = h;
  }
}
)";

class CliHardening : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("halfway_hard_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }

  std::string file(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  // Runs the binary through the shell with stdout and stderr apart.
  CliRun halfway(const std::string& args, const std::string& env = "") {
    return halfway::test::run_cli(args, halfway::test::Streams::Apart, env);
  }

  fs::path dir_;
};

TEST_F(CliHardening, CountsAndSizesAreRefusedWithExitStatus2) {
  const std::string saxpy = "run " + example("saxpy") + " --arg a=1 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--grid -1", "--grid -1: negative"},
      {"--grid 1.5", "--grid 1.5: not a non-negative decimal integer"},
      {"--grid ''", "--grid : empty"},
      {"--grid 18446744073709551616", "too large"},
      {"--grid 18446744073709551615", "more than the 4294967295 a grid can have"},
      {"--groups 288230376151711745", "--groups 288230376151711745: more than the 4294967295"},
      {"--groups -2", "--groups -2: negative"},
      {"--grid 64 --groups 1", "not both"},
      {"--grid 0", "no grid"},
      {"--grid 64 --buffer x=iota:4611686018427387904", "more than 2^64 bytes"},
      {"--grid 64 --buffer x=iota:1099511627776000", "do not fit in this machine's memory"},
      {"--grid 64 --buffer x=zeros:-5", "negative"},
      {"--grid 64 --buffer x=random:", "empty"},
      {"--grid 64 --buffer x=zeros --buffer x=iota", "--buffer x is given twice"},
      {"--grid 64 --threads -1", "--threads -1: negative"},
      {"--grid 64 --threads 4294967297", "more than 4096 threads"},
      {"--grid 64 --seed -1", "--seed -1: negative"},
      {"--grid 64 --show -1", "--show -1: negative"},
      {"--grid 64 --timeout -1", "--timeout -1: must be more than 0"},
      {"--grid 64 --timeout 0", "must be more than 0"},
      {"--grid 64 --timeout soon", "not a number of seconds"},
      {"--grid 64 --timeout ''", "not a number of seconds"},
      {"--grid 64 --timeout 1e300", "more than 1000000 seconds"},
  };
  for (const auto& [args, fragment] : cases) {
    SCOPED_TRACE(args);
    EXPECT_FAILS_WITH(halfway(saxpy + args), fragment);
  }
  EXPECT_FAILS_WITH(halfway("diff " + example("narrow_f16") + " --device interp --grid -64"),
                    "--grid -64: negative");
  EXPECT_FAILS_WITH(halfway("diff " + example("narrow_f16") +
                            " --device interp --groups "
                            "288230376151711745"),
                    "more than the 4294967295");
}

TEST_F(CliHardening, DumpPathsAreCheckedBeforeTheLaunch) {
  std::string spin = file("spin.hk", kSpin);
  // The launch would take minutes: each refusal must come at once.
  const std::string run = "run " + spin + " --grid 1 --arg n=4294967295 ";
  fs::create_directories(dir_ / "sub");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--dump y=" + path("sub"), "is a directory"},
      {"--dump y=" + path("missing/y.npy"), "no folder"},
      {"--dump y=/dev/full", "is not a regular file"},
      {"--dump q=" + path("q.npy"), "'q' is not a buffer parameter"},
      {"--dump y=", "no path"},
      {"--dump y", "expected BUFFER=PATH"},
      {"--dump y=" + path("a.npy") + " --dump y=" + path("a.npy"), "same path"},
  };
  for (const auto& [args, fragment] : cases) {
    SCOPED_TRACE(args);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_FAILS_WITH(halfway(run + args), fragment);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  }
  auto full = halfway(run + "--dump y=/dev/full");
  EXPECT_HAS(full.err, "/dev/full");
  if (::geteuid() != 0) { // root writes anywhere
    fs::create_directories(dir_ / "ro");
    fs::permissions(dir_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_FAILS_WITH(halfway(run + "--dump y=" + path("ro/y.npy")), "cannot create files in");
  }
  for (const auto& name : listing()) // nothing was written
    EXPECT_TRUE(name == "spin.hk" || name == "sub" || name == "ro") << name;
}

TEST_F(CliHardening, AFailedRunNeverTouchesAnExistingFile) {
  std::string keep = file("keep.npy", "precious");
  auto r = halfway("run " + example("narrow_f16") +
                   " --grid 1000 --buffer a=zeros:10 --dump out16=" + keep);
  EXPECT_FAILS_WITH(r, "out-of-bounds");
  EXPECT_EQ(slurp(keep), "precious");
  EXPECT_EQ(listing(), std::vector<std::string>{"keep.npy"}); // no temporary file left
}

TEST_F(CliHardening, DumpsReplaceFilesAtomicallyKeepingPermissionsAndLinks) {
  std::string keep = file("keep.npy", "old");
  fs::permissions(keep, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  std::string target = file("target.raw", "old");
  fs::create_symlink(target, dir_ / "link.raw");
  auto r = halfway("run " + example("saxpy") +
                   " --grid 100 --arg a=2 --buffer x=iota --buffer "
                   "y=zeros --dump y=" +
                   keep + " --dump x=" + path("link.raw"));
  ASSERT_EQ(r.status, 0) << r.all();
  auto y = halfway::io::load_npy(keep, halfway::ir::ScalarType::F32).buffer;
  ASSERT_EQ(y.size(), 100u);
  EXPECT_EQ(y.as<float>()[99], 198.0f);
  EXPECT_EQ(fs::status(keep).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.raw"));
  EXPECT_EQ(fs::file_size(target), 400u);
  EXPECT_EQ(listing(), (std::vector<std::string>{"keep.npy", "link.raw", "target.raw"}));
}

TEST_F(CliHardening, WriteFileAtomicallyReportsThePathAndTheReason) {
  using halfway::cli::write_file_atomically;
  auto message = [](const std::string& p) -> std::string {
    try {
      write_file_atomically(p, "data");
    } catch (const halfway::Error& e) {
      EXPECT_EQ(e.kind(), halfway::ErrorKind::Io);
      return e.what();
    }
    return "no error";
  };
  EXPECT_HAS(message("/dev/full"), "/dev/full");
  EXPECT_HAS(message(path("none/x.raw")), "No such file or directory");
  EXPECT_HAS(message(path("none/x.raw")), "none/x.raw");
  write_file_atomically(path("ok.raw"), "data");
  EXPECT_EQ(slurp(path("ok.raw")), "data");
  EXPECT_EQ(listing(), std::vector<std::string>{"ok.raw"});
}

TEST_F(CliHardening, StagedFilesAppearTogetherOrNotAtAll) {
  using halfway::cli::StagedFile;
  std::string a = file("a.raw", "old a");
  {
    std::vector<StagedFile> staged;
    staged.emplace_back(a, "new a");
    EXPECT_THROW(staged.emplace_back(path("none/b.raw"), "new b"), halfway::Error);
  } // never committed
  EXPECT_EQ(slurp(a), "old a");
  EXPECT_EQ(listing(), std::vector<std::string>{"a.raw"});
  {
    std::vector<StagedFile> staged;
    staged.emplace_back(a, "new a");
    staged.emplace_back(path("b.raw"), "new b");
    for (auto& f : staged)
      f.commit();
  }
  EXPECT_EQ(slurp(a), "new a");
  EXPECT_EQ(slurp(path("b.raw")), "new b");
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.raw", "b.raw"}));
}

// A .npy file: magic, version, header length, header (padded), data.
std::string npy(const std::string& header, size_t data_bytes, int major = 1, int minor = 0) {
  std::string h = header;
  size_t prefix = major == 1 ? 10 : 12;
  h.append((64 - (prefix + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>((h.size() >> 8) & 0xff);
  if (major != 1)
    out += std::string(2, '\0');
  return out + h + std::string(data_bytes, '\0');
}

TEST_F(CliHardening, NpyHeadersAreParsedStrictly) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (64,), }";
  struct Case {
    std::string name, bytes, fragment;
  };
  const std::vector<Case> cases = {
      {"trailing.npy", npy(ok, 260), "4 bytes after the 64 elements"},
      {"short.npy", npy(ok, 252), "truncated .npy data"},
      {"fortran.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (64,), }", 256),
       "np.ascontiguousarray"},
      {"fortran_str.npy", npy("{'descr': '<f4', 'fortran_order': 'False', 'shape': (64,), }", 256),
       "'fortran_order' is not True or False"},
      {"fortran_int.npy", npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (64,), }", 256),
       "unsupported value for key 'fortran_order'"},
      {"negative.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-64,), }", 256),
       "non-negative integer"},
      {"fraction.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6.4,), }", 256),
       "plain non-negative integer"},
      {"overflow.npy",
       npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 256),
       "does not fit in 64 bits"},
      {"huge_dim.npy",
       npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 256),
       "does not fit in 64 bits"},
      {"hidden.npy",
       npy("{'fortran_order': False, 'shape': (64,), 'x': \"'descr': '<f4'\", }", 256),
       "unknown key 'x'"},
      {"no_descr.npy", npy("{'fortran_order': False, 'shape': (64,), }", 256), "has no 'descr'"},
      {"twice.npy",
       npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (64,), }", 256),
       "appears twice"},
      {"not_tuple.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (64), }", 256),
       "(n,)"},
      {"after.npy", npy(ok + " junk", 256), "after the header's closing"},
      {"dtype.npy", npy("{'descr': '<f2', 'fortran_order': False, 'shape': (64,), }", 128),
       "dtype '<f2' does not match the buffer's element type f32 (expected '<f4')"},
      {"structured.npy",
       npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (64,), }", 256),
       "unsupported value for key 'descr'"},
      {"magic.npy", "\x93NUMPZ" + npy(ok, 256).substr(6), "no \\x93NUMPY magic"},
      {"version.npy", npy(ok, 256, 4), "version 4.0 is not supported"},
      {"minor.npy", npy(ok, 256, 1, 1), "version 1.1 is not supported"},
      {"past_eof.npy", std::string("\x93NUMPY\x01\x00\xe8\x03{'descr'", 18),
       "truncated .npy header"},
      {"tiny.npy", std::string("\x93NUMPY\x02\x00\x01", 9), "truncated .npy file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string f = file(c.name, c.bytes);
    auto r = halfway("run " + example("saxpy") + " --grid 64 --arg a=1 --buffer x=" + f);
    EXPECT_FAILS_WITH(r, c.fragment);
    EXPECT_HAS(r.err, c.name); // the message names the file
  }
  // The well-formed ones, in versions 1 and 2, and an empty shape (one element) for a 1-element
  // buffer, are read.
  for (int major : {1, 2}) {
    std::string f = file("good" + std::to_string(major) + ".npy", npy(ok, 256, major));
    auto r = halfway("run " + example("saxpy") + " --grid 64 --arg a=1 --buffer x=" + f);
    EXPECT_EQ(r.status, 0) << r.all();
  }
  std::string dir = path("adir.npy");
  fs::create_directories(dir);
  EXPECT_FAILS_WITH(halfway("run " + example("saxpy") + " --grid 64 --arg a=1 --buffer x=" + dir),
                    "is a directory");
}

TEST_F(CliHardening, JsonIsExactlyOneDocumentInEveryCase) {
  struct Case {
    std::string args;
    int status;
    std::string fragment;
  };
  std::string spin = file("spin.hk", kSpin);
  const std::vector<Case> cases = {
      {"run " + example("saxpy") + " --grid 64 --arg a=2 --json", 0, "\"error\": null"},
      {"run " + example("saxpy") + " --grid 64 --arg a=zz --json", 2, "\"kind\": \"usage\""},
      {"run " + example("saxpy") + " --grid -1 --arg a=1 --json", 2, "--grid -1: negative"},
      {"run " + example("saxpy") + " --grid 64 --arg a=1 --no-such-option --json", 2,
       "\"error\": {"},
      {"run " + path("missing.hk") + " --grid 64 --json", 2, "missing.hk"},
      {"run " + spin + " --grid 1 --arg n=4294967295 --timeout 0.2 --json", 2,
       "\"kind\": \"timeout\""},
      {"diff " + example("narrow_f16") +
           " --grid 640 --device interp --json "
           "'--accept-single-rounding=narrow_f16:display'",
       0, "\"results\": [\n{"},
      {"diff " + example("narrow_f16") + " --grid 640 --device nosuch --json", 2, "unknown device"},
      {"diff " + example("narrow_f16") +
           " --grid 640 --device interp --json "
           "'--accept-single-rounding=narrow_f1:typo'",
       2, "narrow_f1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    auto r = halfway(c.args);
    EXPECT_EQ(r.status, c.status) << r.all();
    EXPECT_TRUE(valid_json(r.out)) << r.out;
    EXPECT_HAS(r.out, c.fragment);
    EXPECT_EQ(r.out.rfind("{\"command\": ", 0), 0u) << r.out;
  }
  // An error after the first device's report: the document holds both. erf runs on the CPU
  // device; the SPIR-V backend refuses it.
  auto names = halfway("devices");
  if (names.out.find("vulkan:") != std::string::npos) {
    const std::string erf = file("erf.hk", R"(kernel erf_f32 workgroup(64, 1, 1) {
  param x: buffer<f32, read>;
  param y: buffer<f32, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = erf(x[i]);
  }
}
)");
    auto r = halfway("diff " + erf + " --grid 640 --device all --check --json");
    EXPECT_EQ(r.status, 2) << r.all();
    EXPECT_TRUE(valid_json(r.out)) << r.out;
    EXPECT_HAS(r.out, "\"device\": \"cpu\"");
    EXPECT_HAS(r.out, "\"kind\": \"unsupported\"");
  }
}

TEST_F(CliHardening, LogsGoToStderrAndStdoutCarriesResultsOnly) {
  const std::string args = "sites " + example("narrow_f16") + " '--accept-single-rounding:display'";
  auto r = halfway(args);
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_EQ(r.out.find("precision policy"), std::string::npos) << r.out;
  EXPECT_HAS(r.err, "precision policy: accepted single rounding");
  EXPECT_EQ(r.err.find("\x1b["), std::string::npos); // not a terminal: no colours
  EXPECT_EQ(halfway(args, "HALFWAY_LOG=off").err, "");
  EXPECT_EQ(halfway(args + " --quiet").err, "");
  EXPECT_HAS(halfway(args, "HALFWAY_LOG=loud").err, "HALFWAY_LOG=loud is not one of");
  auto debug = halfway("run " + example("saxpy") + " --grid 64 --arg a=1 --device cpu -v");
  ASSERT_EQ(debug.status, 0) << debug.all();
  EXPECT_EQ(debug.out.find("halfway: "), std::string::npos) << debug.out;
}

TEST_F(CliHardening, AFailedWriteToStdoutIsAnError) {
  EXPECT_FAILS_WITH(halfway("ops >/dev/full"), "cannot write the results to standard output");
  EXPECT_FAILS_WITH(halfway("run " + example("saxpy") + " --grid 64 --arg a=1 --json >/dev/full"),
                    "No space left on device");
}

TEST_F(CliHardening, OptInFlagsMustNameAKernelOfTheFileAndAPrintableReason) {
  const std::string f = example("narrow_f16");
  EXPECT_FAILS_WITH(halfway("diff " + f +
                            " --device interp --grid 64 "
                            "'--accept-single-rounding=narrow_f1:typo'"),
                    "has no kernel 'narrow_f1'");
  EXPECT_FAILS_WITH(halfway("sites " + f + " '--accept-relaxed-accumulation=nope:typo'"),
                    "has no kernel 'nope'");
  EXPECT_FAILS_WITH(halfway("sites " + f + " '--accept-single-rounding=narrow_f16:a\tb'"),
                    "control character");
  EXPECT_FAILS_WITH(halfway("sites " + f + " --accept-single-rounding"),
                    "--accept-single-rounding");
  EXPECT_EQ(halfway("demo '--accept-single-rounding:display'").status, 2);
  for (const char* sub : {"run", "diff", "emit", "sites"}) {
    auto h = halfway(std::string(sub) + " --help");
    EXPECT_EQ(h.status, 0);
    EXPECT_HAS(h.out, "--accept-single-rounding");
    EXPECT_HAS(h.out, "--accept-relaxed-accumulation");
  }
  EXPECT_EQ(halfway("--help").out.find("--accept-"), std::string::npos);
  for (const char* sub : {"demo", "devices", "ops"}) {
    auto h = halfway(std::string(sub) + " --help");
    EXPECT_EQ(h.status, 0);
    EXPECT_EQ(h.out.find("--accept-"), std::string::npos) << sub << ": " << h.out;
  }
  auto held = halfway("sites " + f + " '--accept-single-rounding=narrow_f16:display: 1 ulp'");
  ASSERT_EQ(held.status, 0) << held.all();
  EXPECT_HAS(held.out, "single rounding: held (display: 1 ulp)");
}

TEST_F(CliHardening, ScalarsMustFitTheirType) {
  std::string k = file("scalars.hk", kScalars);
  const std::string run = "run " + k + " --grid 4 ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--arg h=70000 --arg u=1 --arg s=1", "--arg h=70000: out of range for f16"},
      {"--arg h=0.1 --arg u=1 --arg s=1", "not exactly representable in f16"},
      {"--arg h=1e39 --arg u=1 --arg s=1", "out of range for f32, and so for f16"},
      {"--arg h=1 --arg u=-1 --arg s=1", "--arg u=-1: negative"},
      {"--arg h=1 --arg u=4294967296 --arg s=1", "--arg u=4294967296: out of range"},
      {"--arg h=1 --arg u=99999999999999999999 --arg s=1", "out of range"},
      {"--arg h=1 --arg u=1 --arg s=2147483648", "--arg s=2147483648: out of range"},
      {"--arg h=1 --arg u=1 --arg s=-2147483649", "out of range"},
      {"--arg h=1 --arg u=1 --arg s=1.5", "not an integer"},
      {"--arg h=1 --arg h=2 --arg u=1 --arg s=1", "--arg h is given twice"},
      {"--arg h=1 --arg u=1 --arg s=1 --arg w=3", "'w', which is not a parameter"},
      {"--arg h=1 --arg u=1 --arg s=1 --arg y=3", "y is a buffer"},
      {"--arg h=1 --arg u=1", "scalar parameter s (i32) has no value"},
  };
  for (const auto& [args, fragment] : cases) {
    SCOPED_TRACE(args);
    auto r = halfway(run + args);
    EXPECT_FAILS_WITH(r, fragment);
    EXPECT_HAS(r.err, "kernel scalars");
  }
  auto ok = halfway(run + "--arg h=-65504 --arg u=4294967295 --arg s=-2147483648");
  ASSERT_EQ(ok.status, 0) << ok.all();
  EXPECT_HAS(ok.out, "y (f16[4]): -65504 -65504 -65504 -65504");
}

TEST_F(CliHardening, ControlCharactersAreEscapedOnTheTerminal) {
  const std::string esc = "\x1b[31m";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run " + example("saxpy") + " --grid 64 --arg a=1 --buffer '" + esc + "=zeros'",
       "\\x1b[31m"},
      {"run " + example("saxpy") + " --grid 64 --arg 'a=" + esc + "'", "\\x1b[31m"},
      {"run '" + path("evil" + esc + ".hk") + "' --grid 64", "evil\\x1b[31m.hk"},
      {"run " + example("saxpy") + " --grid 64 --arg a=1 --dump 'q" + esc + "=x'", "\\x1b[31m"},
      {"run " + example("saxpy") + " --grid '6" + esc + "' --arg a=1", "\\x1b[31m"},
      {"run " + example("saxpy") + " '" + esc + "'", "\\x1b[31m"}, // an argument CLI11 refuses
  };
  for (const auto& [args, fragment] : cases) {
    SCOPED_TRACE(fragment);
    auto r = halfway(args);
    EXPECT_FAILS_WITH(r, fragment);
    EXPECT_EQ(r.all().find('\x1b'), std::string::npos) << r.all();
  }
  EXPECT_EQ(halfway::cli::escape_for_terminal("a\x1b\x7f\nb"), "a\\x1b\\x7f\\x0ab");
  EXPECT_EQ(halfway::cli::escape_for_terminal("a\nb", true), "a\nb");
}

TEST_F(CliHardening, MissingDevicesAreClearErrors) {
  const std::string run = "run " + example("saxpy") + " --grid 64 --arg a=1 --device ";
  EXPECT_FAILS_WITH(halfway(run + "nosuch"), "unknown device 'nosuch'");
  auto vk = halfway(run + "vulkan:nosuch");
  EXPECT_EQ(vk.status, 2) << vk.all();
  EXPECT_HAS(vk.err, "nosuch");
  EXPECT_FAILS_WITH(halfway("diff " + example("narrow_f16") + " --grid 64 --device nosuch"),
                    "unknown device 'nosuch'");
}

TEST_F(CliHardening, TimeoutEndsALongLaunchWithoutWritingFiles) {
  std::string spin = file("spin.hk", kSpin);
  auto t0 = std::chrono::steady_clock::now();
  auto r = halfway("run " + spin +
                   " --grid 1 --arg n=4294967295 --timeout 0.3 --dump y=" + path("y.npy"));
  EXPECT_FAILS_WITH(r, "timeout");
  EXPECT_HAS(r.err, "kernel spin");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_FALSE(fs::exists(path("y.npy")));
  auto d = halfway("diff " + spin + " --grid 1 --arg n=4294967295 --timeout 0.3 --device interp");
  EXPECT_FAILS_WITH(d, "timeout");
  auto quick = halfway("run " + example("saxpy") + " --grid 64 --arg a=1 --timeout 120");
  EXPECT_EQ(quick.status, 0) << quick.all();
}

// Runs `args` (the binary first) with stdout and stderr to files, presses Ctrl-C once its handler
// is installed and `settle` has passed, and returns the exit status and how long the command took
// to end after the signal.
struct Interrupted {
  int status = -1;
  std::chrono::steady_clock::duration took{};
};
Interrupted interrupt_after_start(std::vector<std::string> args, const std::string& out,
                                  const std::string& err, std::chrono::milliseconds settle) {
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  Interrupted r;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "cannot start " << args[0];
    return r;
  }
  // Wait until the handler is installed (SigCgt lists SIGINT), then `settle` for the launch.
  auto catches_sigint = [pid] {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("SigCgt:", 0) == 0)
        return (std::stoull(line.substr(7), nullptr, 16) >> (SIGINT - 1)) & 1;
    return 0ull;
  };
  for (int i = 0; i < 200 && !catches_sigint(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(settle);
  auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) {
    ADD_FAILURE() << "waitpid";
    return r;
  }
  r.took = std::chrono::steady_clock::now() - t0;
  r.status = halfway::test::decode_status(status);
  return r;
}

TEST_F(CliHardening, CtrlCInterruptsALaunchWithExitStatus2) {
  std::string spin = file("spin.hk", kSpin);
  std::string out = path(".out"), err = path(".err");
  Interrupted r = interrupt_after_start({HALFWAY_CLI, "run", spin, "--grid", "1", "--arg",
                                         "n=4294967295", "--dump", "y=" + path("y.npy"), "--json"},
                                        out, err, std::chrono::milliseconds(500));
  EXPECT_LT(r.took, std::chrono::seconds(15));
  EXPECT_EQ(r.status, 2);
  EXPECT_HAS(slurp(err), "interrupted");
  EXPECT_TRUE(valid_json(slurp(out))) << slurp(out);
  EXPECT_HAS(slurp(out), "\"kind\": \"interrupted\"");
  EXPECT_FALSE(fs::exists(path("y.npy")));
}

// reduce checks in a child process that ignores Ctrl-C (check_process.hpp): the command must still
// end at once, not when the check in flight reaches its --timeout, and leave no process behind.
TEST_F(CliHardening, CtrlCInterruptsAReduceWhoseCheckRunsInAChild) {
  std::string endless = file("endless.hk", R"(kernel endless workgroup(1, 1, 1) {
  param y: buffer<u32, write>;
  let w: u32 = 0:u32;
  while lt(w, 5:u32) {
    y[0:u32] = w;
  }
}
)");
  std::string out = path(".out"), err = path(".err");
  Interrupted r =
      interrupt_after_start({HALFWAY_CLI, "reduce", endless, "--device", "cpu", "--grid", "1",
                             "--timeout", "120", "--out", path("min.hk")},
                            out, err, std::chrono::milliseconds(1000));
  EXPECT_LT(r.took, std::chrono::seconds(10));
  EXPECT_EQ(r.status, 2);
  EXPECT_HAS(slurp(err), "interrupted: kernel endless");
  EXPECT_FALSE(fs::exists(path("min.hk")));
  // The checking process was killed and reaped with the command: no process runs the file now.
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string line;
    if (cmdline && std::getline(cmdline, line)) {
      EXPECT_EQ(line.find(endless), std::string::npos) << entry.path();
    }
  }
}

// The crash report's handlers (cli_util), each in a forked child. Outside a driver call a fatal
// signal is halfway's own bug and must reach the action the handlers replaced (here a handler of
// the test's; in the binary under AddressSanitizer, its report), whether the processor raised it
// or it was sent; with no handler before them, the default action. Inside a driver call it is the
// one-line Device error and exit status 2.
extern "C" void previous_handler(int sig) {
  const char message[] = "the previous handler ran\n";
  [[maybe_unused]] ssize_t n = ::write(2, message, sizeof message - 1);
  ::_exit(40 + sig);
}

void install_previous(int sig) {
  struct sigaction sa {};
  sa.sa_handler = previous_handler;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
}

// A store to an address the compiler cannot see is unmapped: a real fault, not a trap it inserts.
void fault() {
  volatile uintptr_t address = 16;
  *reinterpret_cast<volatile int*>(address) = 1;
}

TEST(CrashReport, AFatalSignalOutsideADriverCallGoesOnToTheReplacedAction) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_previous(SIGSEGV);
        halfway::cli::install_crash_report();
        halfway::cli::install_crash_report(); // a second call keeps the first one's previous
                                              // actions
        fault();
      },
      ::testing::ExitedWithCode(40 + SIGSEGV), "the previous handler ran");
  EXPECT_EXIT(
      {
        install_previous(SIGABRT);
        halfway::cli::install_crash_report();
        std::abort();
      },
      ::testing::ExitedWithCode(40 + SIGABRT), "the previous handler ran");
  EXPECT_EXIT(
      {
        install_previous(SIGBUS);
        halfway::cli::install_crash_report();
        std::raise(SIGBUS);
      },
      ::testing::ExitedWithCode(40 + SIGBUS), "the previous handler ran");
#ifndef __SANITIZE_ADDRESS__ // where AddressSanitizer's handler is the one replaced
  EXPECT_EXIT(
      {
        std::signal(SIGSEGV, SIG_DFL);
        halfway::cli::install_crash_report();
        fault();
      },
      ::testing::KilledBySignal(SIGSEGV), "");
#endif
}

TEST(CrashReport, AFatalSignalInADriverCallIsTheDeviceErrorWithStatus2) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        install_previous(SIGSEGV);
        halfway::cli::install_crash_report();
        const halfway::support::DriverCall call("saxpy", "Vulkan device test",
                                                "compiling its pipeline");
        fault();
      },
      ::testing::ExitedWithCode(2),
      "kernel saxpy: Vulkan device test crashed \\(SIGSEGV\\) while compiling its pipeline: a "
      "driver bug");
}

} // namespace
