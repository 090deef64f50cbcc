// The checker against devices that are right and devices that are wrong: a strict device passes
// bit for bit; the most-fusing model differs on ties, fails without an opt-in (the bit-exact
// comparison catches what a tolerance would hide) and passes within the bound with one; a model
// shifted by one ulp fails even with the opt-in; float controls and NaNs are judged as documented.
#include "elements.hpp"
#include "examples.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/gtest.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/dsl.hpp"
#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/convert.hpp"
#include "model_device.hpp"

#include <bit>
#include <gtest/gtest-spi.h>

using namespace halfway;
using namespace halfway::diff;
using diff::test::InterpDevice;
using ir::ScalarType;

namespace {

constexpr size_t kN = 8192;

inputs::KernelInputs tie_inputs(uint64_t seed = 1) {
  return inputs::make_inputs(examples::narrow_f16().kernel(), kN, inputs::Kind::Ties, seed);
}

Options with(const policy::Registry& registry) {
  Options o;
  o.registry = &registry;
  return o;
}

void accept_single_rounding(policy::Registry& registry) {
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"),
                                              "differential test of the §4 bound"));
}

TEST(Checker, ModelDiffersFromStrictOnTiesNotOnRandomInputs) {
  // Measured with the interpreter's two models.
  auto k = examples::narrow_f16();
  for (auto kind : {inputs::Kind::Ties, inputs::Kind::Random}) {
    inputs::KernelInputs in = inputs::make_inputs(k.kernel(), kN, kind, 2);
    rt::HostBuffer strict = in.args[3].buffer->clone(), model = in.args[3].buffer->clone();
    std::vector<rt::Arg> args = in.args;
    args[3] = rt::Arg::of(strict);
    interp::run(k, in.grid, args);
    args[3] = rt::Arg::of(model);
    interp::Options o;
    o.narrowing = interp::NarrowingModel::SingleRounding;
    interp::run(k, in.grid, args, o);
    size_t differ = 0;
    for (size_t i = 0; i < kN; ++i)
      differ += strict.get_bits(i) != model.get_bits(i);
    std::printf("narrow_f16, %s inputs: the two models differ on %zu of %zu\n",
                inputs::name(kind).data(), differ, kN);
    if (kind == inputs::Kind::Ties) {
      EXPECT_GT(differ, kN * 35 / 100);
    } else {
      EXPECT_LT(differ, kN / 100);
    }
  }
}

TEST(Checker, StrictDevicePassesBitExact) {
  policy::Registry registry;
  InterpDevice strict = test::strict_device(registry);
  auto in = tie_inputs();
  Report r = run(examples::narrow_f16(), strict, in.grid, in.args, with(registry));
  EXPECT_TRUE(r.ok()) << to_text(r);
  ASSERT_EQ(r.buffers.size(), 1u);
  EXPECT_EQ(r.buffers[0].name, "out16");
  EXPECT_EQ(r.buffers[0].exact, kN);
  EXPECT_EQ(r.buffers[0].max_ulps, 0u);
  EXPECT_FALSE(r.budget.holds_any());
  EXPECT_MATCHES_INTERPRETER_WITH(examples::narrow_f16(), strict, in, with(registry));
}

TEST(Checker, FusingDeviceWithoutOptInIsCaughtBitExact) {
  // The model stays inside the §4 bound (next test), so only the bit-exact comparison sees that
  // it contracted where the budget holds no opt-in.
  policy::Registry registry;
  InterpDevice model = test::model_device(registry);
  auto in = tie_inputs();
  Report r = run(examples::narrow_f16(), model, in.grid, in.args, with(registry));
  EXPECT_FALSE(r.ok());
  const BufferReport& b = r.buffers.at(0);
  EXPECT_GT(b.violations, kN * 35 / 100);
  EXPECT_EQ(b.exact + b.violations, kN);
  EXPECT_EQ(b.within_bound, 0u);
  ASSERT_FALSE(b.first_violations.empty());
  EXPECT_EQ(b.first_violations[0].bound.kind, Bound::Kind::BitExact);
}

