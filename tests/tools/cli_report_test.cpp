// The report people look at, tested on the built binary: the histogram in text and JSON,
// `halfway diff --dump DIR`, `halfway plot` (the SVG rendered with rsvg-convert), and exhaustive
// sweeps (`--inputs sweep`) of every example kernel with a 16- or 8-bit float input on every
// device.
#include "cli_runner.hpp"
#include "halfway/io/npy.hpp"
#include "halfway/ir/types.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using json = nlohmann::ordered_json; // keeps the order of the members it writes

namespace {

using halfway::test::CliRun;
using halfway::test::slurp;

std::string example(const std::string& name) {
  return std::string(HALFWAY_SOURCE_DIR) + "/examples/kernels/" + name + ".hk";
}

// An f16 input swept through a multiply-add with f32 operands that narrows back to f16: the
// narrowing needs its barrier, so the single-rounding opt-in changes what the devices may do.
const char* kScaleF16 = R"(kernel scale_f16 workgroup(64, 1, 1) {
  param x: buffer<f16, read>;
  param a: buffer<f32, read>;
  param c: buffer<f32, read>;
  param y: buffer<f16, write>;
  let i: u32 = global_id(0);
  if lt(i, len(y)) {
    y[i] = narrow<f16>(add(mul(widen<f32>(x[i]), a[i]), c[i]));
  }
}
)";

// One lane that loops n times: a launch that would take minutes, so that a refusal that comes at
// once proves the check ran before it.
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

class CliReport : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("halfway_report_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs the binary through the shell with stdout and stderr apart.
  CliRun halfway(const std::string& args) { return halfway::test::run_cli(args); }

  fs::path dir_;
};

const std::string kOptIn = " '--accept-single-rounding:f16 output feeds a display'";

TEST_F(CliReport, DiffShowsAHistogramPerBufferInTextAndJson) {
  // With the opt-in the CPU device fuses a*b+c: tie-stressing inputs then land 1 ulp (and more,
  // where they cancel) from the two-step reference.
  auto text = halfway("diff " + example("narrow_f16") + " --grid 4096 --device cpu" + kOptIn);
  ASSERT_EQ(text.status, 0) << text.all();
  EXPECT_HAS(text.out, "  elements by distance from the reference (ulps of f16):\n");
  EXPECT_HAS(text.out, "\n            0 #");
  EXPECT_HAS(text.out, "\n            1 #");
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find(" #") != std::string::npos) {
      EXPECT_LE(line.size(), 80u) << line;
    }

  auto doc = halfway("diff " + example("narrow_f16") + " --grid 4096 --device cpu --json" + kOptIn);
  ASSERT_EQ(doc.status, 0) << doc.all();
  const json j = json::parse(doc.out);
  const json& b = j.at("results").at(0).at("buffers").at(0);
  const json& buckets = b.at("histogram").at("buckets");
  uint64_t total = b.at("histogram").at("nan_mismatch").get<uint64_t>();
  for (size_t k = 0; k < buckets.size(); ++k) {
    total += buckets[k].at("count").get<uint64_t>();
    if (k >= 2) {
      EXPECT_EQ(buckets[k].at("lo").get<uint64_t>(), (uint64_t{1} << (k - 2)) + 1);
      EXPECT_EQ(buckets[k].at("hi").get<uint64_t>(), uint64_t{1} << (k - 1));
    }
  }
  EXPECT_EQ(total, 4096u);
  EXPECT_GE(buckets.at(0).at("count").get<uint64_t>(), b.at("exact").get<uint64_t>());
  EXPECT_GT(buckets.at(1).at("count").get<uint64_t>(), 0u);
  EXPECT_EQ(buckets.at(3).at("label"), "3-4");
}

