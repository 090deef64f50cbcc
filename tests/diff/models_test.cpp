// The rounding models of the single-rounding opt-in (specs/f16-narrowing-barrier.md §4, §6): the
// interpreter's model results on elements whose models were derived by hand, checked against
// independent computations and across its two evaluation paths; the checker's counts for devices
// that follow one model; and deliberately wrong devices it must flag.
#include "examples.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/text/parse.hpp"
#include "model_device.hpp"

#include <bit>
#include <cmath>
#include <gtest/gtest.h>

using namespace halfway;
using namespace halfway::diff;
using diff::test::InterpDevice;
using interp::RoundingModel;

namespace {

constexpr size_t kN = 8192;

size_t idx(RoundingModel m) {
  return static_cast<size_t>(m);
}

float f32_at(const rt::Arg& a, size_t i) {
  return std::bit_cast<float>(static_cast<uint32_t>(a.buffer->get_bits(i)));
}

Options with(const policy::Registry& registry, bool exact_models = false) {
  Options o;
  o.registry = &registry;
  o.exact_models = exact_models;
  return o;
}

void accept(policy::Registry& registry, const std::string& kernel) {
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel(kernel), "models test"));
}

ir::VerifiedKernel parse_one(const std::string& text) {
  auto kernels = text::parse_verified(text, "models_test.hk");
  EXPECT_EQ(kernels.size(), 1u);
  return std::move(kernels.at(0));
}

// narrow_f16 (a*b + c) on rows whose four model results were derived by hand:
//  0: a = b = 1 + 2^-12, c = 2^-30: a*b = 1 + 2^-11 + 2^-24 rounds (a tie in f32) to 1 + 2^-11,
//     so the two-step sum is 1 + 2^-11, an f16 tie that goes to 1; every fused model sees the
//     part above the tie and rounds up to 1 + 2^-10.
//  1: as 0 with c = -2^-30: only the exact value is above the f16 tie (Single alone rounds up).
//  2: a = b = 32 (1 + 2^-12), c = -1024 (1 + 2^-11): cancellation; the rounded product cancels
//     to 0 (TwoStep, FusedMul), the exact one leaves 2^-14 (FusedF32, Single).
struct HandRows {
  inputs::KernelInputs in;
  static constexpr size_t kRows = 3;
  // Per row, TwoStep, FusedF32, Single, FusedMul.
  static constexpr uint16_t kModels[kRows][4] = {
      {0x3c00, 0x3c01, 0x3c01, 0x3c01},
      {0x3c00, 0x3c00, 0x3c01, 0x3c00},
      {0x0000, 0x0400, 0x0400, 0x0000},
  };
  HandRows() {
    in = inputs::make_inputs(examples::narrow_f16().kernel(), kRows, inputs::Kind::Random, 1);
    const float one = 1 + std::ldexp(1.0f, -12), big = 32 * one;
    const float a[kRows] = {one, one, big},
                c[kRows] = {std::ldexp(1.0f, -30), -std::ldexp(1.0f, -30),
                            -1024 * (1 + std::ldexp(1.0f, -11))};
    for (size_t i = 0; i < kRows; ++i) {
      in.args[0].buffer->set_bits(i, num::f32_bits(a[i]));
      in.args[1].buffer->set_bits(i, num::f32_bits(a[i]));
      in.args[2].buffer->set_bits(i, num::f32_bits(c[i]));
    }
  }
};

// A device that writes `value` to element `index` of the f16 output after a strict run.
InterpDevice::Corrupt set_element(size_t index, uint16_t value) {
  return [=](const ir::Kernel&, std::span<const rt::Arg> args) {
    args[3].buffer->set_bits(index, value);
  };
}

// What LLVM `contract` gives on x86: a*b + c as one f32 fma, then narrowed (FusedF32).
void contract(const ir::Kernel&, std::span<const rt::Arg> args) {
  for (size_t i = 0; i < args[3].buffer->size(); ++i)
    args[3].buffer->set_bits(i, num::f32_to_f16(num::f32_bits(num::f32_fma(
                                    f32_at(args[0], i), f32_at(args[1], i), f32_at(args[2], i)))));
}

interp::Stats shadowed(const ir::VerifiedKernel& k, const inputs::KernelInputs& in) {
  interp::Options o;
  o.shadow = true;
  o.deterministic = true;
  return interp::run(k, in.grid, in.args, o);
}

} // namespace