TEST(Checker, FusingDeviceWithOptInStaysWithinTheBound) {
  policy::Registry registry;
  accept_single_rounding(registry);
  InterpDevice model = test::model_device(registry);
  auto in = tie_inputs();
  Report r = run(examples::narrow_f16(), model, in.grid, in.args, with(registry));
  EXPECT_TRUE(r.ok()) << to_text(r);
  const BufferReport& b = r.buffers.at(0);
  EXPECT_GT(b.within_bound, kN * 35 / 100);
  EXPECT_EQ(b.exact + b.within_bound, kN);
  EXPECT_GT(b.max_ulps, 1u) << "cancellation inputs move more than one ulp, inside the bound";
  EXPECT_EQ(r.budget.single_rounding, "differential test of the §4 bound");
  EXPECT_MATCHES_INTERPRETER_WITH(examples::narrow_f16(), model, in, with(registry));
  // The strict device is within the bound too (it is exact).
  InterpDevice strict = test::strict_device(registry);
  EXPECT_MATCHES_INTERPRETER_WITH(examples::narrow_f16(), strict, in, with(registry));
}

TEST(Checker, ContractingCpuModelWithinTheBound) {
  // What LLVM's `contract` does on x86 (docs/measured.md): a*b + c becomes one f32 FMA,
  // then vcvtps2ph rounds that to f16: RN16(RN32(a*b + c)), single rounding of the f32 part only.
  // It differs from the strict result on ties and stays inside the §4 bound.
  auto contract = [](const ir::Kernel&, std::span<const rt::Arg> args) {
    for (size_t i = 0; i < args[3].buffer->size(); ++i) {
      const float a = std::bit_cast<float>(static_cast<uint32_t>(args[0].buffer->get_bits(i)));
      const float b = std::bit_cast<float>(static_cast<uint32_t>(args[1].buffer->get_bits(i)));
      const float c = std::bit_cast<float>(static_cast<uint32_t>(args[2].buffer->get_bits(i)));
      args[3].buffer->set_bits(i, num::f32_to_f16(num::f32_bits(num::f32_fma(a, b, c))));
    }
  };
  policy::Registry none, held;
  accept_single_rounding(held);
  auto in = tie_inputs(4);
  InterpDevice cpu_none("contract", interp::NarrowingModel::TwoStep, none, {}, contract);
  Report caught = run(examples::narrow_f16(), cpu_none, in.grid, in.args, with(none));
  EXPECT_GT(caught.violations(), kN / 20) << "a stray `contract` is caught bit-exact";
  InterpDevice cpu_held("contract", interp::NarrowingModel::TwoStep, held, {}, contract);
  Report r = run(examples::narrow_f16(), cpu_held, in.grid, in.args, with(held));
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_GT(r.buffers.at(0).within_bound, kN / 20);
}

TEST(Checker, EveryExampleOnEveryInputKind) {
  // The strict device is bit-exact everywhere; the fusing model passes once single rounding holds
  // for all kernels (it only differs at unbarriered narrowings, which the bound covers).
  policy::Registry none, all;
  ASSERT_TRUE(all.accept_single_rounding(policy::Scope::all_kernels(), "every example"));
  InterpDevice strict = test::strict_device(none);
  InterpDevice model = test::model_device(all);
  // The basic examples and one workload on generated inputs; the other workloads need shaped
  // inputs (tests/examples/workloads_test.cpp covers them).
  std::vector<ir::VerifiedKernel> kernels = examples::basic();
  kernels.push_back(examples::gemv_fp8<e4m3>());
  for (const ir::VerifiedKernel& k : kernels) {
    for (auto kind : {inputs::Kind::Random, inputs::Kind::Ties, inputs::Kind::Edges}) {
      SCOPED_TRACE(k.name() + " with " + std::string(inputs::name(kind)) + " inputs");
      std::map<std::string, uint64_t> scalars;
      if (k->find_param("cols") != ir::kNone)
        scalars["cols"] = 4; // gemv: one word per row
      auto in = inputs::make_inputs(k.kernel(), 1024, kind, 3, scalars);
      EXPECT_MATCHES_INTERPRETER_WITH(k, strict, in, with(none));
      EXPECT_MATCHES_INTERPRETER_WITH(k, model, in, with(all));
    }
  }
}