TEST_F(CliReport, DumpWritesReferenceDeviceAndVerdictPerOutput) {
  const std::string dump = path("dump"); // created by the command
  auto r = halfway("diff " + example("narrow_f16") + " --grid 4096 --device cpu --json --dump " +
                   dump + kOptIn);
  ASSERT_EQ(r.status, 0) << r.all();
  const json b = json::parse(r.out).at("results").at(0).at("buffers").at(0);
  using halfway::ir::ScalarType;
  const auto reference =
      halfway::io::load_npy(dump + "/out16.reference.npy", ScalarType::F16).buffer;
  const auto device = halfway::io::load_npy(dump + "/out16.device.npy", ScalarType::F16).buffer;
  const auto verdict = halfway::io::load_npy(dump + "/out16.verdict.npy", ScalarType::U8).buffer;
  ASSERT_EQ(reference.size(), 4096u);
  ASSERT_EQ(device.size(), 4096u);
  ASSERT_EQ(verdict.size(), 4096u);
  EXPECT_EQ(slurp(dump + "/out16.verdict.npy").substr(0, 50).find("'descr': '|u1'") !=
                std::string::npos,
            true);
  std::array<uint64_t, 4> counts{};
  for (size_t i = 0; i < verdict.size(); ++i) {
    const uint64_t v = verdict.get_bits(i);
    ASSERT_LT(v, 4u) << i;
    ++counts[v];
    // 0 exact: the same bits (this output has no NaN against NaN payload differences to forgive).
    if (v == 0) {
      EXPECT_EQ(reference.get_bits(i), device.get_bits(i)) << i;
    } else {
      EXPECT_NE(reference.get_bits(i), device.get_bits(i)) << i;
    }
  }
  EXPECT_EQ(counts[0], b.at("exact").get<uint64_t>());
  EXPECT_EQ(counts[1], b.at("within_bound").get<uint64_t>());
  EXPECT_EQ(counts[2], b.at("unchecked").get<uint64_t>());
  EXPECT_EQ(counts[3], b.at("violations").get<uint64_t>());
  EXPECT_GT(counts[1], 0u);
  // Only the three files, no temporary left behind.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dump)) {
    ++files;
    EXPECT_EQ(e.path().filename().string().rfind("out16.", 0), 0u) << e.path();
  }
  EXPECT_EQ(files, 3u);
}

TEST_F(CliReport, DumpIsCheckedBeforeTheLaunch) {
  const std::string spin = file("spin.hk", kSpin);
  const std::string run = "diff " + spin + " --grid 1 --arg n=4294967295 --device cpu ";
  file("plain", "x");
  fs::create_directories(dir_ / "kept");
  fs::create_directories(dir_ / "kept" / "y.verdict.npy"); // a folder where a file must go
  file("kept/y.reference.npy", "old");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--dump " + path("plain"), "--dump: not a folder"},
      {"--dump " + path("missing/deeper"), "cannot create the folder"},
      {"--dump ''", "--dump: empty folder name"},
      {"--dump " + path("kept"), "is a directory, not a file"},
  };
  for (const auto& [args, fragment] : cases) {
    SCOPED_TRACE(args);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FAILS_WITH(halfway(run + args), fragment);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  }
  // A mistake found before the folder would be made leaves no folder behind.
  EXPECT_FAILS_WITH(halfway(run + "--buffer nope=zeros --dump " + path("fresh")),
                    "'nope', which is not a parameter");
  EXPECT_FALSE(fs::exists(path("fresh")));
  EXPECT_EQ(slurp(path("kept/y.reference.npy")), "old");
  EXPECT_FALSE(fs::exists(path("kept/y.device.npy")));
  // Several devices would overwrite each other's files.
  EXPECT_FAILS_WITH(halfway("diff " + example("saxpy") +
                            " --grid 64 --arg a=2 --device all "
                            "--dump " +
                            path("d")),
                    "pick one with --device");
}

