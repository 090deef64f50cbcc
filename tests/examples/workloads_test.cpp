// Each workload (examples::workloads()) on the interpreter device, the CPU device and the Vulkan
// device, compared with the reference interpreter on the inputs of workload_inputs.hpp. Strict
// kernels whose ops are all correctly rounded must match bit for bit on every device. Kernels with
// exp, rsqrt or div cannot on Vulkan: lavapipe's are not correctly rounded (the op table's device
// precision allows it), so there the checker judges each element that differs by the interval the
// interpreter's interval shadow propagates from the documented precision
// (specs/device-precision.md) and every element must be exact or within its interval, none
// undecided. Host oracles check what the kernels compute: bit for bit where the summation order can
// be replayed in C++, else within a relative error of a double-precision reference.
#include "examples.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/ir/ops.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/device.hpp"
#include "workload_inputs.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>

namespace halfway {
namespace {

using examples::Scale;
using examples::WorkloadInputs;

const std::vector<Kernel>& workloads() {
  static const std::vector<Kernel> all = examples::workloads();
  return all;
}

const Kernel& workload(const std::string& name) {
  for (const auto& k : workloads())
    if (k.name() == name)
      return k;
  throw std::runtime_error("no workload " + name);
}

// The ops whose Vulkan result may differ from the correctly rounded one (op table: a device
// error bound, or a precision inherited from other instructions).
std::vector<std::string> inexact_on_vulkan(const ir::Kernel& k) {
  std::set<std::string> ops;
  for (const auto& e : k.exprs) {
    const ir::OpInfo& o = ir::info(e.op);
    bool exact = o.device_precision.starts_with("exact") ||
                 o.device_precision.starts_with("correctly rounded");
    if (!exact && ir::is_float(e.type))
      ops.insert(std::string(o.name));
  }
  return {ops.begin(), ops.end()};
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

class WorkloadTest : public ::testing::TestWithParam<size_t> {
protected:
  const Kernel& kernel() const { return workloads()[GetParam()]; }

  // Every element exact: the strict default holds no opt-in, so nothing else is allowed.
  void expect_bit_exact(const std::string& device_name) {
    std::unique_ptr<rt::Device> device;
    try {
      device = rt::make_device(device_name, &registry);
    } catch (const Error& e) {
      GTEST_SKIP() << device_name << " is not available here: " << e.what();
    }
    const Kernel& k = kernel();
    WorkloadInputs in = examples::workload_inputs(k.kernel(), Scale::Test, 3);
    std::vector<rt::Arg> args = in.args(k.kernel());
    diff::Options o;
    o.registry = &registry;
    diff::Report report = diff::run(k, *device, in.grid, args, o);
    EXPECT_TRUE(report.ok()) << diff::to_text(report);
    ASSERT_FALSE(report.buffers.empty());
    for (const auto& b : report.buffers) {
      EXPECT_EQ(b.exact, b.size) << k.name() << " on " << device_name << ", " << b.name;
      EXPECT_EQ(b.reference_nan, 0u) << "realistic inputs give numbers: " << b.name;
      EXPECT_LT(b.unchanged, b.size / 4) << "most outputs are written: " << b.name;
    }
  }

  policy::Registry registry; // no opt-ins
};

TEST_P(WorkloadTest, InterpDeviceMatchesTheReference) {
  expect_bit_exact("interp");
}

TEST_P(WorkloadTest, CpuIsBitExact) {
  expect_bit_exact("cpu");
}

// Kernels whose ops Vulkan rounds correctly: bit for bit. The others: by the documented precision,
// the same comparison `halfway diff` makes (the device's math profile turns it on), and it must
// prove something: no violation, nothing undecided (elements or lanes), every output written, and
// the intervals used for the elements lavapipe computes differently.
TEST_P(WorkloadTest, VulkanMatchesWithinItsDocumentedPrecision) {
  const Kernel& k = kernel();
  if (inexact_on_vulkan(k.kernel()).empty())
    return expect_bit_exact("vulkan");
  std::unique_ptr<rt::Device> device;
  try {
    device = rt::make_device("vulkan", &registry);
  } catch (const Error& e) {
    GTEST_SKIP() << "vulkan is not available here: " << e.what();
  }
  WorkloadInputs in = examples::workload_inputs(k.kernel(), Scale::Test, 3);
  std::vector<rt::Arg> args = in.args(k.kernel());
  diff::Options o;
  o.registry = &registry;
  diff::Report report = diff::run(k, *device, in.grid, args, o);
  EXPECT_TRUE(report.ok()) << diff::to_text(report);
  EXPECT_TRUE(report.intervals) << "the documented-precision comparison was not used";
  EXPECT_EQ(report.math_precision, "vulkan");
  EXPECT_EQ(report.undecided_lanes, 0u);
  EXPECT_TRUE(report.inconclusive.empty());
  ASSERT_EQ(report.buffers.size(), 1u);
  const diff::BufferReport& b = report.buffers[0];
  EXPECT_EQ(b.violations, 0u);
  EXPECT_EQ(b.undecided, 0u);
  EXPECT_EQ(b.unchecked, 0u);
  EXPECT_EQ(b.exact + b.within_interval, b.size) << diff::to_text(report);
  EXPECT_GT(b.exact, 0u);
  // Lavapipe's exp, rsqrt and div differ from the correctly rounded results on some elements of
  // each of the three (measured: 1108, 3744 and 1 elements), so the intervals decided something;
  // another driver may happen to round them correctly on these inputs.
  if (device->name().find("llvmpipe") != std::string::npos) {
    EXPECT_GT(b.within_interval, 0u) << "nothing was judged by an interval";
  }
  EXPECT_EQ(b.reference_nan, 0u) << "realistic inputs give numbers";
  EXPECT_LT(b.unchanged, b.size / 4) << "most outputs are written";
  if (b.max_interval_ratio) { // set when some element differs
    EXPECT_LE(*b.max_interval_ratio, 1.0);
  }
  std::printf("%s on vulkan: %llu of %llu exact, %llu within interval (largest %.3g of the "
              "interval), %llu max ulps\n",
              k.name().c_str(), (unsigned long long)b.exact, (unsigned long long)b.size,
              (unsigned long long)b.within_interval, b.max_interval_ratio.value_or(0.0),
              (unsigned long long)b.max_ulps);
}

INSTANTIATE_TEST_SUITE_P(Examples, WorkloadTest, ::testing::Range<size_t>(0, workloads().size()),
                         [](const auto& info) {
                           std::string n = workloads()[info.param].name();
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           return n;
                         });

// Which workloads Vulkan is allowed to compute differently (judged by intervals rather than bit for
// bit): exactly those with exp, rsqrt or div.
TEST(Workloads, OnlyTheKernelsWithInexactMathAreJudgedByIntervalsOnVulkan) {
  std::set<std::string> inexact;
  for (const auto& k : workloads())
    if (!inexact_on_vulkan(k.kernel()).empty())
      inexact.insert(k.name());
  EXPECT_EQ(inexact, (std::set<std::string>{"attention", "group_norm_silu", "softmax_f16out"}));
  EXPECT_EQ(joined(inexact_on_vulkan(workload("group_norm_silu").kernel())), "div, exp, rsqrt");
}

// softmax_f16out shows the policy at work: its f16 store is a barriered narrowing site; the
// kernel-scoped single-rounding opt-in is accepted with a reason, only for that kernel, and the
// checker then judges each stored element by the rounding models (exact_models: each must equal
// one of them bit for bit).
TEST(Workloads, SoftmaxSingleRoundingOptInIsCheckedByTheModels) {
  const Kernel& k = workload("softmax_f16out");
  ASSERT_EQ(ir::narrowing_sites(k.kernel()).size(), 1u);
  EXPECT_EQ(ir::narrowing_sites(k.kernel())[0].decision, ir::Decision::Barrier);
  policy::Registry registry;
  EXPECT_FALSE(registry.accept_single_rounding(policy::Scope::kernel("softmax_f16out"), " ").ok())
      << "a blank reason is refused";
  ASSERT_TRUE(registry
                  .accept_single_rounding(policy::Scope::kernel("softmax_f16out"),
                                          "probabilities for display")
                  .ok());
  EXPECT_EQ(registry.single_rounding_reason("softmax_f16out"), "probabilities for display");
  EXPECT_EQ(registry.single_rounding_reason("gemv_f32"), std::nullopt);
  for (const char* name : {"interp", "cpu"}) {
    SCOPED_TRACE(name);
    auto device = rt::make_device(name, &registry);
    WorkloadInputs in = examples::workload_inputs(k.kernel(), Scale::Test, 9);
    std::vector<rt::Arg> args = in.args(k.kernel());
    diff::Options o;
    o.registry = &registry;
    o.exact_models = true;
    diff::Report report = diff::run(k, *device, in.grid, args, o);
    EXPECT_TRUE(report.ok()) << diff::to_text(report);
    EXPECT_EQ(report.budget.single_rounding, "probabilities for display");
    ASSERT_EQ(report.buffers.size(), 1u);
    const diff::BufferReport& y = report.buffers[0];
    // Every output element was stored by the site, and every one equals a model.
    EXPECT_EQ(y.models.elements, y.size);
    uint64_t explained = 0;
    for (uint64_t n : y.models.first)
      explained += n;
    EXPECT_EQ(explained, y.size);
    EXPECT_EQ(y.models.unexplained, 0u);
  }
}

// ---- host oracles ---------------------------------------------------------------------------
// Each runs the workload on the CPU device (bit-exact with the interpreter, above) and checks the
// values against plain C++ (built with -ffp-contract=off, so a*b + c rounds twice here too).

std::vector<float> floats(const rt::HostBuffer& b) {
  std::vector<float> v(b.size());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::bit_cast<float>(static_cast<uint32_t>(b.get_bits(i)));
  return v;
}

WorkloadInputs run_on_cpu(const Kernel& k, policy::Registry& registry) {
  WorkloadInputs in = examples::workload_inputs(k.kernel(), Scale::Test, 5);
  auto cpu = rt::make_device("cpu", &registry);
  std::vector<rt::Arg> args = in.args(k.kernel());
  cpu->launch(k, in.grid, args);
  return in;
}

uint32_t scalar(const WorkloadInputs& in, const char* name) {
  return static_cast<uint32_t>(in.scalars.at(name));
}

TEST(WorkloadOracle, MatmulTiledSumsInKOrder) {
  policy::Registry registry;
  WorkloadInputs in = run_on_cpu(workload("matmul_tiled"), registry);
  const uint32_t m = scalar(in, "m"), n = scalar(in, "n"), kk = scalar(in, "k");
  auto a = floats(in.buffers.at("a")), b = floats(in.buffers.at("b")),
       c = floats(in.buffers.at("c"));
  size_t wrong = 0;
  for (uint32_t r = 0; r < m; ++r)
    for (uint32_t col = 0; col < n; ++col) {
      float acc = 0;
      for (uint32_t j = 0; j < (kk + 15) / 16 * 16; ++j)
        acc = acc + (j < kk ? a[r * kk + j] * b[j * n + col] : 0.0f * 0.0f);
      wrong += std::bit_cast<uint32_t>(acc) != std::bit_cast<uint32_t>(c[r * n + col]);
    }
  EXPECT_EQ(wrong, 0u);
}

// The split-k order: lane l takes the positions j = l, l + 64, ... of a quarter row (q = cols / 4
// columns) and adds the products of columns j, j + q, j + 2q, j + 3q in turn; then the tree.
float gemv_row(const std::vector<float>& w, const std::vector<float>& x, size_t row, size_t cols) {
  const size_t q = cols / 4;
  float partial[64];
  for (size_t l = 0; l < 64; ++l) {
    float acc = 0;
    for (size_t j = l; j < q; j += 64)
      for (size_t e = 0; e < 4; ++e)
        acc = acc + w[row * cols + e * q + j] * x[e * q + j];
    partial[l] = acc;
  }
  for (size_t stride = 32; stride > 0; stride /= 2)
    for (size_t l = 0; l < stride; ++l)
      partial[l] = partial[l] + partial[l + stride];
  return partial[0];
}

// Weights of any format as f32 values, row-major. An fp8 row of `cols` columns is q = cols / 4
// words, word j holding columns j, j + q, j + 2q, j + 3q in its bytes 0 to 3.
std::vector<float> weights(const rt::HostBuffer& w, const std::string& kernel_name, size_t cols) {
  const bool packed = kernel_name != "gemv_f32" && kernel_name != "gemv_f16";
  std::vector<float> out(packed ? w.size() * 4 : w.size());
  const size_t q = cols / 4;
  for (size_t i = 0; i < w.size(); ++i) {
    uint64_t bits = w.get_bits(i);
    if (kernel_name == "gemv_f32")
      out[i] = std::bit_cast<float>(static_cast<uint32_t>(bits));
    else if (kernel_name == "gemv_f16")
      out[i] = std::bit_cast<float>(num::f16_to_f32(static_cast<uint16_t>(bits)));
    else
      for (size_t e = 0; e < 4; ++e) {
        auto code = static_cast<uint8_t>(bits >> (8 * e));
        const size_t row = i / q, j = i % q;
        out[row * cols + e * q + j] = std::bit_cast<float>(
            kernel_name == "gemv_fp8<e4m3>" ? num::e4m3_to_f32(code) : num::e5m2_to_f32(code));
      }
  }
  return out;
}

TEST(WorkloadOracle, EveryGemvSumsInItsSplitKOrder) {
  for (const char* name : {"gemv_f32", "gemv_f16", "gemv_fp8<e4m3>", "gemv_fp8<e5m2>"}) {
    SCOPED_TRACE(name);
    policy::Registry registry;
    WorkloadInputs in = run_on_cpu(workload(name), registry);
    const uint32_t cols = scalar(in, "cols");
    auto w = weights(in.buffers.at("w"), name, cols);
    auto x = floats(in.buffers.at("x")), y = floats(in.buffers.at("y"));
    ASSERT_EQ(w.size(), y.size() * cols);
    size_t wrong = 0;
    for (size_t r = 0; r < y.size(); ++r)
      wrong += std::bit_cast<uint32_t>(gemv_row(w, x, r, cols)) != std::bit_cast<uint32_t>(y[r]);
    EXPECT_EQ(wrong, 0u);
    // The order matters on these inputs: a plain left-to-right sum differs on many rows.
    size_t differs = 0;
    for (size_t r = 0; r < y.size(); ++r) {
      float acc = 0;
      for (size_t c = 0; c < cols; ++c)
        acc = acc + w[r * cols + c] * x[c];
      differs += acc != y[r];
    }
    EXPECT_GT(differs, y.size() / 4);
  }
}

TEST(WorkloadOracle, ConvSumsBiasThenChannelsAndTaps) {
  policy::Registry registry;
  WorkloadInputs in = run_on_cpu(workload("conv3x3"), registry);
  const uint32_t cin = scalar(in, "cin"), cout = scalar(in, "cout"), h = scalar(in, "height"),
                 wd = scalar(in, "width");
  auto x = floats(in.buffers.at("x")), w = floats(in.buffers.at("w")),
       bias = floats(in.buffers.at("bias")), y = floats(in.buffers.at("y"));
  size_t wrong = 0;
  for (uint32_t o = 0; o < cout; ++o)
    for (uint32_t r = 0; r < h; ++r)
      for (uint32_t c = 0; c < wd; ++c) {
        float acc = bias[o];
        for (uint32_t ci = 0; ci < cin; ++ci)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              int ir = static_cast<int>(r) + ky - 1, ic = static_cast<int>(c) + kx - 1;
              bool inside =
                  ir >= 0 && ir < static_cast<int>(h) && ic >= 0 && ic < static_cast<int>(wd);
              float v = inside ? x[(ci * h + ir) * wd + ic] : 0.0f;
              acc = acc + w[((o * cin + ci) * 3 + ky) * 3 + kx] * v;
            }
        wrong += std::bit_cast<uint32_t>(acc) != std::bit_cast<uint32_t>(y[(o * h + r) * wd + c]);
      }
  EXPECT_EQ(wrong, 0u);
}

TEST(WorkloadOracle, ActInF32AndInF16) {
  policy::Registry registry;
  WorkloadInputs f = run_on_cpu(workload("act<f32>"), registry);
  auto w = floats(f.buffers.at("w")), o = floats(f.buffers.at("o"));
  size_t wrong = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    float want = std::fabs(w[i] * w[i] - 1.0f) + std::min(std::max(w[i], 0.0f), 1.0f);
    wrong += std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(o[i]);
  }
  EXPECT_EQ(wrong, 0u);

