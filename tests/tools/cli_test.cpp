// Runs the built `halfway` binary the way a user would and checks exit status and output.
#include "cli_runner.hpp"
#include "cli_util.hpp"
#include "halfway/io/npy.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

// Stdout and stderr together, as a user sees them.
halfway::test::CliRun halfway(const std::string& args) {
  return halfway::test::run_cli(args, halfway::test::Streams::Merged);
}

std::string example(const std::string& name) {
  return std::string(HALFWAY_SOURCE_DIR) + "/examples/kernels/" + name + ".hk";
}

class Cli : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("halfway_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

#define EXPECT_OUTPUT(result, fragment)                                                            \
  EXPECT_NE((result).out.find(fragment), std::string::npos) << (result).out

TEST_F(Cli, HelpForEverySubcommand) {
  auto top = halfway("--help");
  EXPECT_EQ(top.status, 0);
  for (const char* sub : {"run", "diff", "emit", "sites", "fuse", "devices", "demo", "ops", "plot",
                          "fuzz", "reduce"}) {
    EXPECT_OUTPUT(top, sub);
    auto r = halfway(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub << ": " << r.out;
  }
}

TEST_F(Cli, RunPrintsOutputsAndDumpsNpy) {
  auto r = halfway("run " + example("saxpy") +
                   " --grid 1000 --arg a=2 --buffer x=iota --buffer "
                   "y=zeros --dump y=" +
                   path("y.npy"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(r, "saxpy on interp: 16 workgroups of 64 lanes");
  EXPECT_OUTPUT(r, "y (f32[1000]): 0 2 4 6 8 10 12 14 ...");
  auto y = halfway::io::load_npy(path("y.npy"), halfway::ir::ScalarType::F32).buffer;
  ASSERT_EQ(y.size(), 1000u);
  EXPECT_EQ(y.as<float>()[999], 1998.0f);
}

TEST_F(Cli, RunReadsNpyAndRawInputs) {
  halfway::rt::HostBuffer x(halfway::ir::ScalarType::F32, 4);
  for (int i = 0; i < 4; ++i)
    x.as<float>()[i] = 0.5f * static_cast<float>(i);
  halfway::cli::write_file_atomically(path("x.npy"), halfway::io::npy_bytes(x));
  halfway::cli::write_file_atomically(path("y.raw"), halfway::io::raw_bytes(x));
  auto r = halfway("run " + example("saxpy") + " --grid 4 --arg a=4 --buffer x=" + path("x.npy") +
                   " --buffer y=" + path("y.raw") + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(
      r, "\"y\": {\"type\": \"f32\", \"size\": 4, \"first\": [\"0\", \"2.5\", \"5\", \"7.5\"]}");
}

TEST_F(Cli, DiffOnTheInterpreterIsExact) {
  auto r = halfway("diff " + example("narrow_f16") + " --grid 20000 --device interp");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(r, "out16 (f16[20000]): 20000 exact, 0 within bound, 0 violations");
  auto j = halfway("diff " + example("narrow_f16") + " --grid 2000 --device interp --json");
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_OUTPUT(j, "\"kernel\"");
  EXPECT_EQ(j.out.rfind("{\"command\": \"diff\", \"results\": [", 0), 0u) << j.out;
}

TEST_F(Cli, DiffThatProvesNothingExitsOneUnlessAccepted) {
  // a = 0 leaves y as it was: equal results prove nothing about the device.
  auto zero = halfway("diff " + example("saxpy") + " --grid 4096 --device cpu --arg a=0");
  EXPECT_EQ(zero.status, 1) << zero.out;
  EXPECT_OUTPUT(zero, "inconclusive: y:");
  EXPECT_OUTPUT(zero, "result: INCONCLUSIVE (1 inconclusive buffer)");
  auto accepted = halfway("diff " + example("saxpy") +
                          " --grid 4096 --device cpu --arg a=0 --accept-inconclusive");
  EXPECT_EQ(accepted.status, 0) << accepted.out;
  EXPECT_OUTPUT(accepted, "result: OK, inconclusive accepted");
  auto real = halfway("diff " + example("saxpy") + " --grid 4096 --device cpu --arg a=3");
  EXPECT_EQ(real.status, 0) << real.out;
  EXPECT_OUTPUT(real, "result: OK\n");
  // Packed fp8 weights drawn for how the kernel unpacks them: finite, so rows are numbers.
  auto gemv = halfway("diff " + example("gemv_fp8_e4m3") +
                      " --grid 64 --device cpu --arg cols=256 --buffer w=random:4096 --buffer "
                      "x=random:256");
  EXPECT_EQ(gemv.status, 0) << gemv.out;
  EXPECT_OUTPUT(gemv, "result: OK\n");
}

TEST_F(Cli, SitesAndOptInFlags) {
  auto r = halfway("sites " + example("narrow_f16"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(r, "multiply-add, barrier (rule 3");
  EXPECT_OUTPUT(r, "single rounding: not held");
  auto held = halfway("sites " + example("narrow_f16") +
                      " '--accept-single-rounding=narrow_f16:display output'");
  ASSERT_EQ(held.status, 0) << held.out;
  EXPECT_OUTPUT(held, "single rounding: held (display output)");
  EXPECT_OUTPUT(held,
                "multiply-add, lifted by single rounding: display output (without it: rule 3");
  auto emitted = halfway("emit --ir " + example("narrow_f16") +
                         " '--accept-single-rounding=narrow_f16:display output'");
  ASSERT_EQ(emitted.status, 0) << emitted.out;
  EXPECT_OUTPUT(emitted, "lifted by single rounding: display output");
  auto blank = halfway("sites " + example("narrow_f16") + " '--accept-single-rounding:   '");
  EXPECT_EQ(blank.status, 2);
  EXPECT_OUTPUT(blank, "refused");
  auto dflt =
      halfway("sites " + example("narrow_f16") + " --accept-single-rounding=unnamed_kernel:x");
  EXPECT_EQ(dflt.status, 2);
  EXPECT_OUTPUT(dflt, "has no kernel 'unnamed_kernel'");
}

TEST_F(Cli, EmitIr) {
  auto r = halfway("emit " + example("narrow_f16") + " --ir");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(r, "out16[i] = narrow<f16>(add(mul(a[i], b[i]), c[i]));");
  EXPECT_OUTPUT(r, "site 0: store to out16");
  EXPECT_EQ(halfway("emit " + example("narrow_f16")).status, 2); // a stage is required
}

TEST_F(Cli, EmitLlvmAndSpirvFollowThePolicy) {
  auto strict = halfway("emit " + example("narrow_f16") + " --llvm");
  ASSERT_EQ(strict.status, 0) << strict.out;
  EXPECT_OUTPUT(strict, "fptrunc");
  EXPECT_EQ(strict.out.find("contract"), std::string::npos) << strict.out;
  auto fused = halfway("emit " + example("narrow_f16") +
                       " --llvm '--accept-single-rounding=narrow_f16:display only'");
  ASSERT_EQ(fused.status, 0) << fused.out;
  EXPECT_OUTPUT(fused, "fmul contract");
  auto spirv = halfway("emit " + example("narrow_f16") + " --spirv");
  ASSERT_EQ(spirv.status, 0) << spirv.out;
  EXPECT_OUTPUT(spirv, "NoContraction");
  EXPECT_OUTPUT(spirv, "RoundingModeRTE");
}

TEST_F(Cli, RunOnEveryDevice) {
  for (const char* device : {"interp", "cpu", "vulkan"}) {
    auto r = halfway("run " + example("saxpy") +
                     " --grid 256 --arg a=2 --buffer x=iota --buffer "
                     "y=zeros --device " +
                     device + " --check");
    ASSERT_EQ(r.status, 0) << device << ": " << r.out;
    EXPECT_OUTPUT(r, "y (f32[256]): 0 2 4 6 8 10 12 14 ...");
  }
}

TEST_F(Cli, DiffOnDevicesWithAndWithoutTheOptIn) {
  auto strict = halfway("diff " + example("narrow_f16") + " --grid 65536 --device all");
  ASSERT_EQ(strict.status, 0) << strict.out;
  EXPECT_OUTPUT(strict, "against cpu");
  EXPECT_OUTPUT(strict, "against vulkan:");
  EXPECT_OUTPUT(strict, "65536 exact, 0 within bound, 0 violations");
  // With the opt-in the CPU JIT contracts a*b+c into an FMA: tie-stressing inputs then round
  // differently, inside the documented bound.
  auto fused = halfway("diff " + example("narrow_f16") +
                       " --grid 65536 --device cpu "
                       "'--accept-single-rounding=narrow_f16:display only'");
  ASSERT_EQ(fused.status, 0) << fused.out;
  EXPECT_OUTPUT(fused, "single rounding: held (display only)");
  EXPECT_EQ(fused.out.find(" 0 within bound"), std::string::npos) << fused.out;
  EXPECT_OUTPUT(fused, " 0 violations");
}

TEST_F(Cli, Demo) {
  auto r = halfway("demo");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(r, "All comparisons hold.");
  EXPECT_OUTPUT(r, "narrow_f16       cpu");
  EXPECT_OUTPUT(r, "With accept_single_rounding");
  // The fused pipeline, bit for bit on the CPU device (specs/fusion.md).
  EXPECT_OUTPUT(r, "fused into one kernel,\nfused(chain_mad+chain_scale+chain_square)");
  EXPECT_OUTPUT(r, "cpu                                   262144       262144       262144");
  // Every workload, compared on the CPU device bit for bit.
  for (std::string name :
       {"matmul_tiled", "group_norm_silu", "attention", "conv3x3", "gemv_f32", "gemv_f16",
        "gemv_fp8<e4m3>", "gemv_fp8<e5m2>", "act<f32>", "act<f16>", "softmax_f16out"}) {
    name.resize(16, ' ');
    EXPECT_OUTPUT(r, "\n" + name + " cpu ");
  }
  // Where a Vulkan device exists, the kernels with exp, rsqrt or div are judged there by the
  // documented precision: marked, every element exact or within its interval, none undecided.
  if (r.out.find(" vulkan") != std::string::npos) {
    EXPECT_OUTPUT(r, "\nmatmul_tiled     vulkan");
    EXPECT_OUTPUT(r, "* judged by the device's documented precision");
    for (std::string name : {"group_norm_silu*", "attention*", "softmax_f16out*"}) {
      name.resize(16, ' ');
      size_t at = r.out.find("\n" + name + " vulkan");
      ASSERT_NE(at, std::string::npos) << name << "\n" << r.out;
      // The counts follow the 16-column kernel and 34-column device names.
      std::istringstream row(r.out.substr(at + 1 + 16 + 1 + 34, r.out.find('\n', at + 1) - at));
      uint64_t elements = 0, exact = 0, in_bound = 0, in_interval = 0, undecided = 1,
               violations = 1;
      row >> elements >> exact >> in_bound >> in_interval >> undecided >> violations;
      EXPECT_GT(elements, 0u) << name;
      EXPECT_EQ(exact + in_interval, elements) << name;
      EXPECT_EQ(undecided, 0u) << name;
      EXPECT_EQ(violations, 0u) << name;
    }
  }
}

TEST_F(Cli, DevicesAndOps) {
  auto d = halfway("devices");
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_OUTPUT(d, "interp: interp");
  auto o = halfway("ops");
  ASSERT_EQ(o.status, 0);
  EXPECT_OUTPUT(o, "| `fma` | 3 |");
}

TEST_F(Cli, BadInputIsAClearErrorWithStatus2) {
  struct Case {
    std::string args, fragment;
  };
  std::string broken = file("broken.hk", "kernel k workgroup(64, 1, 1) {\n  let x: f32 = ;\n}\n");
  std::string garbage = file("garbage.npy", "this is not numpy");
  std::vector<Case> cases = {
      {"run " + broken + " --grid 64", "broken.hk:2:16"},
      {"run " + example("saxpy") + " --kernel nope --grid 64 --arg a=1", "unknown kernel nope"},
      {"run " + example("saxpy") + " --grid 64 --arg a=1 --device quantum",
       "unknown device 'quantum'"},
      {"run " + example("saxpy") + " --grid 64 --arg a=abc",
       "--arg a=abc: not a number (a is f32)"},
      {"run " + example("saxpy") + " --grid 64 --arg zz=1", "'zz', which is not a parameter"},
      {"run " + example("saxpy") + " --grid 64", "scalar parameter a (f32) has no value"},
      {"run " + path("missing.hk") + " --grid 64", "missing.hk"},
      {"run " + example("saxpy") + " --grid 64 --arg a=1 --buffer x=" + garbage, "not a .npy file"},
      {"run " + example("saxpy") + " --grid 64 --arg a=1 --buffer x=" + path("none.npy"),
       "cannot open the file"},
      {"run " + example("narrow_f16") + " --grid 1000 --buffer a=zeros:10",
       "out-of-bounds access: kernel narrow_f16"},
      {"run " + example("saxpy") + " --grid 1099511627776 --arg a=1", "a grid can have along x"},
      {"run " + example("saxpy") + " --arg a=1", "no grid"},
      {"run " + example("saxpy") + " --grid 64 --arg a=1 --dump q=" + path("q.npy"), "--dump q="},
  };
  for (const Case& c : cases) {
    auto r = halfway(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_OUTPUT(r, c.fragment);
    EXPECT_EQ(r.out.find("internal error"), std::string::npos) << r.out;
  }
}

} // namespace
