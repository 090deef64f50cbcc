// The ulp histogram: its buckets, its text bars, its JSON buckets, and the per-element verdicts a
// run hands back on request.
#include "examples.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "model_device.hpp"

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <gtest/gtest.h>
#include <limits>
#include <sstream>

using namespace halfway;
using namespace halfway::diff;

namespace {

constexpr uint64_t kNan = std::numeric_limits<uint64_t>::max();

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);)
    out.push_back(line);
  return out;
}

TEST(Histogram, BucketsDoubleFromTwoOn) {
  EXPECT_EQ(UlpHistogram::bucket(0), 0u);
  EXPECT_EQ(UlpHistogram::bucket(1), 1u);
  EXPECT_EQ(UlpHistogram::bucket(2), 2u);
  EXPECT_EQ(UlpHistogram::bucket(3), 3u);
  EXPECT_EQ(UlpHistogram::bucket(4), 3u);
  EXPECT_EQ(UlpHistogram::bucket(5), 4u);
  EXPECT_EQ(UlpHistogram::bucket(8), 4u);
  EXPECT_EQ(UlpHistogram::bucket(9), 5u);
  EXPECT_EQ(UlpHistogram::bucket(65536), 17u);
  EXPECT_EQ(UlpHistogram::bucket(65537), 18u);
  EXPECT_EQ(UlpHistogram::bucket(kNan - 1), UlpHistogram::kBuckets - 1);
  // The buckets tile 0 .. 2^64-2 without gap or overlap.
  for (size_t k = 0; k < UlpHistogram::kBuckets; ++k) {
    EXPECT_EQ(UlpHistogram::bucket(UlpHistogram::lo(k)), k) << k;
    EXPECT_EQ(UlpHistogram::bucket(UlpHistogram::hi(k)), k) << k;
    EXPECT_LE(UlpHistogram::lo(k), UlpHistogram::hi(k)) << k;
    if (k + 1 < UlpHistogram::kBuckets) {
      EXPECT_EQ(UlpHistogram::lo(k + 1), UlpHistogram::hi(k) + 1) << k;
    }
    EXPECT_LE(UlpHistogram::label(k).size(), 11u) << UlpHistogram::label(k);
  }
  EXPECT_EQ(UlpHistogram::hi(UlpHistogram::kBuckets - 1), kNan - 1);
  EXPECT_EQ(UlpHistogram::label(0), "0");
  EXPECT_EQ(UlpHistogram::label(2), "2");
  EXPECT_EQ(UlpHistogram::label(3), "3-4");
  EXPECT_EQ(UlpHistogram::label(17), "32769-65536");
  EXPECT_EQ(UlpHistogram::label(18), "2^16+1-2^17");
  EXPECT_EQ(UlpHistogram::label(65), "2^63+1-2^64");
}

TEST(Histogram, CountsNanMismatchesApart) {
  UlpHistogram h;
  EXPECT_EQ(h.used(), 1u);
  for (uint64_t u : {0, 0, 0, 5, 7})
    h.add(u);
  h.add(kNan);
  EXPECT_EQ(h.counts[0], 3u);
  EXPECT_EQ(h.counts[4], 2u);
  EXPECT_EQ(h.nan_mismatch, 1u);
  EXPECT_EQ(h.used(), 5u);
  EXPECT_EQ(h.total(), 6u);
}

TEST(Histogram, TextBarsFit80Columns) {
  UlpHistogram h;
  h.counts[0] = 1000;
  h.counts[1] = 500;
  h.counts[3] = 1;
  h.nan_mismatch = 2;
  const auto l = lines(histogram_text(h, "  "));
  // Buckets 0 to 3 (2 empty), then NaN.
  ASSERT_EQ(l.size(), 5u) << histogram_text(h, "  ");
  const size_t bar = 80 - 2 - 11 - 2 - 4; // indent, label, two spaces, count
  EXPECT_EQ(l[0], "            0 " + std::string(bar, '#') + " 1000");
  // Half the largest count: half the bar, rounded to nearest (61 columns: 30.5 gives 31).
  EXPECT_EQ(l[1], "            1 " + std::string((bar + 1) / 2, '#') +
                      std::string(bar - (bar + 1) / 2, ' ') + "  500");
  EXPECT_EQ(l[2], "            2 " + std::string(bar, ' ') + "    0");
  // A bucket far below the largest still shows.
  EXPECT_EQ(l[3], "          3-4 #" + std::string(bar - 1, ' ') + "    1");
  EXPECT_EQ(l[4], "          NaN #" + std::string(bar - 1, ' ') + "    2");
  for (const auto& line : l)
    EXPECT_EQ(line.size(), 80u) << line;

  // The widest counts and labels there are still fit.
  UlpHistogram wide;
  wide.counts[0] = kNan;
  wide.counts[UlpHistogram::kBuckets - 1] = kNan / 2;
  for (const auto& line : lines(histogram_text(wide, "  "))) {
    EXPECT_LE(line.size(), 80u) << line;
    EXPECT_NE(line.find_first_not_of(' '), std::string::npos);
  }
}

