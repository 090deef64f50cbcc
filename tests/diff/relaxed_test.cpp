// The §5 bound of relaxed accumulation, end to end: hand-written GEMV devices that sum in another
// order (reversed, pairwise) pass within the bound when the kernel's budget holds relaxed
// accumulation and fail bit for bit without it; a device off by far more than the bound fails
// even with the opt-in; a narrowing store gets one ulp of the stored type more.
#include "gemv_fp8_rows.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/dsl.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/policy/registry.hpp"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>
#include <random>

using namespace halfway;
using namespace halfway::diff;
using ir::ScalarType;

namespace {

enum class Order { Forward, Reversed, Pairwise };

float pairwise(const float* p, size_t n) {
  if (n == 1)
    return p[0];
  const size_t h = n / 2;
  return pairwise(p, h) + pairwise(p + h, n - h);
}

// y[row] = sum_k W[row][k] * x[k] with f32 products and f32 sums in `order`, plus `offset` times
// sum_k |W[row][k] * x[k]| (and, with `nudge`, one f16 ulp away from zero). fp8: W is E4M3 packed
// four per u32 word (examples::gemv_fp8_rows), y f32; otherwise W is f32 and y f16 (gemv_f16out
// below).
class GemvDevice : public rt::Device {
public:
  GemvDevice(Order order, const policy::Registry& registry, bool fp8, double offset = 0,
             bool nudge = false)
      : order_(order), registry_(registry), fp8_(fp8), offset_(offset), nudge_(nudge) {
    info_.name = "gemv-by-hand";
    info_.description = "a hand-written GEMV (tests only)";
  }
  const rt::DeviceInfo& info() const override { return info_; }
  rt::LaunchResult launch(const ir::VerifiedKernel& kernel, const rt::Grid&,
                          std::span<const rt::Arg> args, const rt::LaunchOptions&) override {
    const rt::HostBuffer& w = *args[0].buffer;
    const rt::HostBuffer& x = *args[1].buffer;
    rt::HostBuffer& y = *args[2].buffer;
    const auto cols = static_cast<size_t>(args[3].scalar);
    std::vector<float> p(cols);
    for (size_t row = 0; row < y.size(); ++row) {
      double abs = 0;
      for (size_t k = 0; k < cols; ++k) {
        const float xv = std::bit_cast<float>(static_cast<uint32_t>(x.get_bits(k)));
        float wv;
        if (fp8_) {
          const uint64_t word = w.get_bits((row * cols + k) / 4);
          wv =
              static_cast<float>(num::to_double(num::Format::E4M3, (word >> (8 * (k % 4))) & 0xff));
        } else {
          wv = std::bit_cast<float>(static_cast<uint32_t>(w.get_bits(row * cols + k)));
        }
        p[k] = wv * xv;
        abs += std::fabs(double(wv) * xv);
      }
      float s = 0.0f;
      if (order_ == Order::Forward)
        for (size_t k = 0; k < cols; ++k)
          s = s + p[k];
      else if (order_ == Order::Reversed)
        for (size_t k = cols; k-- > 0;)
          s = s + p[k];
      else
        s = 0.0f + pairwise(p.data(), cols);
      s = static_cast<float>(s + offset_ * abs);
      if (fp8_)
        y.set_bits(row, std::bit_cast<uint32_t>(s));
      else
        y.set_bits(row, std::bit_cast<uint16_t>(static_cast<_Float16>(s)) + (nudge_ ? 1 : 0));
    }
    rt::LaunchResult r;
    r.budget = registry_.budget(kernel.name());
    return r;
  }

private:
  rt::DeviceInfo info_;
  Order order_;
  const policy::Registry& registry_;
  bool fp8_;
  double offset_;
  bool nudge_; // f16 output: one ulp away from zero
};

ir::VerifiedKernel gemv_f16out() {
  return kernel("gemv_f16out", {64}, {"w", "x", "y", "cols"},
                [](In<float> w, In<float> x, Out<f16> y, Scalar<uint32_t> cols) {
                  Var row(global_id(0), "row");
                  If(row < y.size(), [&] {
                    Var acc(0.0f, "acc");
                    For(0u, cols, [&](Value<uint32_t> j) { acc = acc + w[row * cols + j] * x[j]; });
                    y[row] = narrow<f16>(acc);
                  });
                });
}

struct Problem {
  static constexpr uint32_t rows = 512, cols = 256;
  rt::HostBuffer w, x, y;
  std::vector<rt::Arg> args;
  rt::Grid grid;
  Problem(const ir::VerifiedKernel& k, bool fp8, uint32_t seed)
      : w(fp8 ? ScalarType::U32 : ScalarType::F32, fp8 ? rows * cols / 4 : rows * cols),
        x(ScalarType::F32, cols), y(fp8 ? ScalarType::F32 : ScalarType::F16, rows) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-2, 2);
    for (size_t i = 0; i < w.size(); ++i) {
      if (fp8) {
        auto v = static_cast<uint32_t>(rng());
        for (int b = 0; b < 4; ++b) // no NaN weights
          if (((v >> (8 * b)) & 0x7f) == 0x7f)
            v &= ~(uint32_t{1} << (8 * b));
        w.set_bits(i, v);
      } else {
        w.set_bits(i, std::bit_cast<uint32_t>(d(rng)));
      }
    }
    for (size_t i = 0; i < x.size(); ++i)
      x.set_bits(i, std::bit_cast<uint32_t>(d(rng)));
    args = {rt::Arg::of(w), rt::Arg::of(x), rt::Arg::of(y), rt::Arg::u32(cols)};
    grid = rt::Grid::for_lanes(k.kernel(), rows);
  }
};