TEST(RoundingModels, HandDerivedElements) {
  HandRows rows;
  interp::Stats s = shadowed(examples::narrow_f16(), rows.in);
  ASSERT_EQ(s.shadow.size(), HandRows::kRows);
  for (const interp::ShadowRecord& r : s.shadow) {
    ASSERT_TRUE(r.destination);
    const size_t row = r.destination->index;
    for (RoundingModel m : interp::kAllRoundingModels)
      EXPECT_EQ(r.models[idx(m)], HandRows::kModels[row][idx(m)])
          << "row " << row << ", " << interp::name(m);
    EXPECT_EQ(r.models[idx(RoundingModel::TwoStep)], r.result_bits);
  }
}

TEST(RoundingModels, AgreeWithIndependentComputations) {
  // TwoStep is the reference's result, Single what the interpreter's single-rounding run stores,
  // FusedF32 the f32 fma narrowed (the numerics library's fma, not the interpreter's path), and
  // FusedMul the rounded product plus c, summed exactly in long double where that is exact.
  auto k = examples::narrow_f16();
  for (auto kind : {inputs::Kind::Ties, inputs::Kind::Random, inputs::Kind::Edges}) {
    inputs::KernelInputs in = inputs::make_inputs(k.kernel(), kN, kind, 3);
    interp::Stats s = shadowed(k, in);
    rt::HostBuffer single = in.args[3].buffer->clone();
    std::vector<rt::Arg> args = in.args;
    args[3] = rt::Arg::of(single);
    interp::Options o;
    o.narrowing = interp::NarrowingModel::SingleRounding;
    interp::run(k, in.grid, args, o);
    const num::FloatControls controls{};
    size_t checked_mul = 0, fused = 0;
    ASSERT_EQ(s.shadow.size(), kN);
    for (const interp::ShadowRecord& r : s.shadow) {
      const size_t i = r.destination->index;
      const float a = f32_at(in.args[0], i), b = f32_at(in.args[1], i), c = f32_at(in.args[2], i);
      auto same = [&](uint64_t x, uint64_t y) {
        return num::same_result(num::Format::F16, x, y, controls);
      };
      EXPECT_EQ(r.models[idx(RoundingModel::TwoStep)], r.result_bits);
      EXPECT_TRUE(same(r.models[idx(RoundingModel::Single)], single.get_bits(i))) << i;
      EXPECT_TRUE(same(r.models[idx(RoundingModel::FusedF32)],
                       num::f32_to_f16(num::f32_bits(num::f32_fma(a, b, c)))))
          << i;
      fused += r.models[idx(RoundingModel::FusedF32)] != r.result_bits;
      const float p = a * b;
      const long double sum = static_cast<long double>(p) + c;
      if (!std::isfinite(sum) || sum - p != c || sum - c != p)
        continue; // not exact in long double: the fast path's TwoSum is checked elsewhere
      // Round to odd into a double (64 >= 53 + 2 bits: then one rounding into f16 is exact).
      double d = static_cast<double>(sum);
      if (static_cast<long double>(d) != sum) {
        if (std::fabs(static_cast<long double>(d)) > std::fabs(sum))
          d = std::nextafter(d, 0.0);
        if ((std::bit_cast<uint64_t>(d) & 1) == 0)
          d = std::nextafter(d, std::copysign(INFINITY, d));
      }
      EXPECT_TRUE(
          same(r.models[idx(RoundingModel::FusedMul)], num::from_double(num::Format::F16, d)))
          << i;
      ++checked_mul;
    }
    EXPECT_GT(checked_mul, kN * 9 / 10) << inputs::name(kind);
    if (kind == inputs::Kind::Ties) {
      EXPECT_GT(fused, kN / 20) << "tie inputs separate FusedF32 from TwoStep";
    }
  }
}