// narrow_f16 on a device that keeps its barriers but adds one ulp to every fifth element.
struct Shifted {
  policy::Registry registry;
  inputs::KernelInputs in =
      inputs::make_inputs(examples::narrow_f16().kernel(), 4096, inputs::Kind::Random, 3);
  std::vector<BufferResults> results;
  Report report;
  Shifted() {
    test::InterpDevice device("shifted", interp::NarrowingModel::TwoStep, registry, {},
                              test::shift_one_ulp(5));
    Options o;
    o.registry = &registry;
    o.results = &results;
    report = run(examples::narrow_f16(), device, in.grid, in.args, o);
  }
};

TEST(Histogram, RunCountsEveryElement) {
  Shifted s;
  ASSERT_EQ(s.report.buffers.size(), 1u);
  const BufferReport& b = s.report.buffers[0];
  const UlpHistogram& h = b.histogram;
  EXPECT_EQ(h.total(), b.size);
  EXPECT_EQ(h.counts[0], b.exact); // random finite inputs: no +0 against -0
  EXPECT_EQ(h.counts[1], b.violations);
  EXPECT_GT(h.counts[1], b.size / 6);
  EXPECT_EQ(h.used(), 2u);
  EXPECT_EQ(h.nan_mismatch, 0u);

  const std::string text = to_text(s.report);
  EXPECT_NE(text.find("  elements by distance from the reference (ulps of f16):\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n            1 "), std::string::npos) << text;

  std::istringstream json(to_json(s.report));
  boost::property_tree::ptree tree;
  boost::property_tree::read_json(json, tree);
  const auto& buffer = tree.get_child("buffers").front().second;
  std::vector<std::pair<std::string, uint64_t>> buckets;
  for (const auto& [key, bucket] : buffer.get_child("histogram.buckets")) {
    buckets.emplace_back(bucket.get<std::string>("label"),
                         std::stoull(bucket.get<std::string>("count")));
    EXPECT_EQ(bucket.get<std::string>("lo"), bucket.get<std::string>("hi"));
  }
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0], std::make_pair(std::string("0"), h.counts[0]));
  EXPECT_EQ(buckets[1], std::make_pair(std::string("1"), h.counts[1]));
  EXPECT_EQ(buffer.get<std::string>("histogram.nan_mismatch"), "0");
}

TEST(Histogram, ResultsHoldEveryElementsVerdict) {
  Shifted s;
  ASSERT_EQ(s.results.size(), 1u);
  const BufferResults& r = s.results[0];
  const BufferReport& b = s.report.buffers[0];
  EXPECT_EQ(r.name, "out16");
  EXPECT_EQ(r.param, b.param);
  ASSERT_EQ(r.reference.size(), b.size);
  ASSERT_EQ(r.device.size(), b.size);
  ASSERT_EQ(r.verdicts.size(), b.size);
  uint64_t exact = 0, violations = 0;
  for (size_t i = 0; i < b.size; ++i) {
    const uint64_t want = r.reference.get_bits(i), got = r.device.get_bits(i);
    const bool same = same_bits(ir::ScalarType::F16, want, got, s.report.controls);
    EXPECT_EQ(r.verdicts[i], same ? Verdict::Exact : Verdict::Violation) << i;
    exact += r.verdicts[i] == Verdict::Exact;
    violations += r.verdicts[i] == Verdict::Violation;
    if (!same) {
      EXPECT_EQ(distance(ir::ScalarType::F16, want, got, s.report.controls), 1u) << i;
    }
  }
  EXPECT_EQ(exact, b.exact);
  EXPECT_EQ(violations, b.violations);
  // The caller's buffers are untouched: the results are the run's own.
  EXPECT_EQ(s.in.buffers[3].get_bits(0), 0u);
}

TEST(Histogram, WithinBoundVerdictsUnderTheOptIn) {
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"), "test"));
  auto in = inputs::make_inputs(examples::narrow_f16().kernel(), 4096, inputs::Kind::Ties, 5);
  test::InterpDevice device = test::model_device(registry);
  std::vector<BufferResults> results;
  Options o;
  o.registry = &registry;
  o.results = &results;
  Report report = run(examples::narrow_f16(), device, in.grid, in.args, o);
  ASSERT_EQ(results.size(), 1u);
  const BufferReport& b = report.buffers[0];
  EXPECT_GT(b.within_bound, 0u);
  EXPECT_EQ(b.violations, 0u);
  uint64_t within = 0;
  for (Verdict v : results[0].verdicts)
    within += v == Verdict::WithinBound;
  EXPECT_EQ(within, b.within_bound);
  // Ties round one ulp apart; cancellation can move further: the largest distance sits in the
  // last bucket shown.
  EXPECT_EQ(b.histogram.total(), b.size);
  EXPECT_GT(b.histogram.counts[1], 0u);
  EXPECT_EQ(UlpHistogram::bucket(b.max_ulps), b.histogram.used() - 1);
}

} // namespace