Options with(const policy::Registry& registry) {
  Options o;
  o.registry = &registry;
  return o;
}

void check(const ir::VerifiedKernel& k, bool fp8) {
  const Problem prob(k, fp8, 5);
  policy::Registry strict, relaxed;
  ASSERT_TRUE(relaxed.accept_relaxed_accumulation(policy::Scope::kernel(k.name()),
                                                  "differential test of the §5 bound"));
  // The forward device is the interpreter's order: bit-exact under either budget.
  {
    GemvDevice forward(Order::Forward, strict, fp8);
    Report r = run(k, forward, prob.grid, prob.args, with(strict));
    EXPECT_TRUE(r.ok()) << to_text(r);
    EXPECT_EQ(r.buffers[0].exact, Problem::rows) << to_text(r);
  }
  for (Order order : {Order::Reversed, Order::Pairwise}) {
    SCOPED_TRACE(order == Order::Reversed ? "reversed" : "pairwise");
    GemvDevice good(order, relaxed, fp8);
    Report r = run(k, good, prob.grid, prob.args, with(relaxed));
    EXPECT_TRUE(r.ok()) << to_text(r);
    const BufferReport& b = r.buffers[0];
    EXPECT_EQ(b.unchecked, 0u);
    EXPECT_EQ(b.violations, 0u);
    if (fp8) { // f32 sums in another order do differ; narrowed to f16 they rarely do
      EXPECT_GT(b.within_bound, Problem::rows / 10) << to_text(r);
    }
    EXPECT_EQ(b.exact + b.within_bound, Problem::rows);

    // Without the opt-in every difference is a violation.
    GemvDevice same(order, strict, fp8);
    Report s = run(k, same, prob.grid, prob.args, with(strict));
    EXPECT_EQ(s.buffers[0].violations, b.within_bound) << to_text(s);
    EXPECT_EQ(s.buffers[0].unchecked, 0u);

    if (!fp8) { // one f16 ulp off everywhere: the narrowing's ulp accepts it
      GemvDevice nudged(order, relaxed, fp8, 0, true);
      Report u = run(k, nudged, prob.grid, prob.args, with(relaxed));
      EXPECT_TRUE(u.ok()) << to_text(u);
      EXPECT_EQ(u.buffers[0].exact + u.buffers[0].within_bound, Problem::rows);
      EXPECT_GT(u.buffers[0].within_bound, Problem::rows * 9 / 10) << to_text(u);
    }

    // Off by 2^-6 * sum |t|: far beyond 2 * gamma_257 * sum |t| (about 2^-15 sum |t|) plus one f16
    // ulp (at most 2^-10 sum |t|).
    GemvDevice off(order, relaxed, fp8, 0x1p-6);
    Report o = run(k, off, prob.grid, prob.args, with(relaxed));
    EXPECT_EQ(o.buffers[0].violations, Problem::rows) << to_text(o);
    ASSERT_FALSE(o.buffers[0].first_violations.empty());
    const Bound& bound = o.buffers[0].first_violations[0].bound;
    EXPECT_EQ(bound.kind, Bound::Kind::RelaxedAccumulation);
    EXPECT_EQ(bound.steps, Problem::cols);
    EXPECT_EQ(bound.terms, Problem::cols + 1);
    EXPECT_EQ(bound.narrowed, !fp8);
    EXPECT_NE(to_text(o).find("relaxed accumulation (256 steps, 257 terms"), std::string::npos)
        << to_text(o);
    EXPECT_NE(to_json(o).find("\"kind\": \"relaxed accumulation\""), std::string::npos);
  }
}