TEST(RoundingModels, FastPathAgreesWithTheMpfrPath) {
  // a*b + c takes the error-free path; (a*b + c) + d, three terms, takes MPFR. With d = -0 (which
  // leaves every value, signed zeros included, as it is) both have the same four models.
  auto chain = parse_one(R"(kernel chain workgroup(64, 1, 1) {
  param a: buffer<f32, read>;
  param b: buffer<f32, read>;
  param c: buffer<f32, read>;
  param d: buffer<f32, read>;
  param out16: buffer<f16, write>;
  let i: u32 = global_id(0);
  if lt(i, len(out16)) {
    out16[i] = narrow<f16>(add(add(mul(a[i], b[i]), c[i]), d[i]));
  }
}
)");
  // Flushing f32 subnormals takes the batched path's general leaves (exact_leaf) and roundings.
  for (bool flush : {false, true})
    for (auto kind : {inputs::Kind::Ties, inputs::Kind::Random, inputs::Kind::Edges}) {
      inputs::KernelInputs in = inputs::make_inputs(examples::narrow_f16().kernel(), kN, kind, 5);
      num::FloatControls controls;
      controls.flush_f32 = flush;
      interp::Options fast_options;
      fast_options.shadow = true;
      fast_options.deterministic = true;
      fast_options.controls = controls;
      interp::Stats fast = interp::run(examples::narrow_f16(), in.grid, in.args, fast_options);
      rt::HostBuffer d(ir::ScalarType::F32, kN);
      for (size_t i = 0; i < kN; ++i)
        d.set_bits(i, 0x80000000u);
      rt::HostBuffer out(ir::ScalarType::F16, kN);
      std::vector<rt::Arg> args = {in.args[0], in.args[1], in.args[2], rt::Arg::of(d),
                                   rt::Arg::of(out)};
      interp::Stats mpfr = interp::run(chain, in.grid, args, fast_options);
      ASSERT_EQ(fast.shadow.size(), mpfr.shadow.size());
      size_t differ_from_two_step = 0;
      for (size_t r = 0; r < fast.shadow.size(); ++r) {
        ASSERT_EQ(fast.shadow[r].destination->index, mpfr.shadow[r].destination->index);
        for (RoundingModel m : interp::kAllRoundingModels)
          EXPECT_TRUE(num::same_result(num::Format::F16, fast.shadow[r].models[idx(m)],
                                       mpfr.shadow[r].models[idx(m)], {}))
              << inputs::name(kind) << (flush ? " flushing" : "") << " element "
              << fast.shadow[r].destination->index << " " << interp::name(m);
        differ_from_two_step += fast.shadow[r].models[idx(RoundingModel::FusedMul)] !=
                                fast.shadow[r].models[idx(RoundingModel::TwoStep)];
      }
      std::printf("%s%s: FusedMul differs from TwoStep on %zu of %zu\n", inputs::name(kind).data(),
                  flush ? " (flushing)" : "", differ_from_two_step, kN);
    }
}

TEST(RoundingModels, DenseLanesMatchTheLaneLoop) {
  // A batch whose lanes are all active takes the interpreter's dense path (four lanes per vector
  // where the build has AVX2 and F16C), any other mask the lane loop. The same site with lane 0
  // of every workgroup switched off runs the lane loop everywhere: every other lane's entry must
  // be the same bit for bit, for each shape of the error-free path, into f16 and bf16, on inputs
  // with ties, edges (NaN, infinities, overflowing products: the dense path's special lanes) and
  // random values.
  const std::vector<std::string> shapes = {"add(mul(a[i], b[i]), c[i])",
                                           "sub(c[i], mul(a[i], b[i]))",
                                           "fma(a[i], b[i], c[i])",
                                           "mul(a[i], b[i])",
                                           "add(mul(a[i], b[i]), mul(c[i], d[i]))",
                                           "add(neg(mul(a[i], b[i])), c[i])",
                                           "sub(mul(a[i], b[i]), mul(c[i], d[i]))",
                                           "add(a[i], c[i])",
                                           "sub(fma(a[i], b[i], c[i]), mul(c[i], d[i]))"};
  auto source = [](const std::string& type, const std::string& value, bool holes) {
    const std::string guard =
        holes ? "and(lt(i, len(out)), ne(local_id(0), 0:u32))" : "lt(i, len(out))";
    return "kernel dense workgroup(64, 1, 1) {\n  param a: buffer<f32, read>;\n"
           "  param b: buffer<f32, read>;\n  param c: buffer<f32, read>;\n"
           "  param d: buffer<f32, read>;\n  param out: buffer<" +
           type + ", write>;\n  let i: u32 = global_id(0);\n  if " + guard +
           " {\n    out[i] = narrow<" + type + ">(" + value + ");\n  }\n}\n";
  };
  auto key = [](const interp::ShadowRecord& r) {
    std::vector<uint64_t> k = {r.global_lane,
                               r.workgroup,
                               r.lane,
                               r.destination->index,
                               r.source_bits,
                               r.result_bits,
                               std::bit_cast<uint64_t>(r.exact_hi),
                               std::bit_cast<uint64_t>(r.exact_lo),
                               std::bit_cast<uint64_t>(r.product_sum)};
    k.insert(k.end(), r.models.begin(), r.models.end());
    return k;
  };
  size_t compared = 0;
  for (const std::string type : {"f16", "bf16"})
    for (const std::string& shape : shapes)
      for (auto kind : {inputs::Kind::Ties, inputs::Kind::Edges, inputs::Kind::Random}) {
        const inputs::KernelInputs in =
            inputs::make_inputs(examples::narrow_f16().kernel(), kN, kind, 9);
        rt::HostBuffer d(ir::ScalarType::F32, kN);
        for (size_t i = 0; i < kN; ++i) // c reversed: products of two pairs of unrelated values
          d.set_bits(i, in.args[2].buffer->get_bits(kN - 1 - i));
        rt::HostBuffer out(type == "f16" ? ir::ScalarType::F16 : ir::ScalarType::BF16, kN);
        const std::vector<rt::Arg> args = {in.args[0], in.args[1], in.args[2], rt::Arg::of(d),
                                           rt::Arg::of(out)};
        interp::Options o;
        o.shadow = true;
        o.deterministic = true;
        const interp::Stats dense =
            interp::run(parse_one(source(type, shape, false)), in.grid, args, o);
        const interp::Stats loop =
            interp::run(parse_one(source(type, shape, true)), in.grid, args, o);
        ASSERT_EQ(dense.shadow.size(), kN) << shape;
        ASSERT_EQ(loop.shadow.size(), kN - kN / 64) << shape;
        size_t j = 0;
        for (const interp::ShadowRecord& r : loop.shadow) {
          while (dense.shadow[j].global_lane != r.global_lane)
            ++j;
          ASSERT_EQ(key(dense.shadow[j]), key(r))
              << type << " " << shape << " " << inputs::name(kind) << " lane " << r.global_lane;
          ++compared;
        }
      }
  EXPECT_EQ(compared, 2 * shapes.size() * 3 * (kN - kN / 64));
}

