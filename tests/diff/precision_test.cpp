// Device precision (specs/device-precision.md): a device with the Vulkan math profile is judged by
// the interval its ops' documented precision propagates to. Fake devices built on the interpreter
// move exp's correctly rounded results by exactly the documented bound (passes) and by one step
// more (fails); undecided comparisons and branches are counted and never OK. On the attention
// example, whose exp results flow through a per-lane private accumulator, a fake device with exp
// off by its whole bound passes, one step more fails, and the interval ends of every output are
// tight to one step.
#include "attention.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/dsl.hpp"
#include "halfway/numerics/convert.hpp"
#include "model_device.hpp"
#include "workload_inputs.hpp"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>

using namespace halfway;
using namespace halfway::diff;
using ir::ScalarType;

namespace {

template <class T> Kernel exp_kernel() {
  return kernel("exp_" + type_name<T>(), {64}, {"x", "y"}, [](In<T> x, Out<T> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] { y[i] = exp(x[i]); });
  });
}

// The documented bound for exp at x, in representable steps of the result (the op table's
// figure: 3 + 2|x| ulps for f32, 1 + 2|x| for 16-bit floats; n ulps of the exact value allow
// floor(n + 1/2) steps from the correctly rounded one).
int64_t exp_steps(ScalarType t, double x) {
  const ir::DevicePrecision& d = ir::info(ir::Op::Exp).device;
  return static_cast<int64_t>(std::floor(d.ulp(ir::info(t).bits) + 2 * std::fabs(x) + 0.5));
}

// Moves every element of the written buffers by `extra` + the documented bound of its exp, up on
// even indices and down on odd ones (the results are positive normal numbers, so a step is +-1 on
// the bit pattern).
test::InterpDevice::Corrupt move_exp(int64_t extra) {
  return [extra](const ir::Kernel& k, std::span<const rt::Arg> args) {
    const rt::HostBuffer& x = *args[0].buffer;
    rt::HostBuffer& y = *args[1].buffer;
    const num::Format f = *float_format(k.params[1].type);
    for (size_t i = 0; i < y.size(); ++i) {
      const int64_t n = exp_steps(k.params[1].type, num::to_double(f, x.get_bits(i))) + extra;
      const uint64_t b = y.get_bits(i);
      y.set_bits(i, i % 2 ? b - static_cast<uint64_t>(n) : b + static_cast<uint64_t>(n));
    }
  };
}

// x in [-4, 4): exp(x) is a positive normal number in f32 and f16.
template <class T> Report run_exp(int64_t extra, bool corrupt = true) {
  policy::Registry registry;
  test::InterpDevice device("vulkan-like", interp::NarrowingModel::TwoStep, registry, {},
                            corrupt ? move_exp(extra) : nullptr);
  device.set_math(ir::MathProfile::Vulkan);
  const ir::VerifiedKernel k = exp_kernel<T>();
  const ScalarType t = k.kernel().params[0].type;
  rt::HostBuffer x(t, 1024), y(t, 1024);
  const num::Format f = *float_format(t);
  for (size_t i = 0; i < x.size(); ++i)
    x.set_bits(i, num::from_double(f, -4.0 + 8.0 * static_cast<double>(i) / 1024));
  std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y)};
  Options o;
  o.registry = &registry;
  return run(k, device, rt::Grid::for_lanes(k.kernel(), 1024), args, o);
}

} // namespace

TEST(DevicePrecision, ExpMovedByExactlyItsBoundPasses) {
  Report r = run_exp<float>(0);
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_TRUE(r.intervals);
  EXPECT_EQ(r.math_precision, "vulkan");
  const BufferReport& b = r.buffers.at(0);
  EXPECT_EQ(b.violations, 0u);
  EXPECT_EQ(b.undecided, 0u);
  EXPECT_EQ(b.within_interval, 1024u); // every element moved by at least 3 steps
  ASSERT_TRUE(b.max_interval_ratio.has_value());
  EXPECT_DOUBLE_EQ(*b.max_interval_ratio, 1.0); // each element sits on its interval's end
  EXPECT_NE(to_text(r).find("1024 within interval, 0 undecided"), std::string::npos);
  const std::string json = to_json(r);
  EXPECT_NE(json.find("\"within_interval\": 1024"), std::string::npos);
  EXPECT_NE(json.find("\"math_precision\": \"vulkan\""), std::string::npos);
}