TEST(RelaxedAccumulation, GemvFp8InAnotherOrderIsWithinTheBound) {
  check(examples::gemv_fp8_rows<e4m3>(), true);
}

TEST(RelaxedAccumulation, NarrowingStoreGetsOneUlpMore) {
  check(gemv_f16out(), false);
}

// The bound itself, from a record: 2 * gamma_m * S with m = terms - 1 + depth, inflated.
TEST(RelaxedAccumulation, BoundFromARecord) {
  interp::AccumulationRecord rec;
  rec.type = ScalarType::F32;
  rec.bounded = true;
  rec.steps = 100;
  rec.terms = 101;
  rec.depth = 1;
  rec.abs_sum = 1000;
  const Bound b = relaxed_accumulation_bound(rec, ScalarType::F32, 0x3f800000, {});
  ASSERT_EQ(b.kind, Bound::Kind::RelaxedAccumulation);
  const double u = 0x1p-24, gamma = 101 * u / (1 - 101 * u);
  EXPECT_GE(b.error, 2 * gamma * 1000);
  EXPECT_LE(b.error, 2 * gamma * 1000 * (1 + 1e-12));
  EXPECT_FALSE(b.narrowed);
  const uint64_t one = 0x3f800000;
  auto bits = [](float f) { return uint64_t{std::bit_cast<uint32_t>(f)}; };
  EXPECT_TRUE(accepts(b, ScalarType::F32, one, bits(1.0f + 0.9f * float(b.error)), {}));
  EXPECT_FALSE(accepts(b, ScalarType::F32, one, bits(1.0f + 1.1f * float(b.error)), {}));
  EXPECT_FALSE(accepts(b, ScalarType::F32, one, bits(INFINITY), {}));
  // Unbounded records, non-finite sums and a useless gamma leave the element unchecked.
  rec.bounded = false;
  EXPECT_EQ(relaxed_accumulation_bound(rec, ScalarType::F32, one, {}).kind, Bound::Kind::Unchecked);
  rec.bounded = true;
  rec.abs_sum = INFINITY;
  EXPECT_EQ(relaxed_accumulation_bound(rec, ScalarType::F32, one, {}).kind, Bound::Kind::Unchecked);
  rec.abs_sum = 1;
  rec.type = ScalarType::F16;
  rec.terms = 2000; // 2000 * 2^-11 >= 1/2
  EXPECT_EQ(relaxed_accumulation_bound(rec, ScalarType::F16, 0x3c00, {}).kind,
            Bound::Kind::Unchecked);
}

} // namespace