TEST(RoundingModels, OneProductKeepsTheSignOfZero) {
  // A site of one term: narrow<f16>(a * b). A negative zero product is -0 under every model (the
  // models once added +0 to it, which made FusedF32 and FusedMul +0); a product on an f16 tie
  // rounds to even once (Single, FusedF32 keeps the product exact) or twice (TwoStep, FusedMul:
  // the f32 product is the tie itself here, so all agree).
  auto k = parse_one(R"(kernel product workgroup(64, 1, 1) {
  param a: buffer<f32, read>;
  param b: buffer<f32, read>;
  param out16: buffer<f16, write>;
  let i: u32 = global_id(0);
  if lt(i, len(out16)) {
    out16[i] = narrow<f16>(mul(a[i], b[i]));
  }
}
)");
  constexpr size_t kRows = 3;
  const float a[kRows] = {-3.0f, 1 + std::ldexp(1.0f, -11), 0.0f};
  const float b[kRows] = {0.0f, 1.0f, -0.0f};
  const uint16_t want[kRows] = {0x8000, 0x3c00, 0x8000};
  rt::HostBuffer ab(ir::ScalarType::F32, 64), bb(ir::ScalarType::F32, 64),
      out(ir::ScalarType::F16, 64);
  for (size_t i = 0; i < 64; ++i) {
    ab.set_bits(i, num::f32_bits(a[i % kRows]));
    bb.set_bits(i, num::f32_bits(b[i % kRows]));
  }
  interp::Options o;
  o.shadow = true;
  o.deterministic = true;
  const std::vector<rt::Arg> args = {rt::Arg::of(ab), rt::Arg::of(bb), rt::Arg::of(out)};
  interp::Stats s = interp::run(k, rt::Grid{{1, 1, 1}}, args, o);
  ASSERT_EQ(s.shadow.size(), 64u);
  for (const interp::ShadowRecord& r : s.shadow)
    for (RoundingModel m : interp::kAllRoundingModels)
      EXPECT_EQ(r.models[idx(m)], want[r.destination->index % kRows])
          << "element " << r.destination->index << " " << interp::name(m);
}