TEST(DevicePrecision, ExpOneStepBeyondItsBoundFails) {
  Report r = run_exp<float>(1);
  EXPECT_FALSE(r.ok());
  const BufferReport& b = r.buffers.at(0);
  EXPECT_EQ(b.violations, 1024u);
  EXPECT_EQ(b.within_interval, 0u);
  ASSERT_FALSE(b.first_violations.empty());
  EXPECT_EQ(b.first_violations[0].bound.kind, Bound::Kind::DevicePrecision);
  EXPECT_NE(to_text(r).find("allowed: device precision: ["), std::string::npos);
}

// The interval of f32 exp on every kind of operand, against its definition: the correctly
// rounded result moved by the documented steps both ways (along the f32 patterns, saturating at
// the infinities), holding zero once it reaches the denormals (a Vulkan device may flush them);
// the NaN point for a NaN. The interpreter takes a bulk path for point operands that are numbers
// and not denormal, and the general one for the rest (denormal operands, which a device may
// flush to zero, and NaNs): both are checked.
TEST(DevicePrecision, ExpIntervalsOfEveryKindOfOperand) {
  std::vector<float> xs = {0.0f,
                           -0.0f,
                           1.0f,
                           -1.0f,
                           0.5f,
                           88.7f,
                           88.8f,
                           89.0f,
                           -87.0f,
                           -88.0f,
                           -100.0f,
                           -103.9f,
                           -104.0f,
                           -150.0f,
                           1e-30f,
                           -1e-30f,
                           INFINITY,
                           -INFINITY,
                           NAN,
                           -NAN,
                           std::bit_cast<float>(0x00000001u),
                           std::bit_cast<float>(0x807fffffu),
                           std::bit_cast<float>(0x7f800001u)};
  for (int i = 0; i < 2000; ++i) // across the range, both signs
    xs.push_back(-110.0f + 200.0f * static_cast<float>(i) / 2000);
  const ir::VerifiedKernel k = exp_kernel<float>();
  rt::HostBuffer x(ScalarType::F32, xs.size()), y(ScalarType::F32, xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    x.set_bits(i, std::bit_cast<uint32_t>(xs[i]));
  interp::Options o;
  o.intervals = true;
  o.profile = ir::MathProfile::Vulkan;
  const interp::Stats s = interp::run(k, rt::Grid::for_lanes(k.kernel(), xs.size()),
                                      std::vector{rt::Arg::of(x), rt::Arg::of(y)}, o);
  ASSERT_EQ(s.intervals.at(1).size(), xs.size());
  // The f32 pattern n steps from v along the ordered patterns (-inf .. -0 = +0 .. +inf).
  auto moved = [](float v, int64_t n) {
    const uint32_t b = std::bit_cast<uint32_t>(v);
    const int64_t ord = (b >> 31) ? -static_cast<int64_t>(b & 0x7fffffff) : b;
    const int64_t to = std::clamp<int64_t>(ord + n, -0x7f800000, 0x7f800000);
    return static_cast<double>(std::bit_cast<float>(
        to < 0 ? 0x80000000u | static_cast<uint32_t>(-to) : static_cast<uint32_t>(to)));
  };
  for (size_t i = 0; i < xs.size(); ++i) {
    const interp::ValueInterval& iv = s.intervals[1][i];
    ASSERT_FALSE(iv.undecided) << xs[i];
    if (std::isnan(xs[i])) {
      EXPECT_TRUE(std::isnan(iv.lo) && std::isnan(iv.hi)) << i;
      continue;
    }
    const float v = std::bit_cast<float>(static_cast<uint32_t>(y.get_bits(i)));
    // An infinite operand's bound is unbounded: 2^40 steps, which already span every f32.
    const int64_t n = std::isinf(xs[i]) ? int64_t{1} << 40 : exp_steps(ScalarType::F32, xs[i]);
    double lo = moved(v, -n), hi = moved(v, n);
    if (lo < 0x1p-126 && hi > -0x1p-126 && !(lo == 0 && hi == 0))
      lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    EXPECT_EQ(std::bit_cast<uint64_t>(iv.lo), std::bit_cast<uint64_t>(lo))
        << "exp(" << xs[i] << ") = " << v << ", " << n << " steps";
    EXPECT_EQ(std::bit_cast<uint64_t>(iv.hi), std::bit_cast<uint64_t>(hi))
        << "exp(" << xs[i] << ") = " << v << ", " << n << " steps";
  }
}

TEST(DevicePrecision, F16ExpUsesTheSixteenBitRow) {
  // 1 + 2|x| ulps: moved by exactly that, OK; one more, every element fails.
  Report ok = run_exp<f16>(0);
  EXPECT_TRUE(ok.ok()) << to_text(ok);
  EXPECT_EQ(ok.buffers.at(0).within_interval, 1024u);
  Report bad = run_exp<f16>(1);
  EXPECT_EQ(bad.buffers.at(0).violations, 1024u);
}

TEST(DevicePrecision, ACorrectlyRoundedDeviceStaysBitExact) {
  policy::Registry registry;
  test::InterpDevice device = test::strict_device(registry);
  const ir::VerifiedKernel k = exp_kernel<float>();
  rt::HostBuffer x(ScalarType::F32, 256), y(ScalarType::F32, 256);
  for (size_t i = 0; i < x.size(); ++i)
    x.set_bits(i, num::f32_bits(static_cast<float>(i) / 64.0f));
  std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y)};
  Options o;
  o.registry = &registry;
  Report r = run(k, device, rt::Grid::for_lanes(k.kernel(), 256), args, o);
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_FALSE(r.intervals);
  EXPECT_EQ(r.buffers.at(0).exact, 256u);
}

