// The Vulkan device (runtime/vulkan) against the reference interpreter, on lavapipe with the
// validation layer on: every example with tie-stressing, edge and random inputs, bit for bit; every
// conversion and every exact op; the launch memo; 2D dispatch; feature refusals; failed launches;
// and the hand-written GLSL saxpy and reduction as a second, independent path to the device.
//
// Lavapipe never fuses (docs/measured.md), so strict and single-rounding builds are both
// bit-exact there; where NoContraction goes is tested on the SPIR-V text in tests/lit/spirv/.

#include "examples.hpp"
#include "glsl.hpp"
#include "halfway/codegen/spirv/capabilities.hpp"
#include "halfway/codegen/spirv/codegen.hpp"
#include "halfway/diff/gtest.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/runtime/vulkan/device.hpp"
#include "kernel_builder.hpp"
#include "shaders.hpp"

#include <bit>
#include <cstring>
#include <gtest/gtest.h>
#include <map>

namespace halfway::rt {
namespace {

using codegen::spirv::KernelBuilder;
using ir::ScalarType;
namespace inputs = diff::inputs;

class VulkanDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    VulkanDeviceOptions options;
    options.runtime = vk::testing::test_options(); // validation on, lavapipe unless told otherwise
    options.validate_spirv = true;
    device = std::make_unique<VulkanDevice>(&registry, options);
  }
  void TearDown() override {
    if (device)
      vk::testing::expect_no_messages(device->validation_messages());
  }
  diff::Options diff_options() const {
    diff::Options o;
    o.registry = &registry;
    return o;
  }

  policy::Registry registry;
  std::unique_ptr<VulkanDevice> device;
};

uint64_t f32_bits(float v) {
  return std::bit_cast<uint32_t>(v);
}

// Scalars of the examples (only those the kernel has): saxpy's a, linear's b, gemv's cols.
std::map<std::string, uint64_t> example_scalars(const ir::VerifiedKernel& k) {
  const std::map<std::string, uint64_t> all{
      {"a", f32_bits(1.7f)}, {"b", f32_bits(-0.3125f)}, {"cols", 4}};
  std::map<std::string, uint64_t> out;
  for (const auto& p : k->params)
    if (!p.is_buffer() && all.count(p.name))
      out[p.name] = all.at(p.name);
  return out;
}

const ir::VerifiedKernel& example(const std::string& name) {
  static const std::vector<ir::VerifiedKernel> all = examples::all();
  for (const auto& k : all)
    if (k.name() == name)
      return k;
  throw std::runtime_error("no example " + name);
}

// ---- examples against the interpreter ---------------------------------------------------------

// The basic examples on generated inputs of any size; the workloads need shaped inputs and have
// their own test (tests/examples/workloads_test.cpp).
TEST_F(VulkanDeviceTest, EveryBasicExampleMatchesTheInterpreterBitForBit) {
  for (const auto& k : examples::basic()) {
    for (inputs::Kind kind : {inputs::Kind::Ties, inputs::Kind::Edges, inputs::Kind::Random}) {
      SCOPED_TRACE(k.name() + " " + std::string(inputs::name(kind)));
      auto in = inputs::make_inputs(k.kernel(), 4099, kind, 11, example_scalars(k));
      EXPECT_MATCHES_INTERPRETER_WITH(k, *device, in, diff_options());
    }
  }
}

TEST_F(VulkanDeviceTest, SingleRoundingBuildsAreAlsoBitExactOnLavapipe) {
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::all_kernels(), "lavapipe test").ok());
  ASSERT_TRUE(
      registry.accept_relaxed_accumulation(policy::Scope::all_kernels(), "lavapipe test").ok());
  for (const char* name : {"narrow_f16", "linear<f64>", "gemv_fp8<e5m2>"}) {
    const auto& k = example(name);
    auto in = inputs::make_inputs(k.kernel(), 4096, inputs::Kind::Ties, 3, example_scalars(k));
    diff::Report report = diff::run(k, *device, in.grid, in.args, diff_options());
    EXPECT_TRUE(report.ok()) << diff::to_text(report);
    for (const auto& buffer : report.buffers)
      EXPECT_EQ(buffer.exact, buffer.size)
          << name << " " << buffer.name << ": lavapipe never fuses";
    // Every producer and accumulation opted in; the GEMV's shared-memory tree add is neither (it
    // accumulates no local), so it keeps its NoContraction.
    EXPECT_EQ(device->shader(k).no_contraction, std::string(name) == "gemv_fp8<e5m2>" ? 1u : 0u)
        << name;
  }
}