TEST_F(CliReport, PlotDrawsHistogramsAndModelCounts) {
  auto doc = halfway("diff " + example("narrow_f16") + " --grid 4096 --device all --json" + kOptIn);
  ASSERT_EQ(doc.status, 0) << doc.all();
  // The rounding-model counts are optional: add some, as a report that has them carries them.
  json j = json::parse(doc.out);
  j["results"][0]["buffers"][0]["models"] = {{"two-step", 3654},
                                             {"single <rounding>", 442},
                                             {"a model with a very long name", {{"count", 7}}}};
  const std::string report = file("report.json", j.dump());
  const std::string svg = path("report.svg");
  auto r = halfway("plot " + report + " -o " + svg);
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_EQ(r.out, ""); // nothing but the file
  const std::string text = slurp(svg);
  EXPECT_EQ(text.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 0), 0u) << text;
  EXPECT_HAS(text, "narrow_f16 on cpu: out16 (f16[4096])");
  EXPECT_HAS(text, "narrow_f16 on vulkan:");
  EXPECT_HAS(text, ">3-4</text>");
  EXPECT_HAS(text, ">single &lt;rounding&gt;</text>");
  EXPECT_HAS(text, ">442</text>");
  EXPECT_HAS(text, ">a model with a ve\xe2\x80\xa6</text>"); // shortened, still valid UTF-8
  EXPECT_HAS(text, ">7</text>");
  // In the document's order, not sorted by name.
  EXPECT_LT(text.find(">two-step</text>"), text.find(">single &lt;rounding&gt;</text>"));
  EXPECT_EQ(text.find("href"), std::string::npos) << "the SVG must be self-contained";

  if (std::system("command -v rsvg-convert >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "rsvg-convert (Debian package librsvg2-bin) is not installed: the SVG was "
                    "checked as text only";
  const std::string png = path("report.png");
  ASSERT_EQ(std::system(("rsvg-convert '" + svg + "' -o '" + png + "'").c_str()), 0);
  const std::string bytes = slurp(png);
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // Width and height from the IHDR chunk: the declared 840 pixels wide, and taller than the two
  // panels' headers.
  auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(bytes[at])) << 24) | (uint32_t(uint8_t(bytes[at + 1])) << 16) |
           (uint32_t(uint8_t(bytes[at + 2])) << 8) | uint32_t(uint8_t(bytes[at + 3]));
  };
  EXPECT_EQ(be32(16), 840u);
  EXPECT_GT(be32(20), 200u);
}

TEST_F(CliReport, PlotRefusesWhatIsNotADiffDocument) {
  const std::string out = path("out.svg");
  file("out.svg", "previous");
  auto ok = halfway("diff " + example("narrow_f16") + " --grid 256 --device interp --json");
  ASSERT_EQ(ok.status, 0) << ok.all();
  json good = json::parse(ok.out);
  json no_histogram = good;
  no_histogram["results"][0]["buffers"][0].erase("histogram");
  json negative = good;
  negative["results"][0]["buffers"][0]["histogram"]["buckets"][0]["count"] = -1;
  json bad_models = good;
  bad_models["results"][0]["buffers"][0]["models"] = {{"fma", "many"}};
  auto failed = halfway("diff " + example("narrow_f16") + " --grid 256 --device nope --json");
  ASSERT_EQ(failed.status, 2);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"command\": ", "not valid JSON"},
      {"[1, 2]", "expected a JSON object at the top"},
      {"{\"command\": \"run\", \"results\": [], \"error\": null}", "\"run\", not \"diff\""},
      {"{\"command\": \"diff\", \"results\": [], \"error\": null}", "results: empty"},
      {failed.out, "the run failed and has no report to draw"},
      {no_histogram.dump(), "results[0].buffers[0]: no \"histogram\""},
      {negative.dump(), "results[0].buffers[0].histogram.buckets[0].count: expected a "
                        "non-negative integer"},
      {bad_models.dump(), "results[0].buffers[0].models.fma: expected a non-negative integer"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].first.substr(0, 200));
    const std::string in = file("in" + std::to_string(i) + ".json", cases[i].first);
    auto r = halfway("plot " + in + " -o " + out);
    EXPECT_FAILS_WITH(r, cases[i].second);
    EXPECT_HAS(r.err, in); // the message names the file
  }
  EXPECT_FAILS_WITH(halfway("plot " + path("absent.json") + " -o " + out), "absent.json");
  // The output is checked before the document is read.
  EXPECT_FAILS_WITH(halfway("plot " + path("absent.json") + " -o " + dir_.string()),
                    "is a directory");
  EXPECT_FAILS_WITH(halfway("plot " + file("g.json", good.dump())), "--output is required");
  EXPECT_EQ(slurp(out), "previous"); // never half-written, never replaced by a failure
  ASSERT_EQ(halfway("plot " + path("g.json") + " -o " + out).status, 0);
  EXPECT_NE(slurp(out), "previous");
}