TEST(DevicePrecision, ABranchOnAnUndecidedComparisonIsInconclusive) {
  // exp(x) > 1 for x just above 0: exp(x) is within a few ulps of 1, so a conforming device may
  // take either branch. The lanes are undecided, the report says so and is not OK.
  const ir::VerifiedKernel k =
      kernel("exp_branch", {64}, {"x", "y"}, [](In<float> x, Out<float> y) {
        Var i(global_id(0), "i");
        If(i < y.size(), [&] {
          y[i] = x[i];
          If(exp(x[i]) > 1.0f, [&] { y[i] = 2.0f; });
        });
      });
  policy::Registry registry;
  test::InterpDevice device = test::strict_device(registry);
  device.set_math(ir::MathProfile::Vulkan);
  rt::HostBuffer x(ScalarType::F32, 128), y(ScalarType::F32, 128);
  for (size_t i = 0; i < x.size(); ++i) // x = 2^-30 on the first 64 lanes, 1 on the others
    x.set_bits(i, num::f32_bits(i < 64 ? 0x1p-30f : 1.0f));
  std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y)};
  Options o;
  o.registry = &registry;
  Report r = run(k, device, rt::Grid::for_lanes(k.kernel(), 128), args, o);
  EXPECT_EQ(r.violations(), 0u);
  EXPECT_EQ(r.undecided_lanes, 64u);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.inconclusive.size(), 1u);
  EXPECT_NE(r.inconclusive[0].reason.find("64 lanes took a branch"), std::string::npos);
  EXPECT_NE(to_text(r).find("undecided: 64 lanes"), std::string::npos);
  o.accept_inconclusive = true;
  EXPECT_TRUE(run(k, device, rt::Grid::for_lanes(k.kernel(), 128), args, o).ok());
}