// ---- the launch memo --------------------------------------------------------------------------

TEST_F(VulkanDeviceTest, LaunchMemoIsKeyedByHashDeviceAndBudget) {
  const auto& k = example("narrow_f16");
  auto in = inputs::make_inputs(k.kernel(), 1000, inputs::Kind::Random, 1);
  LaunchResult first = device->launch(k, in.grid, in.args);
  EXPECT_FALSE(first.memo_hit);
  EXPECT_GT(first.compile_ms, 0);
  EXPECT_FALSE(first.budget.holds_any());
  LaunchResult second = device->launch(k, in.grid, in.args);
  EXPECT_TRUE(second.memo_hit);
  EXPECT_EQ(second.compile_ms, 0);
  EXPECT_EQ(device->memo_size(), 1u);
  EXPECT_EQ(device->shader(k).no_contraction, 2u);

  // An opt-in changes the budget key: the next launch regenerates, without NoContraction.
  ASSERT_TRUE(
      registry.accept_single_rounding(policy::Scope::kernel("narrow_f16"), "measured").ok());
  LaunchResult third = device->launch(k, in.grid, in.args);
  EXPECT_FALSE(third.memo_hit);
  EXPECT_EQ(third.budget.single_rounding, std::optional<std::string>("measured"));
  EXPECT_EQ(device->memo_size(), 2u);
  EXPECT_EQ(device->shader(k).no_contraction, 0u);
  EXPECT_TRUE(device->launch(k, in.grid, in.args).memo_hit);
}

// ---- dispatch shape ---------------------------------------------------------------------------

TEST_F(VulkanDeviceTest, GridsBeyondTheGroupLimitAreFoldedIntoTwoDimensions) {
  KernelBuilder b("iota");
  uint32_t out = b.buffer("out", ScalarType::U32, ir::Access::Write);
  ir::ExprId i = b.gid();
  b.store(out, i,
          b.node(ir::Op::Add, ScalarType::U32,
                 {b.node(ir::Op::Mul, ScalarType::U32, {i, b.constant(ScalarType::U32, 3)}),
                  b.constant(ScalarType::U32, 1)}));
  auto k = b.done();
  const uint32_t groups = 70'001; // lavapipe: at most 65,535 per dimension
  ASSERT_GT(groups, device->vulkan_info().limits.max_compute_work_group_count[0]);
  HostBuffer o(ScalarType::U32, uint64_t{groups} * 64);
  Arg args[] = {Arg::of(o)};
  Grid grid;
  grid.groups = {groups, 1, 1};
  device->launch(k, grid, args);
  auto v = o.as<uint32_t>();
  for (uint32_t e = 0; e < v.size(); ++e)
    ASSERT_EQ(v[e], e * 3 + 1) << "element " << e;
}

TEST_F(VulkanDeviceTest, LogicalMultiDimensionalGridsUnfoldExactly) {
  // out[linear group] = group_id(0) | group_id(1) << 10 | group_id(2) << 20 | num_groups(2) << 28
  KernelBuilder b("grid3d", 32);
  uint32_t out = b.buffer("out", ScalarType::U32, ir::Access::Write);
  auto u = [&](uint64_t v) { return b.constant(ScalarType::U32, v); };
  auto op = [&](ir::Op o, ir::ExprId x, ir::ExprId y) {
    return b.node(o, ScalarType::U32, {x, y});
  };
  ir::ExprId gx = b.builtin(ir::Op::GroupId, 0), gy = b.builtin(ir::Op::GroupId, 1),
             gz = b.builtin(ir::Op::GroupId, 2);
  ir::ExprId nx = b.builtin(ir::Op::NumGroups, 0), ny = b.builtin(ir::Op::NumGroups, 1);
  ir::ExprId linear =
      op(ir::Op::Add, gx, op(ir::Op::Mul, nx, op(ir::Op::Add, gy, op(ir::Op::Mul, ny, gz))));
  ir::ExprId value = op(ir::Op::Or, op(ir::Op::Or, gx, op(ir::Op::Shl, gy, u(10))),
                        op(ir::Op::Or, op(ir::Op::Shl, gz, u(20)),
                           op(ir::Op::Shl, b.builtin(ir::Op::NumGroups, 2), u(28))));
  ir::Stmt guard;
  guard.kind = ir::StmtKind::If;
  guard.a = b.node(ir::Op::Eq, ScalarType::Bool, {b.builtin(ir::Op::LocalId, 0), u(0)});
  b.store(out, linear, value);
  guard.body.push_back(std::move(b.k.body.back()));
  b.k.body.back() = std::move(guard);
  auto k = b.done();
  // Direct, direct in three dimensions, and x folded (70,001 > 65,535) with y moved to z.
  for (std::array<uint32_t, 3> g :
       {std::array<uint32_t, 3>{7, 5, 3}, std::array<uint32_t, 3>{700, 101, 2},
        std::array<uint32_t, 3>{70001, 3, 1}}) {
    Grid grid;
    grid.groups = g;
    HostBuffer o(ScalarType::U32, grid.total_groups());
    Arg args[] = {Arg::of(o)};
    device->launch(k, grid, args);
    auto v = o.as<uint32_t>();
    for (uint32_t z = 0; z < g[2]; ++z)
      for (uint32_t y = 0; y < g[1]; ++y)
        for (uint32_t x = 0; x < g[0]; ++x) {
          uint64_t at = x + uint64_t{g[0]} * (y + uint64_t{g[1]} * z);
          ASSERT_EQ(v[at], x | y << 10 | z << 20 | g[2] << 28) << x << "," << y << "," << z;
        }
  }
}