TEST(RoundingModels, DeviceFollowingOneModelIsNamed) {
  policy::Registry registry;
  accept(registry, "narrow_f16");
  auto in = inputs::make_inputs(examples::narrow_f16().kernel(), kN, inputs::Kind::Ties, 7);
  InterpDevice cpu("contract", interp::NarrowingModel::TwoStep, registry, {}, contract);
  InterpDevice single = test::model_device(registry);
  InterpDevice strict = test::strict_device(registry);
  struct Case {
    InterpDevice* device;
    RoundingModel model;
  };
  for (Case c : {Case{&cpu, RoundingModel::FusedF32}, Case{&single, RoundingModel::Single},
                 Case{&strict, RoundingModel::TwoStep}}) {
    Report r = run(examples::narrow_f16(), *c.device, in.grid, in.args, with(registry, true));
    EXPECT_TRUE(r.ok()) << to_text(r);
    EXPECT_TRUE(r.exact_models);
    const BufferReport& b = r.buffers.at(0);
    const ModelCounts& m = b.models;
    EXPECT_EQ(m.elements, kN);
    EXPECT_EQ(m.equal[idx(c.model)], kN) << interp::name(c.model);
    const auto fits = m.fits();
    EXPECT_NE(std::find(fits.begin(), fits.end(), c.model), fits.end());
    EXPECT_EQ(m.unexplained, 0u);
    EXPECT_EQ(m.explained, b.within_bound);
    EXPECT_EQ(m.first[idx(RoundingModel::TwoStep)], b.exact);
    if (c.model == RoundingModel::TwoStep) {
      EXPECT_EQ(b.exact, kN);
      EXPECT_FALSE(m.max_bound_ratio);
    } else {
      EXPECT_GT(b.within_bound, kN / 20);
      // Each differing element is counted under its model (or an earlier one that agrees).
      EXPECT_EQ(m.first[idx(RoundingModel::TwoStep)] + m.first[idx(RoundingModel::FusedF32)] +
                    m.first[idx(RoundingModel::Single)] + m.first[idx(RoundingModel::FusedMul)],
                kN);
      ASSERT_TRUE(m.max_bound_ratio);
      EXPECT_GT(*m.max_bound_ratio, 0.0);
      EXPECT_LE(*m.max_bound_ratio, 1.0);
    }
    const std::string text = to_text(r), json = to_json(r);
    EXPECT_NE(text.find("fits: "), std::string::npos) << text;
    EXPECT_NE(text.find(std::string(interp::name(c.model))), std::string::npos) << text;
    EXPECT_NE(json.find("\"rounding_models\": {\"elements\": " + std::to_string(kN)),
              std::string::npos)
        << json;
    EXPECT_NE(json.find("\"exact_models\": true"), std::string::npos) << json;
  }
}

TEST(RoundingModels, OneUlpOffInsideTheBandIsUnexplained) {
  // Row 2 cancels: the §4 band spans many ulps, the models give 0 or 2^-14. One ulp above 2^-14
  // is inside the band (passed by default, but counted and listed) and a violation with exact
  // models.
  HandRows rows;
  policy::Registry registry;
  accept(registry, "narrow_f16");
  InterpDevice off("one-ulp-off", interp::NarrowingModel::TwoStep, registry, {},
                   set_element(2, 0x0401));
  Report loose = run(examples::narrow_f16(), off, rows.in.grid, rows.in.args, with(registry));
  EXPECT_TRUE(loose.ok()) << to_text(loose);
  const BufferReport& b = loose.buffers.at(0);
  EXPECT_EQ(b.within_bound, 1u);
  EXPECT_EQ(b.models.unexplained, 1u);
  EXPECT_EQ(b.models.explained, 0u);
  ASSERT_EQ(b.models.first_unexplained.size(), 1u);
  const Violation& v = b.models.first_unexplained[0];
  EXPECT_EQ(v.index, 2u);
  EXPECT_EQ(v.device, 0x0401u);
  ASSERT_TRUE(v.models);
  EXPECT_EQ((*v.models)[idx(RoundingModel::Single)], 0x0400u);
  EXPECT_NE(to_text(loose).find("within bound, unexplained: 1"), std::string::npos)
      << to_text(loose);
  EXPECT_NE(to_json(loose).find("\"unexplained\": 1"), std::string::npos);

  Report exact = run(examples::narrow_f16(), off, rows.in.grid, rows.in.args, with(registry, true));
  EXPECT_FALSE(exact.ok());
  EXPECT_EQ(exact.violations(), 1u);
  EXPECT_EQ(exact.buffers.at(0).first_violations.at(0).index, 2u);
}