TEST(DevicePrecision, ANaNComparedWithAnIntervalIsDecided) {
  // A NaN is unordered with every number: exp(z) > NaN is false wherever in its interval a
  // conforming device's exp(z) lies, so the branch is decided (campaign 20261205, kernel 28365,
  // compared lavapipe's -NaN atan2 with an exp2 interval; it was undecided, so never explained).
  const ir::VerifiedKernel k =
      kernel("nan_branch", {64}, {"x", "z", "y"}, [](In<float> x, In<float> z, Out<float> y) {
        Var i(global_id(0), "i");
        If(i < y.size(), [&] {
          y[i] = 1.0f;
          If(exp(z[i]) > x[i], [&] { y[i] = 2.0f; });
        });
      });
  policy::Registry registry;
  test::InterpDevice device = test::strict_device(registry);
  device.set_math(ir::MathProfile::Vulkan);
  rt::HostBuffer x(ScalarType::F32, 64), z(ScalarType::F32, 64), y(ScalarType::F32, 64);
  for (size_t i = 0; i < x.size(); ++i) { // a NaN on even lanes, 0.5 (exp(1.25) > 0.5) on odd
    x.set_bits(i, i % 2 ? num::f32_bits(0.5f) : 0xffc00000u);
    z.set_bits(i, num::f32_bits(1.25f));
  }
  std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(z), rt::Arg::of(y)};
  Options o;
  o.registry = &registry;
  Report r = run(k, device, rt::Grid::for_lanes(k.kernel(), 64), args, o);
  EXPECT_TRUE(r.intervals);
  EXPECT_EQ(r.undecided_lanes, 0u) << to_text(r);
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_EQ(r.buffers.at(0).exact, 64u);
}

TEST(DevicePrecision, SinOutsideMinusPiPiIsUndecided) {
  // The table gives sin a precision only inside [-pi, pi]: a device result outside the reference
  // there is undecided, never within an interval.
  const ir::VerifiedKernel k = kernel("sin_f32", {64}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] { y[i] = sin(x[i]); });
  });
  policy::Registry registry;
  auto nudge = [](const ir::Kernel&, std::span<const rt::Arg> args) {
    rt::HostBuffer& y = *args[1].buffer;
    for (size_t i = 0; i < y.size(); ++i)
      y.set_bits(i, y.get_bits(i) + 1);
  };
  test::InterpDevice device("vulkan-like", interp::NarrowingModel::TwoStep, registry, {}, nudge);
  device.set_math(ir::MathProfile::Vulkan);
  rt::HostBuffer x(ScalarType::F32, 64), y(ScalarType::F32, 64);
  for (size_t i = 0; i < x.size(); ++i) // 0.25 .. 8: the first 12 inside [-pi, pi]
    x.set_bits(i, num::f32_bits(0.25f + 0.125f * static_cast<float>(i)));
  std::vector<rt::Arg> args{rt::Arg::of(x), rt::Arg::of(y)};
  Options o;
  o.registry = &registry;
  Report r = run(k, device, rt::Grid::for_lanes(k.kernel(), 64), args, o);
  const BufferReport& b = r.buffers.at(0);
  EXPECT_EQ(b.within_interval, 24u); // 0.25 + 0.125*i <= pi for i <= 23
  EXPECT_EQ(b.undecided, 40u);
  EXPECT_EQ(b.violations, 0u);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.inconclusive.size(), 1u);
  EXPECT_NE(r.inconclusive[0].reason.find("40 elements differ and their intervals could not be "
                                          "decided"),
            std::string::npos);
}