// ---- refusals and failures --------------------------------------------------------------------

// The capability table's device features are the runtime's, one to one: each Needs field turns
// into exactly the Vulkan feature of that name, and no two fields into the same one.
TEST(VulkanFeatures, EveryNeedIsTheRuntimesFeatureOfItsName) {
  vk::Features seen;
  for (const codegen::spirv::NeedsFeature& row : codegen::spirv::needs_features()) {
    codegen::spirv::Needs one;
    one.*row.need = true;
    vk::Features f = vulkan_features(one);
    EXPECT_EQ(vk::describe_features(f), row.vulkan_name);
    EXPECT_FALSE(vk::covers(seen, f)) << row.vulkan_name << " twice";
    seen = vk::feature_union(seen, f);
  }
  EXPECT_EQ(vulkan_features({}), vk::Features{});
  // Every capability that needs a feature names a Needs field of the table above.
  for (const codegen::spirv::CapabilityRow& row : codegen::spirv::capability_table()) {
    if (!row.need)
      continue;
    codegen::spirv::Needs one;
    one.*row.need = true;
    EXPECT_NE(vulkan_features(one), vk::Features{}) << row.name;
  }
}

TEST_F(VulkanDeviceTest, AMissingFeatureIsRefusedNamingKernelFeatureAndDevice) {
  vk::DeviceInfo without = device->vulkan_info();
  without.features.storage_buffer_16bit_access = false;
  const auto& k = example("linear<f16>");
  vk::Features needs = vulkan_features(device->shader(k).needs);
  try {
    vk::require_features(without, needs, k.name());
    FAIL() << "no refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    std::string text = format_error(e.kind(), e.message(), e.context());
    EXPECT_NE(text.find("linear<f16>"), std::string::npos) << text;
    EXPECT_NE(text.find("storageBuffer16BitAccess"), std::string::npos) << text;
    EXPECT_NE(text.find(without.name), std::string::npos) << text;
  }
}

TEST_F(VulkanDeviceTest, AFailedLaunchLeavesEveryBufferAsItWas) {
  const auto& k = example("saxpy");
  auto in = inputs::make_inputs(k.kernel(), 500, inputs::Kind::Random, 5, example_scalars(k));
  std::vector<HostBuffer> before;
  for (const auto& b : in.buffers)
    before.push_back(b.clone());
  std::vector<Arg> wrong(in.args.begin(), in.args.end() - 1); // a missing scalar
  EXPECT_THROW(device->launch(k, in.grid, wrong), Error);
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_TRUE(before[i] == in.buffers[i]);
}

// ---- an independent path: hand-written GLSL through shaderc -----------------------------------