  // f16: each operation rounds to f16. An f16 product or difference is exact in f32, so rounding
  // the f32 result to f16 is the f16 operation.
  WorkloadInputs h = run_on_cpu(workload("act<f16>"), registry);
  const auto& hw = h.buffers.at("w");
  const auto& ho = h.buffers.at("o");
  auto r16 = [](float v) {
    return std::bit_cast<float>(num::f16_to_f32(num::f32_to_f16(std::bit_cast<uint32_t>(v))));
  };
  wrong = 0;
  size_t rounded = 0;
  for (size_t i = 0; i < hw.size(); ++i) {
    float v = std::bit_cast<float>(num::f16_to_f32(static_cast<uint16_t>(hw.get_bits(i))));
    float sq = r16(v * v);
    rounded += sq != v * v;
    float want = r16(std::fabs(r16(sq - 1.0f)) + std::min(std::max(v, 0.0f), 1.0f));
    wrong += num::f32_to_f16(std::bit_cast<uint32_t>(want)) != ho.get_bits(i);
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_GT(rounded, hw.size() / 2); // f16 arithmetic, not f32 narrowed once at the end
}

double rel_error(double got, double want) {
  return std::fabs(got - want) / std::max(std::fabs(want), 1e-30);
}

TEST(WorkloadOracle, GroupNormSiluIsCloseToDoublePrecision) {
  policy::Registry registry;
  WorkloadInputs in = run_on_cpu(workload("group_norm_silu"), registry);
  const uint32_t channels = scalar(in, "channels"), groups = scalar(in, "groups"),
                 hw = scalar(in, "hw");
  const float eps = std::bit_cast<float>(static_cast<uint32_t>(in.scalars.at("eps")));
  auto x = floats(in.buffers.at("x")), gamma = floats(in.buffers.at("gamma")),
       beta = floats(in.buffers.at("beta")), y = floats(in.buffers.at("y"));
  const size_t count = size_t{channels / groups} * hw;
  double worst = 0;
  for (size_t g = 0; g < x.size() / count; ++g) {
    double sum = 0, sq = 0;
    for (size_t i = 0; i < count; ++i)
      sum += x[g * count + i];
    double mean = sum / count;
    for (size_t i = 0; i < count; ++i)
      sq += (x[g * count + i] - mean) * (x[g * count + i] - mean);
    double inv = 1 / std::sqrt(sq / count + eps);
    for (size_t i = 0; i < count; ++i) {
      size_t c = (g % groups) * (channels / groups) + i / hw;
      double v = (x[g * count + i] - mean) * inv * gamma[c] + beta[c];
      double want = v / (1 + std::exp(-v));
      if (std::fabs(want) > 1e-3)
        worst = std::max(worst, rel_error(y[g * count + i], want));
    }
  }
  EXPECT_LT(worst, 1e-4);
}

TEST(WorkloadOracle, AttentionIsCloseToDoublePrecision) {
  policy::Registry registry;
  WorkloadInputs in = run_on_cpu(workload("attention"), registry);
  const uint32_t seq = scalar(in, "seq");
  const double scale = std::bit_cast<float>(static_cast<uint32_t>(in.scalars.at("scale")));
  auto q = floats(in.buffers.at("q")), k = floats(in.buffers.at("k")),
       v = floats(in.buffers.at("v")), o = floats(in.buffers.at("o"));
  const size_t lanes = o.size() / 64;
  double worst = 0;
  for (size_t lane = 0; lane < lanes; ++lane) {
    size_t head = lane / seq;
    std::vector<double> s(seq);
    double mx = -INFINITY, total = 0;
    for (uint32_t j = 0; j < seq; ++j) {
      double dot = 0;
      for (size_t d = 0; d < 64; ++d)
        dot += double(q[lane * 64 + d]) * k[(head * seq + j) * 64 + d];
      s[j] = dot * scale;
      mx = std::max(mx, s[j]);
    }
    for (double& e : s)
      total += e = std::exp(e - mx);
    for (size_t d = 0; d < 64; ++d) {
      double want = 0, magnitude = 0;
      for (uint32_t j = 0; j < seq; ++j) {
        want += s[j] / total * v[(head * seq + j) * 64 + d];
        magnitude += s[j] / total * std::fabs(v[(head * seq + j) * 64 + d]);
      }
      // Relative to the terms' magnitude: the weighted sum of signed values may cancel.
      worst = std::max(worst, std::fabs(o[lane * 64 + d] - want) / magnitude);
    }
  }
  EXPECT_LT(worst, 1e-5);
}

TEST(WorkloadOracle, SoftmaxRowsSumToOneInF16) {
  policy::Registry registry;
  WorkloadInputs in = run_on_cpu(workload("softmax_f16out"), registry);
  const uint32_t cols = scalar(in, "cols");
  auto x = floats(in.buffers.at("x"));
  const auto& y = in.buffers.at("y");
  double worst = 0;
  for (size_t r = 0; r < y.size() / cols; ++r) {
    double mx = -INFINITY, total = 0;
    for (uint32_t c = 0; c < cols; ++c)
      mx = std::max<double>(mx, x[r * cols + c]);
    for (uint32_t c = 0; c < cols; ++c)
      total += std::exp(x[r * cols + c] - mx);
    for (uint32_t c = 0; c < cols; ++c) {
      double want = std::exp(x[r * cols + c] - mx) / total;
      double got =
          std::bit_cast<float>(num::f16_to_f32(static_cast<uint16_t>(y.get_bits(r * cols + c))));
      if (want > 0x1p-14) // normal f16 range: relative error 2^-11 plus f32 slack
        worst = std::max(worst, rel_error(got, want));
    }
  }
  EXPECT_LT(worst, 0x1p-10);
}

} // namespace
} // namespace halfway