TEST(RoundingModels, OneUlpOffOnATieIsAViolation) {
  // Row 1 lies just above an f16 tie: 0x3c00 (TwoStep, FusedF32, FusedMul) and 0x3c01 (Single)
  // are both right; one ulp below the reference is neither, and outside the band too.
  HandRows rows;
  policy::Registry registry;
  accept(registry, "narrow_f16");
  for (bool exact_models : {false, true}) {
    InterpDevice off("tie-off", interp::NarrowingModel::TwoStep, registry, {},
                     set_element(1, 0x3bff));
    Report r =
        run(examples::narrow_f16(), off, rows.in.grid, rows.in.args, with(registry, exact_models));
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.violations(), 1u);
    EXPECT_EQ(r.buffers.at(0).first_violations.at(0).index, 1u);
    EXPECT_EQ(r.buffers.at(0).first_violations.at(0).bound.kind, Bound::Kind::SingleRounding);
    InterpDevice right("tie-single", interp::NarrowingModel::TwoStep, registry, {},
                       set_element(1, 0x3c01));
    Report ok = run(examples::narrow_f16(), right, rows.in.grid, rows.in.args,
                    with(registry, exact_models));
    EXPECT_TRUE(ok.ok()) << to_text(ok);
    EXPECT_EQ(ok.buffers.at(0).models.explained, 1u);
    EXPECT_EQ(ok.buffers.at(0).models.first[idx(RoundingModel::Single)], 1u);
  }
}

TEST(RoundingModels, ShiftedDeviceOnTiesIsFlaggedByExactModels) {
  // Every third element one ulp away from the reference: the band hides some of them, the models
  // none.
  policy::Registry registry;
  accept(registry, "narrow_f16");
  auto in = inputs::make_inputs(examples::narrow_f16().kernel(), kN, inputs::Kind::Ties, 9);
  InterpDevice shifted("shifted", interp::NarrowingModel::TwoStep, registry, {},
                       test::shift_one_ulp(3));
  Report loose = run(examples::narrow_f16(), shifted, in.grid, in.args, with(registry));
  Report exact = run(examples::narrow_f16(), shifted, in.grid, in.args, with(registry, true));
  const ModelCounts& m = loose.buffers.at(0).models;
  std::printf("shifted by one ulp: %llu violations by the bound, %llu within it unexplained, "
              "%llu explained by a model\n",
              static_cast<unsigned long long>(loose.violations()),
              static_cast<unsigned long long>(m.unexplained),
              static_cast<unsigned long long>(m.explained));
  EXPECT_GT(m.unexplained, 0u) << "the band accepts shifted elements";
  EXPECT_GT(loose.violations(), 0u);
  EXPECT_EQ(exact.violations(), loose.violations() + m.unexplained);
  EXPECT_EQ(exact.buffers.at(0).models.unexplained, m.unexplained);
}

TEST(RoundingModels, FusedModelsWithoutTheOptInAreViolations) {
  // No opt-in for narrow_f16 (one for another kernel): only TwoStep is allowed, and the models
  // are neither computed nor counted.
  policy::Registry registry;
  accept(registry, "saxpy");
  auto in = inputs::make_inputs(examples::narrow_f16().kernel(), kN, inputs::Kind::Ties, 11);
  InterpDevice cpu("contract", interp::NarrowingModel::TwoStep, registry, {}, contract);
  InterpDevice dropped = test::model_device(registry); // drops the barrier: rounds once
  for (InterpDevice* d : {&cpu, &dropped}) {
    for (bool exact_models : {false, true}) {
      Report r = run(examples::narrow_f16(), *d, in.grid, in.args, with(registry, exact_models));
      EXPECT_FALSE(r.ok());
      const BufferReport& b = r.buffers.at(0);
      EXPECT_GT(b.violations, kN / 20) << d->info().name;
      EXPECT_EQ(b.exact + b.violations, kN);
      EXPECT_EQ(b.models.elements, 0u);
      EXPECT_EQ(b.first_violations.at(0).bound.kind, Bound::Kind::BitExact);
      EXPECT_FALSE(b.first_violations.at(0).models);
    }
  }
}