namespace {

// exp(x) moved by floor(3 + 2|x| + 1/2) + `extra` steps of the result, up or down: exactly the
// documented f32 bound when `extra` is 0 (as exp_steps above; the count is computed in f64, where
// 2|x| + 3.5 is exact for an f32 x). In attention x <= 0 and the results are positive normal
// numbers for these inputs, so a step is +-1 on the bit pattern.
auto moved_exp(int extra, bool up) {
  return [extra, up](const Value<float>& x) {
    Value<float> e = exp(x);
    Value<uint32_t> n = convert<uint32_t>(floor(to_f64(abs(x)) * 2.0 + (3.5 + extra)));
    return bitcast<float>(up ? bitcast<uint32_t>(e) + n : bitcast<uint32_t>(e) - n);
  };
}

// A Vulkan-like device that runs another kernel in place of the one it is given (the example
// built with a moved exp) on the interpreter.
class SubstituteDevice : public rt::Device {
public:
  SubstituteDevice(Kernel substitute, const policy::Registry& registry,
                   test::InterpDevice::Corrupt corrupt = nullptr)
      : substitute_(std::move(substitute)),
        inner_("vulkan-like", interp::NarrowingModel::TwoStep, registry, {}, std::move(corrupt)) {
    inner_.set_math(ir::MathProfile::Vulkan);
  }
  const rt::DeviceInfo& info() const override { return inner_.info(); }
  rt::LaunchResult launch(const ir::VerifiedKernel&, const rt::Grid& grid,
                          std::span<const rt::Arg> args,
                          const rt::LaunchOptions& options = {}) override {
    return inner_.launch(substitute_, grid, args, options);
  }

private:
  Kernel substitute_;
  test::InterpDevice inner_;
};

Report run_attention(rt::Device& device, const policy::Registry& registry, size_t max_shown = 10) {
  const Kernel k = examples::attention();
  examples::WorkloadInputs in = examples::workload_inputs(k.kernel(), examples::Scale::Test, 3);
  std::vector<rt::Arg> args = in.args(k.kernel());
  Options o;
  o.registry = &registry;
  o.max_shown = max_shown;
  return run(k, device, in.grid, args, o);
}

} // namespace

TEST(DevicePrecision, AttentionWithExpOffByItsWholeBoundPasses) {
  for (bool up : {true, false}) {
    SCOPED_TRACE(up ? "up" : "down");
    policy::Registry registry;
    SubstituteDevice device(examples::attention_with(moved_exp(0, up)), registry);
    Report r = run_attention(device, registry);
    EXPECT_TRUE(r.ok()) << to_text(r);
    EXPECT_TRUE(r.intervals);
    EXPECT_EQ(r.undecided_lanes, 0u);
    const BufferReport& b = r.buffers.at(0);
    EXPECT_EQ(b.violations, 0u);
    EXPECT_EQ(b.undecided, 0u);
    EXPECT_EQ(b.unchanged, 0u); // every lane wrote its 64 outputs
    // Most outputs moved (every exp after the first key did), all inside their intervals.
    EXPECT_GT(b.within_interval, b.size / 2);
    EXPECT_EQ(b.exact + b.within_interval, b.size);
    // Some outputs come close to their interval's end (measured: 0.94 up, 0.89 down), so the
    // intervals are not loose enough to pass anything: see the next test.
    ASSERT_TRUE(b.max_interval_ratio.has_value());
    EXPECT_GT(*b.max_interval_ratio, 0.5);
    EXPECT_LE(*b.max_interval_ratio, 1.0);
  }
}

// One step more on every exp, and some outputs leave their intervals (measured: 229 of 4736 up,
// 26 down): the intervals carried through the accumulator are tight enough to catch it.
TEST(DevicePrecision, AttentionWithExpOneStepBeyondItsBoundFails) {
  for (bool up : {true, false}) {
    SCOPED_TRACE(up ? "up" : "down");
    policy::Registry registry;
    SubstituteDevice device(examples::attention_with(moved_exp(1, up)), registry);
    Report r = run_attention(device, registry);
    EXPECT_FALSE(r.ok());
    const BufferReport& b = r.buffers.at(0);
    EXPECT_GT(b.violations, 0u);
    EXPECT_EQ(b.undecided, 0u);
    ASSERT_FALSE(b.first_violations.empty());
    EXPECT_EQ(b.first_violations[0].bound.kind, Bound::Kind::DevicePrecision);
    ASSERT_TRUE(b.max_interval_ratio.has_value());
    EXPECT_GT(*b.max_interval_ratio, 1.0);
  }
}

