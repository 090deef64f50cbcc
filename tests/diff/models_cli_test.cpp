// `halfway diff --exact-models` and the rounding-model fields of its text and JSON reports, run
// the way a user would, on the CPU device (specs/f16-narrowing-barrier.md §6).
#include "cli_runner.hpp"

#include <array>
#include <cstdio>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>

namespace {

// `args` after the binary; stderr goes to the output too unless `stdout_only`.
halfway::test::CliRun halfway(const std::string& args, bool stdout_only = false) {
  using halfway::test::Streams;
  return halfway::test::run_cli(args, stdout_only ? Streams::StdoutOnly : Streams::Merged);
}

std::string narrow_f16() {
  return std::string(HALFWAY_SOURCE_DIR) + "/examples/kernels/narrow_f16.hk";
}
std::string shapes() {
  return std::string(HALFWAY_SOURCE_DIR) + "/tests/diff/kernels/model_shapes.hk";
}

// The model LLVM's `contract` gives on this host (no fma instruction: nothing is fused).
std::string cpu_model() {
  return __builtin_cpu_supports("fma") ? "FusedF32" : "TwoStep";
}

#define EXPECT_OUTPUT(result, fragment)                                                            \
  EXPECT_NE((result).out.find(fragment), std::string::npos) << (result).out

TEST(DiffModelsCli, ExactModelsOnTheCpu) {
  auto r = halfway("diff " + narrow_f16() +
                   " --grid 65536 --device cpu --inputs ties --exact-models "
                   "'--accept-single-rounding=narrow_f16:models test'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(r, "exact models: an element at an unbarriered site must equal a rounding model");
  EXPECT_OUTPUT(r, "rounding models at unbarriered sites (65536 elements): TwoStep on ");
  EXPECT_OUTPUT(r, "; fits: " + cpu_model());
  EXPECT_OUTPUT(r, "within bound, unexplained: 0; largest |difference| / bound: ");
  EXPECT_OUTPUT(r, "result: OK\n");
}

TEST(DiffModelsCli, JsonCarriesTheModels) {
  auto r = halfway("diff " + narrow_f16() +
                       " --grid 4096 --device cpu --inputs ties --exact-models --json "
                       "'--accept-single-rounding=narrow_f16:models test'",
                   true);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(r, "\"exact_models\": true");
  EXPECT_OUTPUT(r, "\"rounding_models\": {\"elements\": 4096, \"first\": {\"TwoStep\": ");
  EXPECT_OUTPUT(r, "\"fits\": [\"" + cpu_model());
  EXPECT_OUTPUT(r, "\"unexplained\": 0");
  // One valid JSON document.
  auto valid =
      halfway("diff " + narrow_f16() +
                  " --grid 4096 --device cpu --inputs ties --exact-models --json "
                  "'--accept-single-rounding=narrow_f16:models test' 2>/dev/null | python3 -c "
                  "'import json, sys; d = json.load(sys.stdin); "
                  "print(d[\"results\"][0][\"buffers\"][0][\"rounding_models\"][\"elements\"])'",
              true);
  EXPECT_EQ(valid.status, 0) << valid.out;
  EXPECT_EQ(valid.out, "4096\n");
}

TEST(DiffModelsCli, WithoutTheOptInNothingIsCounted) {
  auto r = halfway("diff " + narrow_f16() +
                       " --grid 4096 --device cpu --inputs ties --exact-models --json",
                   true);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_OUTPUT(r, "\"rounding_models\": {\"elements\": 0,");
  EXPECT_OUTPUT(r, "\"max_bound_ratio\": null");
}

TEST(DiffModelsCli, ProducerShapesOnTheCpu) {
  // Contraction of general producer trees: a product alone, two products (the first contracted),
  // a chain, c - a*b into bf16.
  for (const char* k : {"product_f16", "two_products_f16", "chain_f16", "sub_bf16"}) {
    auto r = halfway("diff " + shapes() + " --kernel " + k +
                     " --grid 65536 --device cpu --inputs ties --exact-models "
                     "'--accept-single-rounding:models test'");
    EXPECT_EQ(r.status, 0) << k << "\n" << r.out;
    EXPECT_OUTPUT(r, "(65536 elements)");
    EXPECT_OUTPUT(r, std::string(std::string(k) == "product_f16" ? "TwoStep" : cpu_model()));
  }
}

} // namespace