TEST_F(VulkanDeviceTest, HandWrittenGlslGivesTheSameResults) {
  const uint32_t n = 20'000;
  vk::Runtime& rt = device->runtime();
  {
    const auto& k = example("saxpy");
    auto in = inputs::make_inputs(k.kernel(), n, inputs::Kind::Ties, 9, example_scalars(k));
    HostBuffer x = in.buffers[0].clone(), y = in.buffers[1].clone();
    device->launch(k, in.grid, in.args);
    vk::Program glsl{.kernel_name = "saxpy_glsl",
                     .spirv = vk::testing::compile_glsl("saxpy", vk::testing::kSaxpy),
                     .num_storage_buffers = 2,
                     .push_constant_bytes = 8};
    vk::Device& d = rt.device(glsl.needs, glsl.kernel_name);
    vk::Buffer bx = d.create_buffer(n * 4, "x"), by = d.create_buffer(n * 4, "y");
    bx.upload(std::span<const std::byte>(x.data(), x.size_bytes()));
    by.upload(std::span<const std::byte>(y.data(), y.size_bytes()));
    struct {
      float a;
      uint32_t n;
    } push{1.7f, n};
    d.dispatch(d.pipeline(101, glsl), {&bx, &by}, vk::push_bytes(push), {(n + 63) / 64});
    std::vector<uint32_t> got = by.download_as<uint32_t>();
    auto want = in.buffers[1].as<uint32_t>();
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], want[i]) << "saxpy element " << i;
  }
  {
    const auto& k = example("reduce_sum");
    auto in = inputs::make_inputs(k.kernel(), n, inputs::Kind::Random, 9);
    HostBuffer x = in.buffers[0].clone();
    device->launch(k, in.grid, in.args);
    vk::Program glsl{.kernel_name = "reduce_glsl",
                     .spirv = vk::testing::compile_glsl("reduce", vk::testing::kReduce),
                     .num_storage_buffers = 2,
                     .push_constant_bytes = 4};
    vk::Device& d = rt.device(glsl.needs, glsl.kernel_name);
    const uint32_t groups = (n + 255) / 256;
    vk::Buffer bx = d.create_buffer(n * 4, "v"), bs = d.create_buffer(groups * 4, "sums");
    bx.upload(std::span<const std::byte>(x.data(), x.size_bytes()));
    uint32_t push = n;
    d.dispatch(d.pipeline(102, glsl), {&bx, &bs}, vk::push_bytes(push), {groups});
    std::vector<uint32_t> got = bs.download_as<uint32_t>();
    auto want = in.buffers[1].as<uint32_t>();
    for (uint32_t g = 0; g < groups; ++g)
      ASSERT_EQ(got[g], want[g]) << "partial sum " << g;
  }
}

// ---- conversions and exact ops against the interpreter ---------------------------------------

const ScalarType kTypes[] = {ScalarType::I8,   ScalarType::U8,   ScalarType::I16, ScalarType::U16,
                             ScalarType::I32,  ScalarType::U32,  ScalarType::I64, ScalarType::U64,
                             ScalarType::F16,  ScalarType::BF16, ScalarType::F32, ScalarType::F64,
                             ScalarType::E4M3, ScalarType::E5M2};

// Float inputs cycle through special and boundary values (edges of every narrower format),
// followed by random bit patterns; integer inputs are random bits and boundaries.
void fill_conversion_input(HostBuffer& buffer, ScalarType type, uint64_t seed) {
  inputs::fill_random_bits(buffer, seed);
  std::vector<uint64_t> bits = inputs::special_bits(type);
  if (ir::is_float(type)) {
    for (ScalarType target :
         {ScalarType::F16, ScalarType::BF16, ScalarType::F32, ScalarType::E4M3, ScalarType::E5M2})
      if (ir::is_narrowing(type, target)) {
        auto edge = inputs::boundary_bits(type, target);
        bits.insert(bits.end(), edge.begin(), edge.end());
      }
  } else {
    uint32_t w = ir::info(type).bits;
    uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
    for (uint64_t v : {uint64_t{0}, uint64_t{1}, mask, mask >> 1, (mask >> 1) + 1,
                       uint64_t{1} << 24, (uint64_t{1} << 24) + 1, (uint64_t{1} << 25) + 3,
                       uint64_t{0x7fffff80}, uint64_t{0x1000001}})
      bits.push_back(v & mask);
  }
  for (size_t i = 0; i < bits.size() && i < buffer.size(); ++i)
    buffer.set_bits(i, bits[i]);
}