// The interval of every output of attention, read from a run whose device is far off (each
// violation carries its element's interval), then a device that returns exactly an end of it
// (the lower on even elements, the upper on odd ones) passes, and one step beyond fails on every
// element: the intervals the private accumulator carries reach each output, and the comparison
// holds at their ends.
TEST(DevicePrecision, AttentionOutputsAtTheirIntervalEndsPassAndOneStepBeyondFails) {
  policy::Registry registry;
  const size_t n = 2 * 37 * 64; // the test inputs' heads * seq * 64 outputs
  auto far_off = [](const ir::Kernel&, std::span<const rt::Arg> args) {
    rt::HostBuffer& o = *args[3].buffer;
    for (size_t i = 0; i < o.size(); ++i)
      o.set_bits(i, num::f32_bits(1e30f));
  };
  test::InterpDevice off("vulkan-like", interp::NarrowingModel::TwoStep, registry, {}, far_off);
  off.set_math(ir::MathProfile::Vulkan);
  Report r = run_attention(off, registry, n);
  const BufferReport& b = r.buffers.at(0);
  ASSERT_EQ(b.size, n);
  ASSERT_EQ(b.violations, n) << to_text(r);
  std::vector<uint64_t> lo(n), hi(n);
  size_t wide = 0;
  for (const Violation& v : b.first_violations) {
    ASSERT_EQ(v.bound.kind, Bound::Kind::DevicePrecision);
    lo[v.index] = v.bound.lo;
    hi[v.index] = v.bound.hi;
    const float l = std::bit_cast<float>(static_cast<uint32_t>(v.bound.lo));
    const float h = std::bit_cast<float>(static_cast<uint32_t>(v.bound.hi));
    const float ref = std::bit_cast<float>(static_cast<uint32_t>(v.reference));
    ASSERT_TRUE(l <= ref && ref <= h) << v.index;
    wide += l < ref && ref < h;
  }
  ASSERT_EQ(b.first_violations.size(), n);
  EXPECT_GT(wide, n / 2) << "exp's error bound widens most outputs' intervals on both sides";

  for (int beyond : {0, 1}) {
    SCOPED_TRACE(beyond ? "one step beyond" : "at the ends");
    auto at_ends = [&lo, &hi, beyond](const ir::Kernel&, std::span<const rt::Arg> args) {
      rt::HostBuffer& o = *args[3].buffer;
      for (size_t i = 0; i < o.size(); ++i) {
        float end = std::bit_cast<float>(static_cast<uint32_t>(i % 2 ? hi[i] : lo[i]));
        if (beyond)
          end = std::nextafter(end, i % 2 ? INFINITY : -INFINITY);
        o.set_bits(i, num::f32_bits(end));
      }
    };
    test::InterpDevice device("vulkan-like", interp::NarrowingModel::TwoStep, registry, {},
                              at_ends);
    device.set_math(ir::MathProfile::Vulkan);
    Report e = run_attention(device, registry);
    const BufferReport& eb = e.buffers.at(0);
    EXPECT_EQ(eb.undecided, 0u);
    if (beyond) {
      EXPECT_EQ(eb.violations, n);
      EXPECT_FALSE(e.ok());
    } else {
      EXPECT_TRUE(e.ok()) << to_text(e);
      EXPECT_EQ(eb.exact + eb.within_interval, n);
      EXPECT_GT(eb.within_interval, n / 2);
      ASSERT_TRUE(eb.max_interval_ratio.has_value());
      EXPECT_DOUBLE_EQ(*eb.max_interval_ratio, 1.0);
    }
  }
}