TEST(Checker, ShiftedModelFailsEvenWithTheOptIn) {
  policy::Registry registry;
  accept_single_rounding(registry);
  InterpDevice shifted("shifted", interp::NarrowingModel::SingleRounding, registry, {},
                       test::shift_one_ulp(7));
  auto in = tie_inputs();
  Report r = run(examples::narrow_f16(), shifted, in.grid, in.args, with(registry));
  EXPECT_FALSE(r.ok());
  const BufferReport& b = r.buffers.at(0);
  EXPECT_GT(b.violations, kN / 7 / 4);
  EXPECT_LE(b.violations, kN / 7 + 1);
  for (const Violation& v : b.first_violations) {
    EXPECT_EQ(v.index % 7, 0u) << "only shifted elements can be wrong";
    EXPECT_EQ(v.bound.kind, Bound::Kind::SingleRounding);
  }
}

TEST(Checker, OptInForAnotherKernelDoesNotCover) {
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("saxpy"), "not this one"));
  InterpDevice model = test::model_device(registry);
  auto in = tie_inputs();
  EXPECT_FALSE(run(examples::narrow_f16(), model, in.grid, in.args, with(registry)).ok());
}

TEST(Checker, FlushingDevices) {
  // Products in f16's subnormal range (2^-20 to 2^-16), some of them f16 ties.
  policy::Registry registry;
  num::FloatControls flush;
  flush.flush_f16 = true;
  auto k = examples::narrow_f16();
  inputs::KernelInputs in = inputs::make_inputs(k.kernel(), 4096, inputs::Kind::Zeros, 0);
  inputs::MulAdd m = inputs::product_ties(4096, ScalarType::F16, 5, {-22, -16});
  *in.args[0].buffer = std::move(m.a);
  *in.args[1].buffer = std::move(m.b);
  *in.args[2].buffer = std::move(m.c);

  // Computes with flushing and says so: bit-exact against a reference with the same controls.
  InterpDevice flushing("flushing", interp::NarrowingModel::TwoStep, registry, flush);
  EXPECT_MATCHES_INTERPRETER_WITH(k, flushing, in, with(registry));

  // Flushes only its f16 stores (which SPIR-V allows) and says it flushes f16: accepted.
  auto flush_stores = [](const ir::Kernel&, std::span<const rt::Arg> args) {
    num::FloatControls c;
    c.flush_f16 = true;
    rt::HostBuffer& out = *args[3].buffer;
    for (size_t i = 0; i < out.size(); ++i)
      out.set_bits(i, num::apply_flush(num::Format::F16, out.get_bits(i), c));
  };
  InterpDevice stores("stores", interp::NarrowingModel::TwoStep, registry, {}, flush_stores, flush);
  Report r = run(k, stores, in.grid, in.args, with(registry));
  EXPECT_TRUE(r.ok()) << to_text(r);
  EXPECT_FALSE(r.buffers[0].exact == 0);

  // The same device saying it preserves denormals: its zeros are caught.
  InterpDevice silent("silent", interp::NarrowingModel::TwoStep, registry, {}, flush_stores);
  Report caught = run(k, silent, in.grid, in.args, with(registry));
  EXPECT_GT(caught.violations(), 4096u / 2) << to_text(caught);
}