// Every example kernel with a 16- or 8-bit float input, swept over all its codes, on every
// device: bit-exact without the opt-in, and without violations under it.
TEST_F(CliReport, SweepEveryNarrowInputExampleOnEveryDevice) {
  struct Case {
    std::string kernel, args, buffer;
    uint64_t elements;
  };
  const std::vector<Case> cases = {
      {example("linear_f16"), "--arg b=0.5", "y (f32[65536])", 65536},
      {example("linear_bf16"), "--arg b=0.5", "y (f32[65536])", 65536},
      // Four e4m3/e5m2 codes per u32 word, one word per row: cols = 4.
      {example("gemv_fp8_e4m3"), "--arg cols=4", "y (f32[256])", 256},
      {example("gemv_fp8_e5m2"), "--arg cols=4", "y (f32[256])", 256},
      {file("scale_f16.hk", kScaleF16), "", "y (f16[65536])", 65536},
      // f16 arithmetic, NaN fix-ups and a clamp (min/max on the f16 bits, handed to the add in
      // f32 on the CPU device): every pattern, signalling NaNs included.
      {example("act_f16"), "", "o (f16[65536])", 65536},
  };
  for (const Case& c : cases) {
    for (const char* device : {"interp", "cpu", "vulkan"}) {
      SCOPED_TRACE(c.kernel + " on " + device);
      const std::string base =
          "diff " + c.kernel + " --inputs sweep " + c.args + " --device " + device;
      auto strict = halfway(base);
      ASSERT_EQ(strict.status, 0) << strict.all();
      EXPECT_HAS(strict.out, c.buffer + ": " + std::to_string(c.elements) +
                                 " exact, 0 within bound, 0 violations");
      auto opted = halfway(base + kOptIn);
      ASSERT_EQ(opted.status, 0) << opted.all();
      EXPECT_HAS(opted.out, " 0 violations");
      EXPECT_HAS(opted.out, "result: OK\n");
    }
  }
  // Under the opt-in the CPU device fuses scale_f16's multiply-add: some of the 65536 codes
  // round differently, and every one of them within the bound.
  auto fused = halfway("diff " + path("scale_f16.hk") + " --inputs sweep --device cpu" + kOptIn);
  ASSERT_EQ(fused.status, 0) << fused.all();
  EXPECT_EQ(fused.out.find(" 0 within bound"), std::string::npos) << fused.out;
}

TEST_F(CliReport, SweepSizesAndBuffersAreChecked) {
  auto none = halfway("diff " + example("narrow_f16") + " --inputs sweep");
  EXPECT_FAILS_WITH(none, "--inputs sweep: the kernel has no input buffer of f16, bf16, e4m3 or "
                          "e5m2 (or of u32 words the kernel unpacks as one of them) to sweep");
  EXPECT_HAS(none.err, "narrow_f16");
  const std::string linear = example("linear_f16");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"diff " + linear + " --arg b=1 --inputs sweep:x", "x is a buffer of f32; a sweep needs"},
      {"diff " + linear + " --arg b=1 --inputs sweep:q", "no parameter named 'q'"},
      {"diff " + linear + " --arg b=1 --inputs sweep --grid 1000",
       "w has 65536 elements and the grid 65536 lanes; --grid 1000 gives 1000 (leave it out)"},
      {"diff " + linear + " --arg b=1 --inputs sweep --groups 2", "--groups 2 gives 128"},
      {"diff " + linear + " --arg b=1 --inputs sweep --buffer w=zeros",
       "--buffer w=zeros would replace it"},
      {"diff " + linear + " --arg b=1 --grid 64 --inputs swept", "sweep[:BUFFER]"},
  };
  for (const auto& [args, fragment] : cases) {
    SCOPED_TRACE(args);
    auto r = halfway(args);
    EXPECT_FAILS_WITH(r, fragment);
    EXPECT_HAS(r.err, "linear<f16>"); // names the kernel
  }
  // --grid equal to the sweep's size, and other buffers given explicitly, are fine.
  auto same = halfway("diff " + linear +
                      " --arg b=1 --inputs sweep:w --grid 65536 --buffer x=iota --device cpu");
  EXPECT_EQ(same.status, 0) << same.all();
  EXPECT_HAS(same.out, "y (f32[65536]): 65536 exact");
  // `run` takes the same inputs.
  auto run = halfway("run " + linear + " --arg b=0 --inputs sweep --buffer x=iota --show 3");
  ASSERT_EQ(run.status, 0) << run.all();
  // y[i] = i * w[i] with w[i] the f16 of code i: 0 * +0, 1 * (smallest subnormal), ...
  EXPECT_HAS(run.out, "y (f32[65536]): 0 5.96046448e-08 2.38418579e-07 ...");
}

} // namespace