TEST_F(VulkanDeviceTest, EveryConversionMatchesTheInterpreter) {
  const ir::RoundingMode modes[] = {ir::RoundingMode::NearestEven, ir::RoundingMode::TowardZero,
                                    ir::RoundingMode::Up, ir::RoundingMode::Down};
  int checked = 0;
  for (ScalarType from : kTypes)
    for (ScalarType to : kTypes) {
      if (from == to)
        continue;
      const bool rounds = ir::is_float(to) && !ir::widens_exactly(from, to);
      for (ir::RoundingMode mode : modes) {
        if (!rounds && mode != ir::RoundingMode::NearestEven)
          continue;
        if (ir::is_int(from) && (to == ScalarType::F32 || to == ScalarType::F64) &&
            mode != ir::RoundingMode::NearestEven)
          continue; // refused at generation time (tests/codegen)
        for (bool sat : {false, true}) {
          if (sat && to != ScalarType::E4M3)
            continue;
          KernelBuilder b("convert_" + std::string(ir::name(from)) + "_" +
                          std::string(ir::name(to)));
          uint32_t in = b.buffer("in", from, ir::Access::Read);
          uint32_t out = b.buffer("out", to, ir::Access::Write);
          ir::ExprId i = b.gid();
          uint32_t v = b.let("v", to, b.convert(to, b.load(in, i), mode, sat));
          b.store(out, i, b.local(v));
          auto k = b.done();
          HostBuffer x(from, 640), y(to, 640);
          fill_conversion_input(x, from, 17);
          diff::Launch launch{Grid::for_lanes(k.kernel(), 640), {Arg::of(x), Arg::of(y)}};
          SCOPED_TRACE(std::string(ir::name(from)) + " -> " + std::string(ir::name(to)) + " " +
                       std::string(ir::name(mode)) + (sat ? " sat" : ""));
          EXPECT_MATCHES_INTERPRETER_WITH(k, *device, launch, diff_options());
          ++checked;
        }
      }
    }
  EXPECT_GT(checked, 350);
}

TEST_F(VulkanDeviceTest, ExactOpsMatchTheInterpreter) {
  // Ops whose device result Vulkan requires to be exact or correctly rounded; the math functions
  // have device error bounds instead (ops.hpp) and fma may round twice.
  const ir::Op ops[] = {ir::Op::Add,  ir::Op::Sub,      ir::Op::Mul,   ir::Op::Div,  ir::Op::Neg,
                        ir::Op::Abs,  ir::Op::Min,      ir::Op::Max,   ir::Op::Sqrt, ir::Op::Floor,
                        ir::Op::Ceil, ir::Op::Copysign, ir::Op::Eq,    ir::Op::Ne,   ir::Op::Lt,
                        ir::Op::Le,   ir::Op::Gt,       ir::Op::Ge,    ir::Op::And,  ir::Op::Or,
                        ir::Op::Xor,  ir::Op::Not,      ir::Op::Select};
  int checked = 0;
  for (ir::Op op : ops)
    for (ScalarType t : kTypes) {
      const ir::OpInfo& info = ir::info(op);
      if (ir::is_int(t) && op == ir::Op::Div)
        continue; // random divisors include zero
      KernelBuilder b(std::string(info.name) + "_" + std::string(ir::name(t)));
      uint32_t x = b.buffer("x", t, ir::Access::Read);
      uint32_t y = b.buffer("y", t, ir::Access::Read);
      ir::ExprId i = b.gid();
      ir::ExprId a = b.load(x, i), c = b.load(y, i);
      ir::ExprId value = ir::kNone;
      ScalarType result = info.rule == ir::TypeRule::Compare ? ScalarType::Bool : t;
      if (op == ir::Op::Select)
        value = b.node(op, t, {b.node(ir::Op::Lt, ScalarType::Bool, {a, c}), a, c});
      else if (info.arity == 1)
        value = b.node(op, result, {a});
      else
        value = b.node(op, result, {a, c});
      if (result == ScalarType::Bool)
        value = b.node(ir::Op::Select, ScalarType::U32,
                       {value, b.constant(ScalarType::U32, 1), b.constant(ScalarType::U32, 0)});
      uint32_t out =
          b.buffer("out", result == ScalarType::Bool ? ScalarType::U32 : t, ir::Access::Write);
      b.store(out, i, value);
      std::optional<ir::VerifiedKernel> k;
      try {
        k = b.done();
      } catch (const Error&) {
        continue; // not defined for this type
      }
      HostBuffer hx(t, 640), hy(t, 640), ho(result == ScalarType::Bool ? ScalarType::U32 : t, 640);
      fill_conversion_input(hx, t, 21);
      inputs::fill_random_bits(hy, 22);
      // Pair every special value with every other one in the first rows.
      auto sp = inputs::special_bits(t);
      for (size_t r = 0; r < sp.size() * sp.size() && r < 640; ++r) {
        hx.set_bits(r, sp[r / sp.size()]);
        hy.set_bits(r, sp[r % sp.size()]);
      }
      diff::Launch launch{Grid::for_lanes(k->kernel(), 640),
                          {Arg::of(hx), Arg::of(hy), Arg::of(ho)}};
      SCOPED_TRACE(k->name());
      EXPECT_MATCHES_INTERPRETER_WITH(*k, *device, launch, diff_options());
      ++checked;
    }
  EXPECT_GT(checked, 150);
}

} // namespace
} // namespace halfway::rt