TEST(Checker, AnyNanMatchesAnyNan) {
  policy::Registry registry;
  auto k = examples::narrow_f16();
  inputs::MulAdd e = inputs::edge_triples(ScalarType::F16);
  inputs::KernelInputs in = inputs::make_inputs(k.kernel(), e.a.size(), inputs::Kind::Zeros, 0);
  *in.args[0].buffer = e.a.clone();
  *in.args[1].buffer = e.b.clone();
  *in.args[2].buffer = e.c.clone();
  // Another NaN: sign set, a payload.
  InterpDevice payload("payload", interp::NarrowingModel::TwoStep, registry, {},
                       [](const ir::Kernel&, std::span<const rt::Arg> args) {
                         rt::HostBuffer& out = *args[3].buffer;
                         for (size_t i = 0; i < out.size(); ++i)
                           if (num::is_nan(num::Format::F16, out.get_bits(i)))
                             out.set_bits(i, 0xfd01);
                       });
  Report ok = run(k, payload, in.grid, in.args, with(registry));
  EXPECT_TRUE(ok.ok()) << to_text(ok);
  // A NaN where the reference has a number: a violation of UINT64_MAX ulps.
  InterpDevice nan_everywhere("nan", interp::NarrowingModel::TwoStep, registry, {},
                              [](const ir::Kernel&, std::span<const rt::Arg> args) {
                                args[3].buffer->set_bits(0, 0x7e00);
                              });
  Report bad = run(k, nan_everywhere, in.grid, in.args, with(registry));
  ASSERT_EQ(bad.violations(), 1u) << to_text(bad);
  EXPECT_EQ(bad.buffers[0].max_ulps, 0u);
  EXPECT_EQ(bad.buffers[0].nan_mismatches, 1u);
  EXPECT_EQ(bad.buffers[0].first_violations.at(0).ulps, UINT64_MAX);
}

TEST(Checker, InputsAreNeverWritten) {
  policy::Registry registry;
  InterpDevice model = test::model_device(registry);
  auto in = tie_inputs();
  rt::HostBuffer out_before = in.args[3].buffer->clone(), a_before = in.args[0].buffer->clone();
  (void)run(examples::narrow_f16(), model, in.grid, in.args, with(registry));
  EXPECT_TRUE(*in.args[3].buffer == out_before);
  EXPECT_TRUE(*in.args[0].buffer == a_before);
}

TEST(Checker, DeviceOnAnotherRegistryIsNoted) {
  policy::Registry checker, device_registry;
  ASSERT_TRUE(device_registry.accept_single_rounding(policy::Scope::all_kernels(), "device side"));
  InterpDevice strict = test::strict_device(device_registry);
  auto in = tie_inputs();
  Report r = run(examples::narrow_f16(), strict, in.grid, in.args, with(checker));
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("another budget"), std::string::npos);
}

TEST(Checker, NarrowedValueThroughALocalIsNotedAndComparedBitExact) {
  auto k =
      kernel("through_local", {64}, {"a", "b", "out"}, [](In<float> a, In<float> b, Out<f16> out) {
        Var i(global_id(0), "i");
        If(i < out.size(), [&] {
          Var h(narrow<f16>(a[i] * b[i]), "h");
          out[i] = h;
        });
      });
  policy::Registry registry;
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("through_local"), "test"));
  InterpDevice model = test::model_device(registry);
  inputs::KernelInputs in = inputs::make_inputs(k.kernel(), 4096, inputs::Kind::Ties, 3);
  Report r = run(k, model, in.grid, in.args, with(registry));
  bool noted = false;
  for (const std::string& n : r.notes)
    noted |= n.find("does not store its value directly") != std::string::npos;
  EXPECT_TRUE(noted) << to_text(r);
  EXPECT_FALSE(r.ok());
}