TEST(RoundingModels, DroppedNarrowingUnderTheOptInIsFlagged) {
  // t = narrow(a*b) feeds a second site; a device that keeps t in f32 (drops that narrowing)
  // differs from the reference wherever t was rounded, and no model explains it: the second
  // site's models take t as the reference computed it (specs §4, several sites). Its shape is a
  // single op, so the §4 band (E = 0) catches it too.
  auto k = parse_one(R"(kernel two_sites workgroup(64, 1, 1) {
  param a: buffer<f32, read>;
  param b: buffer<f32, read>;
  param c: buffer<f32, read>;
  param out16: buffer<f16, write>;
  let i: u32 = global_id(0);
  if lt(i, len(out16)) {
    let t: f16 = narrow<f16>(mul(a[i], b[i]));
    out16[i] = narrow<f16>(add(widen<f32>(t), c[i]));
  }
}
)");
  policy::Registry registry;
  accept(registry, "two_sites");
  auto drop = [](const ir::Kernel&, std::span<const rt::Arg> args) {
    for (size_t i = 0; i < args[3].buffer->size(); ++i) {
      const float t = f32_at(args[0], i) * f32_at(args[1], i);
      args[3].buffer->set_bits(i, num::f32_to_f16(num::f32_bits(t + f32_at(args[2], i))));
    }
  };
  auto in = inputs::make_inputs(k.kernel(), kN, inputs::Kind::Random, 13);
  InterpDevice device("dropped-narrowing", interp::NarrowingModel::TwoStep, registry, {}, drop);
  Report loose = run(k, device, in.grid, in.args, with(registry));
  Report exact = run(k, device, in.grid, in.args, with(registry, true));
  const BufferReport& b = exact.buffers.at(0);
  std::printf("dropped narrowing: %llu differ, max %llu ulps; %llu violations by the bound, "
              "%llu with exact models\n",
              static_cast<unsigned long long>(b.size - b.exact),
              static_cast<unsigned long long>(b.max_ulps),
              static_cast<unsigned long long>(loose.violations()),
              static_cast<unsigned long long>(exact.violations()));
  EXPECT_GT(b.size - b.exact, kN / 100);
  EXPECT_FALSE(exact.ok());
  EXPECT_EQ(b.models.explained, 0u);
  EXPECT_EQ(exact.violations(), b.size - b.exact);
  EXPECT_EQ(loose.violations(), exact.violations());
}

