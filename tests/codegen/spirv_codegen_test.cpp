// The SPIR-V backend through its API: every example (and a matrix of generated kernels covering
// every op, type and conversion) produces a module the SPIRV-Tools validator accepts under every
// budget and target; the interface, push constants, check sites and device needs the runtime reads;
// what changes with a target other than the one the CLI emits for (RADV's opaque identity, float
// controls a driver lacks). The structure of the modules `halfway emit --spirv` prints
// (NoContraction under each budget, float controls, capabilities, bounds checks, barriers,
// refusals) is checked as text in tests/lit/spirv/. Numerics on a device are in tests/vulkan/.

#include "examples.hpp"
#include "halfway/codegen/spirv/codegen.hpp"
#include "halfway/codegen/spirv/drivers.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/support/error.hpp"
#include "kernel_builder.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <gtest/gtest.h>
#include <optional>
#include <set>

namespace halfway::codegen::spirv {
namespace {

using ir::ScalarType;

// How often `needle` occurs in the disassembly of `s`.
size_t occurrences(const Shader& s, const std::string& needle) {
  std::string text = disassemble(s.words);
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}
size_t no_contractions(const Shader& s) {
  return occurrences(s, " NoContraction\n");
}

Options validating() {
  Options o;
  o.validate = true;
  return o;
}

Target radv() {
  Target t = Target::lavapipe();
  t.device = "AMD Radeon (RADV)";
  t.driver_id = 3; // VK_DRIVER_ID_MESA_RADV
  return t;
}

policy::Budget single_rounding() {
  return {.single_rounding = "test", .relaxed_accumulation = {}};
}
policy::Budget relaxed() {
  return {.single_rounding = {}, .relaxed_accumulation = "test"};
}

const ir::VerifiedKernel& example(const std::string& name) {
  static const std::vector<ir::VerifiedKernel> all = examples::all();
  for (const auto& k : all)
    if (k.name() == name)
      return k;
  throw std::runtime_error("no example " + name);
}

// ---- every example ----------------------------------------------------------------------------

TEST(SpirvCodegen, EveryExampleValidatesUnderEveryBudgetAndTarget) {
  std::vector<policy::Budget> budgets{
      {}, single_rounding(), relaxed(), {.single_rounding = "a", .relaxed_accumulation = "b"}};
  std::vector<Target> targets{Target::lavapipe(), Target::generic(), radv()};
  targets[1].f16.rounding_mode_rte = false; // forces the integer narrowing path
  for (const auto& k : examples::all())
    for (const auto& budget : budgets)
      for (const auto& target : targets) {
        Shader s;
        ASSERT_NO_THROW(s = generate(k, budget, target, validating())) << k.name();
        EXPECT_EQ(validate(s.words), "") << k.name();
        EXPECT_EQ(s.kernel, k.name());
        EXPECT_EQ(s.budget, budget);
      }
}

TEST(SpirvCodegen, InterfaceFollowsTheParameters) {
  Shader s = generate(example("saxpy"), {});
  ASSERT_EQ(s.bindings.size(), 2u); // x, y; a is a push constant
  EXPECT_EQ(s.bindings[0].param, 0u);
  EXPECT_EQ(s.bindings[0].binding, 0u);
  EXPECT_EQ(s.bindings[1].param, 1u);
  EXPECT_EQ(s.bindings[1].binding, 1u);
  std::set<PushSlot> slots;
  for (const PushEntry& p : s.push) {
    slots.insert(p.slot);
    EXPECT_EQ(p.offset % p.size, 0u);
    EXPECT_LE(p.offset + p.size, s.push_bytes);
  }
  EXPECT_TRUE(slots.count(PushSlot::GroupsX));
  EXPECT_TRUE(slots.count(PushSlot::FoldX));
  // The control buffer follows the parameters. The launch form only raises a flag on a fault;
  // the reporting form names the linear workgroup, which needs the y and z coordinates.
  ASSERT_TRUE(s.control_binding.has_value());
  EXPECT_EQ(*s.control_binding, 2u);
  EXPECT_FALSE(slots.count(PushSlot::Folded)); // saxpy uses dimension 0 only
  EXPECT_TRUE(slots.count(PushSlot::Scalar));
  EXPECT_TRUE(slots.count(PushSlot::BufferLength));
  EXPECT_FALSE(slots.count(PushSlot::Zero)); // no opaque identity on lavapipe
  {
    Options report;
    report.report_faults = true;
    Shader r = generate(example("saxpy"), {}, Target::lavapipe(), report);
    std::set<PushSlot> used;
    for (const PushEntry& p : r.push)
      used.insert(p.slot);
    EXPECT_TRUE(used.count(PushSlot::Folded));
    EXPECT_EQ(r.sites.size(), s.sites.size());
    Options unchecked;
    unchecked.checks = false;
    Shader u = generate(example("saxpy"), {}, Target::lavapipe(), unchecked);
    EXPECT_FALSE(u.control_binding.has_value());
  }
}

TEST(SpirvCodegen, PushConstantsEncodeScalarsAndGrid) {
  const auto& k = example("saxpy");
  Shader s = generate(k, {});
  std::vector<std::byte> block(s.push_bytes);
  std::vector<uint64_t> scalars{0, 0, std::bit_cast<uint32_t>(2.5f)};
  std::vector<uint64_t> lengths{1000, 1000, 0};
  Dispatch plan = plan_dispatch({70000, 1, 1}, {65535, 65535, 65535}, "saxpy");
  EXPECT_EQ(plan.physical, (std::array<uint32_t, 3>{35000, 2, 1}));
  EXPECT_EQ(plan.fold_x, 35000u);
  write_push_constants(s, k.kernel(), scalars, lengths, {70000, 1, 1}, plan, block);
  for (const PushEntry& p : s.push) {
    uint32_t v = 0;
    std::memcpy(&v, block.data() + p.offset, 4);
    if (p.slot == PushSlot::GroupsX) {
      EXPECT_EQ(v, 70000u);
    } else if (p.slot == PushSlot::FoldX) {
      EXPECT_EQ(v, 35000u);
    } else if (p.slot == PushSlot::BufferLength) {
      EXPECT_EQ(v, 1000u);
    } else if (p.slot == PushSlot::Scalar) {
      EXPECT_EQ(v, std::bit_cast<uint32_t>(2.5f));
    }
  }
  // A grid that fits is dispatched as it is; multi-dimensional grids fold only x, with z == 1.
  Dispatch direct = plan_dispatch({300, 200, 3}, {65535, 65535, 65535}, "k");
  EXPECT_EQ(direct.physical, (std::array<uint32_t, 3>{300, 200, 3}));
  EXPECT_EQ(direct.fold_x, 0u);
  Dispatch folded = plan_dispatch({100000, 7, 1}, {65535, 65535, 65535}, "k");
  EXPECT_EQ(folded.physical, (std::array<uint32_t, 3>{50000, 2, 7}));
  EXPECT_THROW(plan_dispatch({100000, 7, 2}, {65535, 65535, 65535}, "k"), Error);
  EXPECT_EQ(push_scalar_bits(ScalarType::F16, 0x3c00), std::bit_cast<uint32_t>(1.0f));
  EXPECT_EQ(push_scalar_bits(ScalarType::BF16, 0xc000), std::bit_cast<uint32_t>(-2.0f));
  EXPECT_EQ(push_scalar_bits(ScalarType::I8, 0xff), 0xffffffffu);
  EXPECT_EQ(push_scalar_bits(ScalarType::U16, 0xffff), 0xffffu);
}

// ---- NoContraction ----------------------------------------------------------------------------

// The Shader's own count (which the runtime logs) agrees with the module, under every budget.
TEST(SpirvCodegen, NoContractionCountMatchesTheModule) {
  for (const auto& k : examples::all())
    for (const auto& budget : {policy::Budget{}, single_rounding(), relaxed()}) {
      Shader s = generate(k, budget);
      EXPECT_EQ(s.no_contraction, no_contractions(s)) << k.name();
    }
}

TEST(SpirvCodegen, BudgetFromARegistryOptIn) {
  policy::Registry registry;
  const auto& k = example("narrow_f16");
  EXPECT_EQ(no_contractions(generate(k, registry.budget(k.name()))), 2u);
  ASSERT_TRUE(
      registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"), "accuracy is fine")
          .ok());
  policy::Budget budget = registry.budget(k.name());
  Shader s = generate(k, budget);
  EXPECT_EQ(no_contractions(s), 0u);
  EXPECT_EQ(s.budget.single_rounding, std::optional<std::string>("accuracy is fine"));
  // Another kernel is not covered.
  EXPECT_EQ(no_contractions(generate(example("linear<f64>"), registry.budget("linear<f64>"))), 2u);
}

// ---- float controls ---------------------------------------------------------------------------

TEST(SpirvCodegen, FloatControlsFollowTheTarget) {
  Target t = Target::generic();
  t.f32.denorm_preserve = true;
  t.f16.rounding_mode_rte = false;
  Shader s = generate(example("narrow_f16"), {}, t, validating());
  EXPECT_EQ(occurrences(s, "OpCapability DenormPreserve\n"), 1u);
  EXPECT_EQ(occurrences(s, "OpExecutionMode %main DenormPreserve 32\n"), 1u);
  EXPECT_EQ(occurrences(s, "RoundingModeRTE 16\n"), 0u);
  EXPECT_EQ(occurrences(s, "OpCapability SignedZeroInfNanPreserve\n"), 0u);
  // Without RTE for f16 the narrowing is rounded by integer code: the only f32->f16 OpFConvert left
  // converts an exact value for the store.
  EXPECT_GT(occurrences(s, " = OpShiftRightLogical "), 0u);
}

// ---- the opaque identity ----------------------------------------------------------------------

TEST(SpirvCodegen, OpaqueIdentityOnlyForDriversInTheTable) {
  const auto& k = example("narrow_f16");
  Shader lava = generate(k, {}, Target::lavapipe(), validating());
  EXPECT_EQ(lava.opaque_identities, 0u);
  EXPECT_EQ(occurrences(lava, " = OpBitwiseXor "), 0u);

  Shader amd = generate(k, {}, radv(), validating());
  EXPECT_EQ(amd.opaque_identities, 1u);
  EXPECT_EQ(occurrences(amd, " = OpBitwiseXor "), 1u);
  EXPECT_EQ(no_contractions(amd), 2u); // NoContraction stays on the producers as well
  bool zero_slot = std::any_of(amd.push.begin(), amd.push.end(),
                               [](const PushEntry& p) { return p.slot == PushSlot::Zero; });
  EXPECT_TRUE(zero_slot);
  std::string text = disassemble(amd.words);
  // bitcast -> xor -> bitcast -> OpFConvert to half
  auto xor_at = text.find("OpBitwiseXor");
  ASSERT_NE(xor_at, std::string::npos);
  EXPECT_NE(text.find("OpFConvert %half", xor_at), std::string::npos) << text;

  // The opt-in lifts it, and the f64 narrowing gets it too.
  EXPECT_EQ(generate(k, single_rounding(), radv()).opaque_identities, 0u);
  EXPECT_EQ(generate(example("linear<f64>"), {}, radv(), validating()).opaque_identities, 1u);
  // Kernels without barriered narrowings never get it.
  for (const char* name : {"saxpy", "linear<f16>", "reduce_sum", "gemv_fp8<e4m3>"})
    EXPECT_EQ(generate(example(name), {}, radv()).opaque_identities, 0u) << name;
  // An explicit override wins over the table.
  Target forced = Target::lavapipe();
  forced.opaque_identity = true;
  EXPECT_EQ(generate(k, {}, forced).opaque_identities, 1u);
}

TEST(SpirvCodegen, OpaqueIdentitySkipsNarrowingsProvenInnocuous) {
  // narrow<f16>(widen(h1) * widen(h2)): Figueroa, no barrier needed.
  KernelBuilder b("figueroa");
  uint32_t h = b.buffer("h", ScalarType::F16, ir::Access::Read);
  uint32_t o = b.buffer("o", ScalarType::F16, ir::Access::Write);
  ir::ExprId i = b.gid();
  ir::ExprId p =
      b.node(ir::Op::Mul, ScalarType::F32,
             {b.convert(ScalarType::F32, b.load(h, i)), b.convert(ScalarType::F32, b.load(h, i))});
  b.store(o, i, b.convert(ScalarType::F16, p));
  auto k = b.done();
  ASSERT_FALSE(ir::narrowing_sites(k.kernel()).at(0).needs_barrier());
  Shader s = generate(k, {}, radv(), validating());
  EXPECT_EQ(s.opaque_identities, 0u);
  EXPECT_EQ(no_contractions(s), 1u); // strict still decorates the product
}

TEST(SpirvCodegen, DriverTable) {
  EXPECT_TRUE(driver_needs_opaque_identity(3));   // RADV, measured fusing
  EXPECT_FALSE(driver_needs_opaque_identity(13)); // llvmpipe, measured not fusing
  EXPECT_FALSE(driver_needs_opaque_identity(0));  // unknown
  for (const DriverFusion& row : driver_fusion_table()) {
    EXPECT_NE(std::string(row.name), "");
    EXPECT_NE(std::string(row.evidence), "");
  }
  EXPECT_FALSE(Target::lavapipe().uses_opaque_identity());
  EXPECT_TRUE(radv().uses_opaque_identity());
}

// ---- capabilities -----------------------------------------------------------------------------

// What the runtime must enable on the device follows the module's capabilities (which
// tests/lit/spirv/capabilities.hk checks as text).
TEST(SpirvCodegen, NeedsAreMinimal) {
  EXPECT_EQ(generate(example("saxpy"), {}).needs, Needs{});
  // f16 loaded and widened, or narrowed and stored: 16-bit storage only (as glslang does).
  for (const char* name : {"narrow_f16", "linear<f16>", "linear<bf16>"}) {
    Shader s = generate(example(name), {});
    EXPECT_TRUE(s.needs.storage_buffer_16bit_access) << name;
    EXPECT_FALSE(s.needs.shader_float16) << name;
  }
  EXPECT_TRUE(generate(example("linear<f64>"), {}).needs.shader_float64);
  // fp8 packed in u32 words: nothing beyond Shader and float controls.
  EXPECT_EQ(generate(example("gemv_fp8<e4m3>"), {}).needs, Needs{});

  // f16 arithmetic needs Float16.
  KernelBuilder b("half_math");
  uint32_t h = b.buffer("h", ScalarType::F16, ir::Access::Read);
  uint32_t o = b.buffer("o", ScalarType::F16, ir::Access::Write);
  ir::ExprId i = b.gid();
  b.store(o, i, b.node(ir::Op::Mul, ScalarType::F16, {b.load(h, i), b.load(h, i)}));
  Shader half = generate(b.done(), {}, Target::lavapipe(), validating());
  EXPECT_TRUE(half.needs.shader_float16);
}

// ---- control flow, atomics, shared memory, sub-32-bit locals --------------------------------

TEST(SpirvCodegen, ControlFlowAtomicsAndSharedMemoryValidate) {
  auto k = kernel("control", {32, 2, 1}, {"x", "h", "w", "count", "big", "out", "n"},
                  [](In<float> x, In<f16> h, In<uint32_t> w, InOut<uint32_t> count,
                     InOut<uint64_t> big, Out<float> out, Scalar<uint32_t> n) {
                    Shared<int32_t> tile("tile", 100);
                    Shared<uint64_t> wide("wide", 8);
                    Var i(global_id(0), "i");
                    Var acc(0.0f, "acc");
                    Var half_acc(h[0u], "half_acc");        // an f16 local: held as f32
                    Var fp8(unpack<e4m3>(w[0u], 2), "fp8"); // an fp8 local: held as bits
                    tile[local_id(0)] = 1;
                    Barrier();
                    For(0u, n, [&](Value<uint32_t> j) {
                      If(j == 3u, [&] { Continue(); });
                      If(x[j] < 0.0f, [&] { Break(); });
                      acc = acc + x[j];
                      While([&] { return acc > 100.0f; },
                            [&] {
                              acc = acc * 0.5f;
                              If(acc < 1.0f, [&] { Return(); });
                            });
                    });
                    half_acc = narrow<f16>(to_f32(half_acc) + acc);
                    Var old(atomic_add(count[0u], 1u), "old");
                    atomic_max(big[0u], uint64_t{7});
                    atomic_compare_exchange(count[1u], old, 5u);
                    If(i < out.size(), [&] {
                      out[i] =
                          acc + to_f32(half_acc) + to_f32(fp8) + convert<float>(tile[local_id(0)]);
                    }).Else([&] { Return(); });
                    atomic_add(wide[0u], uint64_t{1});
                  });
  Shader s;
  ASSERT_NO_THROW(s = generate(k, {}, Target::lavapipe(), validating()));
  // The module's structure (loops, barriers, atomics, NoContraction) is checked as text in
  // tests/lit/spirv/control-flow.hk; here, what the runtime must enable.
  EXPECT_TRUE(s.needs.shader_buffer_int64_atomics);
  EXPECT_TRUE(s.needs.shader_shared_int64_atomics);
  EXPECT_FALSE(s.needs.shader_float16); // f16 only loaded, narrowed and held in an f32 local
}

// ---- coverage matrices ------------------------------------------------------------------------

const ScalarType kValueTypes[] = {
    ScalarType::I8,  ScalarType::U8,  ScalarType::I16,  ScalarType::U16, ScalarType::I32,
    ScalarType::U32, ScalarType::I64, ScalarType::U64,  ScalarType::F16, ScalarType::BF16,
    ScalarType::F32, ScalarType::F64, ScalarType::E4M3, ScalarType::E5M2};

TEST(SpirvCodegen, EveryConversionInEveryRoundingModeValidates) {
  const ir::RoundingMode modes[] = {ir::RoundingMode::NearestEven, ir::RoundingMode::TowardZero,
                                    ir::RoundingMode::Up, ir::RoundingMode::Down};
  std::vector<Target> targets{Target::lavapipe(), radv()};
  targets.push_back(Target::generic());
  targets.back().f16.rounding_mode_rte = false;
  int generated = 0;
  for (ScalarType from : kValueTypes)
    for (ScalarType to : kValueTypes) {
      if (from == to)
        continue;
      for (ir::RoundingMode mode : modes)
        for (bool sat : {false, true}) {
          if (sat && to != ScalarType::E4M3)
            continue;
          KernelBuilder b("convert");
          uint32_t in = b.buffer("in", from, ir::Access::Read);
          uint32_t out = b.buffer("out", to, ir::Access::Write);
          ir::ExprId i = b.gid();
          // Through a local as well, so the canonical forms are exercised.
          ir::Stmt let;
          let.kind = ir::StmtKind::Let;
          b.k.locals.push_back({"v", to});
          let.local = 0;
          let.a = b.convert(to, b.load(in, i), mode, sat);
          b.k.body.push_back(let);
          ir::Expr get;
          get.op = ir::Op::LocalGet;
          get.type = to;
          get.ref = 0;
          b.store(out, i, b.k.add(get));
          ir::VerifiedKernel k = b.done();
          for (const Target& t : targets) {
            try {
              Shader s = generate(k, {}, t, validating());
              ++generated;
            } catch (const Error& e) {
              // Only the documented refusal may happen.
              EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
              EXPECT_TRUE(ir::is_int(from) && (to == ScalarType::F32 || to == ScalarType::F64) &&
                          mode != ir::RoundingMode::NearestEven)
                  << name(from) << " -> " << name(to) << ": " << e.what();
            }
          }
        }
    }
  EXPECT_GT(generated, 1000);
}

TEST(SpirvCodegen, EveryOpOnEveryTypeValidates) {
  int generated = 0;
  for (size_t o = 0; o < ir::kOpCount; ++o) {
    ir::Op op = static_cast<ir::Op>(o);
    const ir::OpInfo& info = ir::info(op);
    if (info.rule == ir::TypeRule::Leaf || info.rule == ir::TypeRule::Convert ||
        info.rule == ir::TypeRule::Pack || info.rule == ir::TypeRule::Unpack ||
        info.rule == ir::TypeRule::Bitcast)
      continue;
    for (ScalarType t : kValueTypes) {
      KernelBuilder b("op");
      uint32_t x = b.buffer("x", t, ir::Access::Read);
      ir::ExprId i = b.gid();
      std::array<ir::ExprId, 3> args{};
      for (int a = 0; a < 3; ++a)
        args[a] =
            b.load(x, b.node(ir::Op::Add, ScalarType::U32, {i, b.constant(ScalarType::U32, a)}));
      ir::ExprId value = ir::kNone;
      ScalarType result = t;
      int arity = info.arity;
      if (info.rule == ir::TypeRule::Compare)
        result = ScalarType::Bool;
      if (info.rule == ir::TypeRule::Select) {
        ir::ExprId c = b.node(ir::Op::Lt, ScalarType::Bool, {i, b.constant(ScalarType::U32, 7)});
        value = b.node(op, t, {c, args[0], args[1]});
      } else if (info.rule == ir::TypeRule::Shift) {
        uint64_t bits = ir::info(t).bits;
        value = b.node(op, t, {args[0], b.constant(t, bits - 1)});
      } else if (arity == 1) {
        value = b.node(op, result, {args[0]});
      } else if (arity == 2) {
        value = b.node(op, result, {args[0], args[1]});
      } else {
        value = b.node(op, result, {args[0], args[1], args[2]});
      }
      uint32_t out =
          b.buffer("out", result == ScalarType::Bool ? ScalarType::U32 : result, ir::Access::Write);
      if (result == ScalarType::Bool)
        value = b.node(ir::Op::Select, ScalarType::U32,
                       {value, b.constant(ScalarType::U32, 1), b.constant(ScalarType::U32, 0)});
      b.store(out, i, value);
      std::optional<ir::VerifiedKernel> k;
      try {
        k = b.done();
      } catch (const Error&) {
        continue; // not a valid op/type combination
      }
      try {
        generate(*k, {}, Target::lavapipe(), validating());
        generate(*k, single_rounding(), Target::generic(), validating());
        ++generated;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
        bool documented =
            op == ir::Op::Erf || (op == ir::Op::Fma && t == ScalarType::BF16) ||
            (t == ScalarType::F64 && std::string(e.message()).find("on f64") != std::string::npos);
        EXPECT_TRUE(documented) << name(op) << " on " << name(t) << ": " << e.what();
      }
    }
  }
  EXPECT_GT(generated, 250);
}

// ---- memory safety ------------------------------------------------------------------------------

size_t count_kind(const Shader& s, ErrorKind kind) {
  return static_cast<size_t>(std::count_if(s.sites.begin(), s.sites.end(),
                                           [&](const CheckSite& c) { return c.kind == kind; }));
}

// Every access kind, space and index width is checked, and the module still validates; the
// unchecked form (the benchmark's baseline) has no sites and no control buffer.
TEST(SpirvCodegen, ChecksCoverEveryAccessAndValidate) {
  auto k = kernel(
      "checked", {64}, {"h", "b", "q", "w", "big", "out"},
      [](In<f16> h, In<bf16> b, In<e4m3> q, InOut<uint32_t> w, InOut<int64_t> big, Out<float> out) {
        Shared<float> tile("tile", 32);
        Shared<uint32_t> bins("bins", 16);
        Var i(global_id(0), "i");
        Var j(convert<int32_t>(i) - 3, "j");
        Var wide(convert<uint64_t>(i) + uint64_t{1}, "wide");
        tile[i] = to_f32(h[j]) + to_f32(b[wide]);
        Barrier();
        atomic_add(bins[i], 1u);
        atomic_max(big[j], int64_t{5});
        Var old(atomic_add(w[wide], 2u), "old");
        out[i] = tile[j] + to_f32(q[i]) + convert<float>(old + bins[wide]);
      });
  Shader s;
  ASSERT_NO_THROW(s = generate(k, {}, Target::lavapipe(), validating()));
  ASSERT_TRUE(s.control_binding.has_value());
  EXPECT_EQ(*s.control_binding, 6u); // after the six buffers
  // h, b, tile store, bins atomic, big atomic, w atomic, tile load, q, bins load, out store.
  EXPECT_EQ(count_kind(s, ErrorKind::OutOfBounds), 10u);
  EXPECT_EQ(s.lane_bits, 6u);
  std::set<std::string> accesses;
  for (const CheckSite& c : s.sites)
    accesses.insert(c.access);
  EXPECT_EQ(accesses, (std::set<std::string>{"load from", "store to", "atomic on"}));
  EXPECT_FALSE(s.needs.shader_float16); // the checked f16 load still only widens
  Options report = validating();
  report.report_faults = true;
  Shader r;
  ASSERT_NO_THROW(r = generate(k, {}, Target::lavapipe(), report));
  EXPECT_EQ(r.sites.size(), s.sites.size());
  EXPECT_EQ(r.needs, s.needs);

  Options unchecked = validating();
  unchecked.checks = false;
  Shader u;
  ASSERT_NO_THROW(u = generate(k, {}, Target::lavapipe(), unchecked));
  EXPECT_FALSE(u.control_binding.has_value());
  EXPECT_TRUE(u.sites.empty());
  EXPECT_LT(u.words.size(), s.words.size());
}

// --check on Vulkan (Options::check_arith): one site per integer div, rem, shl and shr, naming its
// node, on every integer type (8/16-bit amounts are extended to 32 bits to be recorded), in the
// launch and reporting forms, all valid; without it, none.
TEST(SpirvCodegen, ArithmeticChecksOnEveryIntegerTypeValidate) {
  int generated = 0;
  for (ir::Op op : {ir::Op::Div, ir::Op::Rem, ir::Op::Shl, ir::Op::Shr}) {
    for (ScalarType t : kValueTypes) {
      if (!ir::is_int(t))
        continue;
      SCOPED_TRACE(std::string(ir::name(op)) + " on " + std::string(ir::name(t)));
      KernelBuilder b("arith");
      uint32_t x = b.buffer("x", t, ir::Access::Read);
      uint32_t out = b.buffer("out", t, ir::Access::Write);
      ir::ExprId i = b.gid();
      ir::ExprId value = b.node(op, t, {b.load(x, i), b.load(x, b.constant(ScalarType::U32, 0))});
      b.store(out, i, value);
      ir::VerifiedKernel k = b.done();
      const ErrorKind kind = op == ir::Op::Div || op == ir::Op::Rem ? ErrorKind::DivideByZero
                                                                    : ErrorKind::ShiftOverflow;
      Options o = validating();
      EXPECT_EQ(count_kind(generate(k, {}, Target::lavapipe(), o), kind), 0u);
      o.check_arith = true;
      Shader s = generate(k, {}, Target::lavapipe(), o);
      ASSERT_EQ(count_kind(s, kind), 1u);
      for (const CheckSite& c : s.sites)
        if (c.kind == kind) {
          EXPECT_EQ(c.node, value);
          EXPECT_EQ(c.index_signed, ir::info(t).is_signed);
        }
      o.report_faults = true;
      EXPECT_EQ(count_kind(generate(k, {}, Target::lavapipe(), o), kind), 1u);
      ++generated;
    }
  }
  EXPECT_EQ(generated, 32); // 4 ops on 8 integer types
}

// An index the kernel itself bounds is not checked: saxpy's x[i] under `if lt(i, len(x))`, and
// reduce_sum's tile[lid] with lid = local_id(0) and a tile of the workgroup's size.
TEST(SpirvCodegen, AccessesProvenInBoundsAreNotChecked) {
  Shader saxpy = generate(example("saxpy"), {});
  EXPECT_EQ(saxpy.elided_checks, 1u);                       // x[i]
  EXPECT_EQ(count_kind(saxpy, ErrorKind::OutOfBounds), 2u); // y[i] load and store
  Shader reduce = generate(example("reduce_sum"), {});
  for (const CheckSite& c : reduce.sites)
    if (c.kind == ErrorKind::OutOfBounds && c.space == ir::Space::Shared) {
      EXPECT_NE(c.node, ir::kNone) << "only tile[add(lid, stride)] (a load) is checked";
    }
  EXPECT_GE(reduce.elided_checks, 3u);
}

// Lavapipe's loop limiter is counted only for drivers that have one.
TEST(SpirvCodegen, LoopIterationsAreCountedOnlyWhereTheDriverLimitsThem) {
  EXPECT_EQ(driver_loop_limit(13), 65535u);
  EXPECT_EQ(driver_loop_limit(3), 0u);
  const auto& k = example("reduce_sum"); // one while loop
  Shader lavapipe = generate(k, {}, Target::lavapipe(), validating());
  EXPECT_EQ(lavapipe.loop_limit, 65535u);
  EXPECT_EQ(count_kind(lavapipe, ErrorKind::Limit), 1u);
  Shader generic = generate(k, {}, Target::generic(), validating());
  EXPECT_EQ(count_kind(generic, ErrorKind::Limit), 0u);
}

// `shared t: f64[4294967295]` used to make the zeroing loop wrap its 32-bit counter and unroll
// forever; every size is now computed in 64 bits and the array is refused, quickly, by name.
TEST(SpirvCodegen, AnOversizedSharedArrayIsRefusedByName) {
  // The verifier caps shared memory (2 GiB), so code generation never sees such an array; its own
  // 64-bit size check stays as defence in depth. Either way: refused at once, by name.
  const auto start = std::chrono::steady_clock::now();
  try {
    auto k = kernel("huge_tile", {64}, {"out"}, [](Out<double> out) {
      Shared<double> t("t", 4294967295u);
      out[global_id(0)] = t[local_id(0)];
    });
    generate(k, {}, Target::lavapipe(), validating());
    FAIL() << "no refusal";
  } catch (const Error& e) {
    EXPECT_TRUE(e.kind() == ErrorKind::Verify || e.kind() == ErrorKind::Limit);
    std::string text = format_error(e.kind(), e.message(), e.context());
    EXPECT_NE(text.find("huge_tile"), std::string::npos) << text;
    EXPECT_NE(text.find("'t'"), std::string::npos) << text;
    EXPECT_NE(text.find("34359738360 bytes"), std::string::npos) << text;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  // A long array that fits is zeroed by a loop, not by unrolled stores.
  auto long_tile = kernel("long_tile", {64}, {"out"}, [](Out<float> out) {
    Shared<float> t("t", 8000);
    out[global_id(0)] = t[local_id(0)];
  });
  Shader s = generate(long_tile, {}, Target::lavapipe(), validating());
  EXPECT_EQ(s.shared_bytes, 32000u);
  EXPECT_LT(s.words.size(), 4000u);
}

} // namespace
} // namespace halfway::codegen::spirv
