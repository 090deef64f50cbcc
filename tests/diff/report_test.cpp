// The report: counts, the largest difference, the first violations with their inputs, the budget
// with its reasons, and both renderings (the JSON one parsed back).
#include "examples.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "model_device.hpp"

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <gtest/gtest.h>
#include <sstream>

using namespace halfway;
using namespace halfway::diff;
using diff::test::InterpDevice;

namespace {

constexpr size_t kN = 4096;
const char* const kReason = "bounded by \"§4\"\nsee the spec";

struct Fixture {
  policy::Registry registry;
  inputs::KernelInputs in =
      inputs::make_inputs(examples::narrow_f16().kernel(), kN, inputs::Kind::Ties, 9);
  Report report;

  explicit Fixture(bool opt_in) {
    if (opt_in) {
      EXPECT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"), kReason));
    }
    InterpDevice shifted("shifted", interp::NarrowingModel::SingleRounding, registry, {},
                         test::shift_one_ulp(5));
    Options o;
    o.registry = &registry;
    o.max_shown = 3;
    report = run(examples::narrow_f16(), shifted, in.grid, in.args, o);
  }
};

// Values are read as the strings property_tree stores (its typed getters trip GCC's
// maybe-uninitialized warning in sanitizer builds).
std::string text(const boost::property_tree::ptree& t, const std::string& path) {
  return t.get<std::string>(path);
}
uint64_t number(const boost::property_tree::ptree& t, const std::string& path) {
  return std::stoull(text(t, path));
}

boost::property_tree::ptree parse(const std::string& json) {
  std::istringstream s(json);
  boost::property_tree::ptree tree;
  boost::property_tree::read_json(s, tree);
  return tree;
}

TEST(Report, CountsAndFirstViolations) {
  Fixture f(true);
  const Report& r = f.report;
  ASSERT_EQ(r.buffers.size(), 1u);
  const BufferReport& b = r.buffers[0];
  EXPECT_EQ(b.exact + b.within_bound + b.violations + b.unchecked, kN);
  EXPECT_GT(b.violations, 0u);
  EXPECT_EQ(r.violations(), b.violations);
  ASSERT_EQ(b.first_violations.size(), 3u);
  uint64_t largest = 0;
  for (size_t i = 0; i < b.first_violations.size(); ++i) {
    const Violation& v = b.first_violations[i];
    if (i) {
      EXPECT_LT(b.first_violations[i - 1].index, v.index);
    }
    ASSERT_EQ(v.inputs.size(), 3u) << "a, b and c; out16 is write-only";
    EXPECT_EQ(v.inputs[0].name, "a");
    EXPECT_EQ(v.inputs[0].bits, f.in.args[0].buffer->get_bits(v.index));
    EXPECT_EQ(v.inputs[2].bits, f.in.args[2].buffer->get_bits(v.index));
    EXPECT_NE(v.reference, v.device);
    EXPECT_GE(v.ulps, 1u);
    largest = std::max(largest, v.ulps);
  }
  EXPECT_GE(b.max_ulps, largest);
}

TEST(Report, Text) {
  Fixture f(true);
  const std::string text = to_text(f.report);
  for (const char* want :
       {"kernel narrow_f16: interp (two-step) against shifted",
        "budget: single rounding: held (bounded by", "relaxed accumulation: not held",
        "float controls: denormals preserved", "out16 (f16[4096]): ", " within bound, ",
        "first 3 of ", "inputs shown at the same index", "a = ", "reference ",
        "allowed: single rounding (multiply-add): [", "result: FAILED ("})
    EXPECT_NE(text.find(want), std::string::npos) << "missing '" << want << "' in\n" << text;
  Fixture strict(false);
  EXPECT_NE(to_text(strict.report).find("allowed: bit-exact"), std::string::npos);
  EXPECT_NE(to_text(strict.report).find("no opt-in"), std::string::npos);
}

TEST(Report, JsonParsesWithTheDocumentedKeys) {
  Fixture f(true);
  const std::string json = to_json(f.report);
  boost::property_tree::ptree t;
  ASSERT_NO_THROW(t = parse(json)) << json;
  EXPECT_EQ(t.get<std::string>("kernel"), "narrow_f16");
  EXPECT_EQ(t.get<std::string>("device"), "shifted");
  EXPECT_EQ(t.get<std::string>("reference"), "interp (two-step)");
  EXPECT_EQ(text(t, "ok"), "false");
  EXPECT_EQ(number(t, "violations"), f.report.violations());
  EXPECT_EQ(text(t, "budget.single_rounding.held"), "true");
  EXPECT_EQ(t.get<std::string>("budget.single_rounding.reason"), kReason) << "escaping round-trips";
  EXPECT_EQ(text(t, "budget.relaxed_accumulation.held"), "false");
  EXPECT_EQ(text(t, "float_controls.flush_f16"), "false");
  EXPECT_EQ(text(t, "float_controls.preserve_signed_zero_inf_nan"), "true");
  const auto& buffers = t.get_child("buffers");
  ASSERT_EQ(buffers.size(), 1u);
  const auto& b = buffers.front().second;
  EXPECT_EQ(b.get<std::string>("name"), "out16");
  EXPECT_EQ(number(b, "param"), 3u);
  EXPECT_EQ(b.get<std::string>("type"), "f16");
  EXPECT_EQ(number(b, "size"), kN);
  for (const char* key : {"exact", "within_bound", "violations", "unchecked", "max_ulps"})
    EXPECT_NO_THROW(number(b, key)) << key;
  // The edge triples include an f32 overflow whose exact value is -inf: the model returns -inf
  // where the reference has a NaN, within the bound.
  EXPECT_EQ(number(b, "nan_mismatches"), f.report.buffers[0].nan_mismatches);
  EXPECT_GE(f.report.buffers[0].nan_mismatches, 1u);
  const auto& first = b.get_child("first_violations");
  ASSERT_EQ(first.size(), 3u);
  const auto& v = first.front().second;
  EXPECT_EQ(number(v, "index"), f.report.buffers[0].first_violations[0].index);
  EXPECT_EQ(v.get_child("inputs").front().second.get<std::string>("name"), "a");
  EXPECT_EQ(v.get_child("inputs").front().second.get<std::string>("type"), "f32");
  EXPECT_EQ(v.get<std::string>("reference.bits").size(), 6u); // "0x3c00"
  EXPECT_TRUE(v.get_optional<std::string>("device.value"));
  EXPECT_EQ(v.get<std::string>("bound.kind"), "single rounding");
  EXPECT_EQ(v.get<std::string>("bound.shape"), "multiply-add");
  EXPECT_TRUE(v.get_optional<std::string>("bound.lo.bits"));
  EXPECT_TRUE(t.get_child_optional("notes"));
}

TEST(Report, JsonNullForNanAgainstANumber) {
  Report r;
  r.kernel = "k";
  r.device = "d";
  BufferReport b;
  b.name = "out";
  b.type = ir::ScalarType::F16;
  b.size = 1;
  b.violations = 1;
  b.nan_mismatches = 1;
  b.first_violations.push_back({0, {}, 0x3c00, 0x7e00, UINT64_MAX, Bound{}});
  r.buffers.push_back(b);
  const std::string json = to_json(r);
  EXPECT_NE(json.find("\"ulps\": null"), std::string::npos) << json;
  EXPECT_NO_THROW(parse(json));
  EXPECT_NE(to_text(r).find("NaN against a number"), std::string::npos);
}

} // namespace