namespace {

// Buffers of 2^16 elements or more are judged in chunks on several threads (diff/src/run.cpp),
// each chunk counting apart and merged in index order: the report equals one thread's, counts,
// histogram, model counts and the first violations and unexplained elements alike.
TEST(Models, ConsecutiveElementsAreJudgedLikeScatteredOnes) {
  // The judge takes eight lanes at a time where they store eight consecutive elements (an AVX2
  // vector per eight lanes where the build has AVX2), lane by lane elsewhere. The same site
  // storing element i ^ 1 (never eight consecutive ones) must give the same report, element for
  // element, into f16 and bf16, for a device that fuses and is one ulp off on every 97th element
  // (explained, unexplained and violating elements), on ties and edges (NaNs, infinities).
  auto source = [](const std::string& type, const std::string& index) {
    return "kernel judged workgroup(64, 1, 1) {\n  param a: buffer<f32, read>;\n"
           "  param b: buffer<f32, read>;\n  param c: buffer<f32, read>;\n"
           "  param out: buffer<" +
           type + ", write>;\n  let i: u32 = " + index + ";\n  if lt(i, len(out)) {\n" +
           "    out[i] = narrow<" + type + ">(add(mul(a[i], b[i]), c[i]));\n  }\n}\n";
  };
  policy::Registry registry;
  accept(registry, "judged");
  // One ulp away from zero on every 97th element that is a number (of either type).
  InterpDevice device("fused-off", interp::NarrowingModel::SingleRounding, registry, {},
                      [](const ir::Kernel&, std::span<const rt::Arg> args) {
                        rt::HostBuffer& out = *args[3].buffer;
                        const uint64_t exponent =
                            out.type() == ir::ScalarType::F16 ? 0x7c00 : 0x7f80;
                        for (size_t i = 0; i < out.size(); i += 97)
                          if ((out.get_bits(i) & exponent) != exponent)
                            out.set_bits(i, out.get_bits(i) + 1);
                      });
  for (const std::string type : {"f16", "bf16"})
    for (auto kind : {inputs::Kind::Ties, inputs::Kind::Edges})
      for (bool exact_models : {false, true}) {
        const ir::VerifiedKernel consecutive = parse_one(source(type, "global_id(0)"));
        const ir::VerifiedKernel scattered = parse_one(source(type, "xor(global_id(0), 1:u32)"));
        const inputs::KernelInputs in = inputs::make_inputs(consecutive.kernel(), kN, kind, 5);
        const Report a = run(consecutive, device, in.grid, in.args, with(registry, exact_models));
        const Report b = run(scattered, device, in.grid, in.args, with(registry, exact_models));
        const BufferReport& r = a.buffers.at(0);
        EXPECT_EQ(r.models.elements, kN);
        EXPECT_GT(r.models.explained, kN / 50) << to_text(a);
        EXPECT_GT(r.violations + r.models.unexplained, 0u) << to_text(a);
        EXPECT_EQ(to_json(a), to_json(b)) << type << " " << inputs::name(kind);
      }
}

TEST(Models, ASiteResultAnotherStoreReplacedIsNoRecord) {
  // Even elements are stored twice: by the site, then by narrow<f16>(c[i]). A device that skips
  // the second store leaves the site's two-step value there: the judge finds it equal to the
  // site's result, but the element's final value is the second store's, so it is no record (the
  // model counts take it back) and, unless the two agree, a violation bit for bit.
  const ir::VerifiedKernel k = parse_one(
      "kernel twice workgroup(64, 1, 1) {\n  param a: buffer<f32, read>;\n"
      "  param b: buffer<f32, read>;\n  param c: buffer<f32, read>;\n"
      "  param out: buffer<f16, write>;\n  let i: u32 = global_id(0);\n"
      "  if lt(i, len(out)) {\n    out[i] = narrow<f16>(add(mul(a[i], b[i]), c[i]));\n"
      "    if eq(and(i, 1:u32), 0:u32) {\n      out[i] = narrow<f16>(c[i]);\n    }\n  }\n}\n");
  policy::Registry registry;
  accept(registry, "twice");
  auto two_step = [](const rt::Arg* args, size_t i) {
    const float p = f32_at(args[0], i) * f32_at(args[1], i);
    return num::f32_to_f16(num::f32_bits(p + f32_at(args[2], i)));
  };
  InterpDevice skips("skips", interp::NarrowingModel::TwoStep, registry, {},
                     [&](const ir::Kernel&, std::span<const rt::Arg> args) {
                       for (size_t i = 0; i < kN; i += 2)
                         args[3].buffer->set_bits(i, two_step(args.data(), i));
                     });
  const inputs::KernelInputs in = inputs::make_inputs(k.kernel(), kN, inputs::Kind::Ties, 3);
  uint64_t agree = 0; // even elements where the site's value is also the second store's
  for (size_t i = 0; i < kN; i += 2) {
    const uint16_t second = num::f32_to_f16(static_cast<uint32_t>(in.args[2].buffer->get_bits(i)));
    const uint16_t site = two_step(in.args.data(), i);
    agree += site == second ||
             (num::is_nan(num::Format::F16, site) && num::is_nan(num::Format::F16, second));
  }
  ASSERT_LT(agree, kN / 4);
  const Report r = run(k, skips, in.grid, in.args, with(registry));
  const BufferReport& b = r.buffers.at(0);
  EXPECT_EQ(b.models.elements, kN / 2 + agree) << to_text(r);
  EXPECT_EQ(b.models.equal[idx(RoundingModel::TwoStep)], kN / 2 + agree);
  EXPECT_EQ(b.models.first[idx(RoundingModel::TwoStep)], kN / 2 + agree);
  EXPECT_EQ(b.violations, kN / 2 - agree);
  EXPECT_EQ(b.exact, kN / 2 + agree);
}

TEST(Models, ChunkedJudgingGivesOneThreadsReport) {
  policy::Registry registry;
  accept(registry, "narrow_f16");
  const ir::VerifiedKernel k = examples::narrow_f16();
  auto in = inputs::make_inputs(k.kernel(), size_t{1} << 17, inputs::Kind::Ties, 11);
  InterpDevice off("off", interp::NarrowingModel::SingleRounding, registry, {},
                   test::shift_one_ulp(97));
  Options one = with(registry), four = with(registry);
  one.reference_threads = 1;
  four.reference_threads = 4;
  const Report a = run(k, off, in.grid, in.args, one);
  const Report b = run(k, off, in.grid, in.args, four);
  ASSERT_EQ(a.buffers.size(), 1u);
  const BufferReport& r = a.buffers[0];
  EXPECT_GT(r.violations + r.models.unexplained, 0u) << to_text(a);
  EXPECT_GT(r.models.explained, 0u) << to_text(a);
  EXPECT_EQ(r.first_violations.size() + r.models.first_unexplained.size() > 0, true);
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(to_text(a), to_text(b));
}

} // namespace