// Under relaxed accumulation, an element stored from an accumulation local is judged against the
// §5 bound (a one-ulp nudge of a four-term dot product is well inside it); an element stored from
// further arithmetic on the local has no accumulation record and stays unchecked.
TEST(Checker, RelaxedAccumulationBoundsStoredSumsLeavesTheRestUnchecked) {
  auto dot4 = [](const std::string& name, bool scaled) {
    return kernel(name, {64}, {"a", "b", "out"},
                  [scaled](In<float> a, In<float> b, Out<float> out) {
                    Var i(global_id(0), "i");
                    If(i < out.size(), [&] {
                      Var acc(0.0f, "acc");
                      Var base(i * 4u, "base");
                      For(base, base + 4u, 1u, [&](auto j) { acc = acc + a[j] * b[j]; });
                      if (scaled)
                        out[i] = acc * 1.0f;
                      else
                        out[i] = acc;
                    });
                  });
  };
  auto nudge = [](const ir::Kernel&, std::span<const rt::Arg> args) {
    rt::HostBuffer& out = *args[2].buffer;
    for (size_t i = 0; i < out.size(); i += 3)
      out.set_bits(i, out.get_bits(i) ^ 1);
  };
  const size_t n = 256;
  rt::HostBuffer a(ScalarType::F32, 4 * n), b(ScalarType::F32, 4 * n), out(ScalarType::F32, n);
  inputs::fill_random(a, 1);
  inputs::fill_random(b, 2);
  for (bool scaled : {false, true}) {
    const std::string name = scaled ? "dot4_scaled" : "dot4";
    auto k = dot4(name, scaled);
    ASSERT_FALSE(ir::accumulations(k.kernel()).empty());
    Launch l{rt::Grid::for_lanes(k.kernel(), n),
             {rt::Arg::of(a), rt::Arg::of(b), rt::Arg::of(out)}};
    policy::Registry strict_policy, relaxed_policy;
    ASSERT_TRUE(relaxed_policy.accept_relaxed_accumulation(policy::Scope::kernel(name), "sums"));
    InterpDevice reassociating("reassoc", interp::NarrowingModel::TwoStep, relaxed_policy, {},
                               nudge);
    Report relaxed = run(k, reassociating, l.grid, l.args, with(relaxed_policy));
    // Unchecked elements make the comparison inconclusive: never OK unless the caller allows
    // that many of them.
    EXPECT_EQ(relaxed.ok(), !scaled) << to_text(relaxed);
    EXPECT_EQ(relaxed.inconclusive.size(), scaled ? 1u : 0u) << to_text(relaxed);
    Options allowing = with(relaxed_policy);
    allowing.max_unchecked = (n + 2) / 3;
    EXPECT_TRUE(run(k, reassociating, l.grid, l.args, allowing).ok()) << name;
    EXPECT_EQ(relaxed.buffers[0].unchecked, scaled ? (n + 2) / 3 : 0) << name;
    EXPECT_EQ(relaxed.buffers[0].within_bound, scaled ? 0 : (n + 2) / 3) << name;
    EXPECT_FALSE(relaxed.notes.empty());
    Report strict = run(k, reassociating, l.grid, l.args, with(strict_policy));
    EXPECT_EQ(strict.violations(), (n + 2) / 3);
  }
}

// EXPECT_NONFATAL_FAILURE's statement cannot use locals: the device and inputs live here.
policy::Registry* g_registry = nullptr;
InterpDevice* g_model = nullptr;
inputs::KernelInputs* g_inputs = nullptr;

TEST(Checker, GtestHelperPrintsTheReport) {
  policy::Registry registry;
  InterpDevice model = test::model_device(registry);
  auto in = tie_inputs();
  g_registry = &registry;
  g_model = &model;
  g_inputs = &in;
  EXPECT_NONFATAL_FAILURE(EXPECT_MATCHES_INTERPRETER_WITH(examples::narrow_f16(), *g_model,
                                                          *g_inputs, with(*g_registry)),
                          "does not match the interpreter");
  EXPECT_NONFATAL_FAILURE(EXPECT_MATCHES_INTERPRETER_WITH(examples::narrow_f16(), *g_model,
                                                          *g_inputs, with(*g_registry)),
                          "result: FAILED");
}

} // namespace

TEST(Checker, TheReferenceRunHonoursTheLaunchTimeout) {
  // An endless loop in the reference run ends at the launch's deadline with a Timeout error.
  auto k = kernel("endless", {64}, {"y"}, [](Out<uint32_t> y) {
    Var n(0u, "n");
    While([&] { return n < 1u || n >= 1u; }, [&] { n = n + 1u; });
    y[global_id(0)] = n;
  });
  policy::Registry registry;
  InterpDevice strict = test::strict_device(registry);
  rt::HostBuffer y(ScalarType::U32, 64);
  std::vector<rt::Arg> args{rt::Arg::of(y)};
  Options o = with(registry);
  o.launch.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  try {
    run(k, strict, rt::Grid{{1, 1, 1}}, args, o);
    FAIL() << "no timeout";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Timeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("endless"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_EQ(y.get_bits(0), 0u);
}

TEST(Compare, InlineComparisonAgreesWithSameBitsAndDistance) {
  // The comparison loop's inline equality and distance (elements.hpp ElementCompare) against
  // same_bits and distance, under the default controls (the inline path) and three others (the
  // generic one): every pair of 8-bit patterns, every 16-bit pattern against a set of edges and
  // random patterns under the default controls (edges only under the others), and pairs of such
  // sets for the wider types.
  auto edges = [](ScalarType t) {
    std::vector<uint64_t> v;
    const uint64_t bits = ir::info(t).bits;
    const uint64_t top = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    if (const auto f = float_format(t)) {
      const num::FormatInfo& i = num::info(*f);
      for (uint64_t s : {uint64_t{0}, i.sign_mask})
        for (uint64_t m :
             {uint64_t{0}, uint64_t{1}, uint64_t{2}, i.exp_mask >> 1, i.exp_mask - 1, i.exp_mask,
              i.exp_mask + 1, i.max_finite, i.max_finite - 1, i.quiet_nan, i.sign_mask - 1})
          v.push_back(s | (m & (i.sign_mask - 1)));
    }
    for (uint64_t x : {uint64_t{0}, uint64_t{1}, top, top - 1, top >> 1, (top >> 1) + 1})
      v.push_back(x);
    uint64_t state = 0x9e3779b97f4a7c15u;
    for (int k = 0; k < 40; ++k) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      v.push_back((state ^ (state >> 29)) & top);
    }
    return v;
  };
  num::FloatControls flush16, flush32, loose;
  flush16.flush_f16 = true;
  flush32.flush_f32 = flush32.flush_f64 = true;
  loose.preserve_signed_zero_inf_nan = false;
  const std::array<num::FloatControls, 4> controls = {num::FloatControls{}, flush16, flush32,
                                                      loose};
  size_t pairs = 0;
  for (ScalarType t :
       {ScalarType::E4M3, ScalarType::E5M2, ScalarType::F16, ScalarType::BF16, ScalarType::F32,
        ScalarType::F64, ScalarType::U8, ScalarType::I16, ScalarType::I32, ScalarType::U64})
    for (const num::FloatControls& c : controls) {
      const diff::detail::ElementCompare compare(t, c);
      const uint64_t bits = ir::info(t).bits;
      std::vector<uint64_t> left = edges(t), right = left;
      const bool inline_path = &c == &controls[0];
      if (bits == 8 || (bits == 16 && inline_path)) {
        left.clear();
        for (uint64_t x = 0; x < (uint64_t{1} << bits); ++x)
          left.push_back(x);
        if (bits == 8)
          right = left;
      }
      for (uint64_t a : left)
        for (uint64_t b : right) {
          ASSERT_EQ(compare.same(a, b), same_bits(t, a, b, c))
              << ir::name(t) << " " << a << " " << b;
          ASSERT_EQ(compare.distance(a, b), distance(t, a, b, c))
              << ir::name(t) << " " << a << " " << b;
          ++pairs;
        }
    }
  EXPECT_GT(pairs, size_t{8} << 20);
}
