// The fusion pass: what it fuses, what it refuses and why, and that a fused pipeline computes the
// unfused one's results bit for bit on every device (specs/fusion.md).
#include "halfway/diff/diff.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/pipeline/fuse.hpp"
#include "halfway/pipeline/text.hpp"
#include "halfway/policy/registry.hpp"
#include "pipelines.hpp"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace halfway {
namespace {

using pipeline::LaunchArg;

constexpr uint64_t kN = 4099; // not a multiple of the workgroup: the guards matter

pipeline::Buffers chain_inputs(const pipeline::Pipeline& p) {
  return examples::elementwise_chain_inputs(p, 7);
}

pipeline::Buffers run_on(const std::string& device_name, const pipeline::Pipeline& p,
                         pipeline::Buffers io, policy::Registry& registry) {
  auto device = rt::make_device(device_name, &registry);
  pipeline::run(p, *device, io);
  return io;
}

std::vector<std::string> devices() {
  return rt::device_names();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(Fusion, ChainOfThreeBecomesOneKernel) {
  policy::Registry registry;
  auto result = pipeline::fuse(examples::elementwise_chain(kN), &registry);
  ASSERT_EQ(result.pipeline.launches.size(), 1u);
  EXPECT_TRUE(result.refused.empty());
  ASSERT_EQ(result.fused.size(), 2u);
  EXPECT_EQ(result.fused[0].kind, pipeline::FusionKind::Elementwise);
  EXPECT_EQ(result.fused[0].temporary, "t1");
  EXPECT_EQ(result.fused[1].temporary, "t2");
  const auto& k = result.pipeline.launches[0].kernel;
  EXPECT_EQ(k.name(), "fused(chain_mad+chain_scale+chain_square)");
  EXPECT_EQ(result.pipeline.find_buffer("t1"), nullptr);
  EXPECT_EQ(result.pipeline.find_buffer("t2"), nullptr);
  // Both f16 narrowings stay explicit narrowings, now into locals.
  EXPECT_EQ(count(ir::print(k.kernel()), "narrow<f16>"), 2u);
  EXPECT_EQ(registry.fused_parts(k.name()),
            (std::vector<std::string>{"chain_mad", "chain_scale", "chain_square"}));
}

TEST(Fusion, ChainIsBitExactOnEveryDevice) {
  policy::Registry registry;
  const auto p = examples::elementwise_chain(kN);
  const auto fused = pipeline::fuse(p, &registry).pipeline;
  const auto reference = run_on("interp", p, chain_inputs(p), registry);
  for (const auto& device : devices()) {
    SCOPED_TRACE(device);
    const auto unfused = run_on(device, p, chain_inputs(p), registry);
    const auto one = run_on(device, fused, chain_inputs(p), registry);
    EXPECT_TRUE(unfused.at("y") == reference.at("y"));
    EXPECT_TRUE(one.at("y") == unfused.at("y"));
  }
}

TEST(Fusion, GroupNormThenSiluIsAnEpilogue) {
  policy::Registry registry;
  const auto p = examples::group_norm_then_silu(2, 16, 4, 81);
  auto result = pipeline::fuse(p, &registry);
  ASSERT_EQ(result.fused.size(), 1u) << (result.refused.empty() ? "" : result.refused[0].reason);
  EXPECT_EQ(result.fused[0].kind, pipeline::FusionKind::Epilogue);
  EXPECT_EQ(result.pipeline.launches[0].kernel.name(), "fused(group_norm+silu)");
  EXPECT_EQ(result.pipeline.find_buffer("t"), nullptr);

  // The hand-fused kernel of examples/ computes the same values.
  const auto by_hand = [&] {
    pipeline::Pipeline h = result.pipeline;
    h.launches[0] = p.launches[0];
    h.launches[0].kernel = examples::group_norm_silu();
    h.launches[0].args[3] = LaunchArg::of("y");
    return run_on("interp", h, examples::group_norm_inputs(p), registry);
  }();
  for (const auto& device : devices()) {
    SCOPED_TRACE(device);
    const auto unfused = run_on(device, p, examples::group_norm_inputs(p), registry);
    const auto one = run_on(device, result.pipeline, examples::group_norm_inputs(p), registry);
    EXPECT_TRUE(one.at("y") == unfused.at("y"));
    // Vulkan's exp is held to its documented precision, not bit for bit to the interpreter.
    if (device != "vulkan") {
      EXPECT_TRUE(one.at("y") == by_hand.at("y"));
    }
  }
}

// A launch that touches none of chain_scale's or chain_square's buffers, between chain_mad and
// chain_scale: both consumers move up past it and fuse, and the results stay bit for bit.
TEST(Fusion, ConsumersMoveUpPastUnrelatedLaunches) {
  policy::Registry registry;
  auto p = examples::elementwise_chain(kN);
  p.buffers.push_back({"z", ir::ScalarType::F32, kN, false});
  const Kernel twice = kernel("twice", {64}, {"a", "z"}, [](In<float> a, Out<float> z) {
    Var i(global_id(0), "i");
    If(i < z.size(), [&] { z[i] = a[i] + a[i]; });
  });
  p.launches.insert(
      p.launches.begin() + 1,
      pipeline::Launch{twice, {LaunchArg::of("a"), LaunchArg::of("z")}, p.launches[0].grid});
  const auto result = pipeline::fuse(p, &registry);
  ASSERT_EQ(result.fused.size(), 2u);
  ASSERT_EQ(result.pipeline.launches.size(), 2u);
  EXPECT_EQ(result.pipeline.launches[0].kernel.name(), "fused(chain_mad+chain_scale+chain_square)");
  EXPECT_EQ(result.pipeline.launches[1].kernel.name(), "twice");
  EXPECT_NE(result.fused[0].proof.find("chain_scale moved up past 1 launch"), std::string::npos)
      << result.fused[0].proof;
  for (const auto& device : devices()) {
    SCOPED_TRACE(device);
    const auto unfused = run_on(device, p, chain_inputs(p), registry);
    const auto fused = run_on(device, result.pipeline, chain_inputs(p), registry);
    EXPECT_TRUE(unfused.at("y") == fused.at("y"));
    EXPECT_TRUE(unfused.at("z") == fused.at("z"));
  }
}

// ---- refusals --------------------------------------------------------------------------------

Kernel neighbour() {
  return kernel("neighbour", {64}, {"t1", "c", "t2", "s"},
                [](In<f16> t1, In<float> c, Out<f16> t2, Scalar<float> s) {
                  Var i(global_id(0), "i");
                  If(i + 1u < t2.size(),
                     [&] { t2[i] = narrow<f16>(to_f32(t1[i + 1u]) * s + c[i]); });
                });
}

Kernel scatter() {
  return kernel("scatter", {64}, {"a", "b", "c", "t1"},
                [](In<float> a, In<float> b, In<float> c, Out<f16> t1) {
                  Var i(global_id(0), "i");
                  If(i < t1.size(), [&] {
                    t1[convert<uint32_t>(abs(c[i])) % t1.size()] = narrow<f16>(a[i] * b[i]);
                  });
                });
}

std::string refusal(const pipeline::Pipeline& p) {
  policy::Registry registry;
  auto result = pipeline::fuse(p, &registry);
  EXPECT_EQ(result.pipeline.launches.size(), p.launches.size());
  EXPECT_FALSE(result.refused.empty());
  return result.refused.empty() ? "" : result.refused[0].reason;
}

pipeline::Pipeline first_two(pipeline::Pipeline p) {
  p.launches.pop_back();
  std::erase_if(p.buffers, [](const auto& b) { return b.name == "y"; });
  for (auto& b : p.buffers)
    if (b.name == "t2")
      b.temporary = false;
  return p;
}

TEST(FusionRefuses, ConsumerReadingANeighbour) {
  auto p = first_two(examples::elementwise_chain(kN));
  p.launches[1].kernel = neighbour();
  EXPECT_NE(refusal(p).find("B reads a neighbour: t1[add(i, 1:u32)]"), std::string::npos)
      << refusal(p);
}

TEST(FusionRefuses, TwoWriters) {
  auto p = first_two(examples::elementwise_chain(kN));
  p.launches.push_back(p.launches[0]); // a third launch writes t1 again
  EXPECT_NE(refusal(p).find("two writers: 't1' is also written by pipeline "
                            "'elementwise_chain', launch 3 (chain_mad)"),
            std::string::npos)
      << refusal(p);
}

TEST(FusionRefuses, DataDependentStoreIndex) {
  auto p = first_two(examples::elementwise_chain(kN));
  p.launches[0].kernel = scatter();
  EXPECT_NE(refusal(p).find("depends on memory (data-dependent store index)"), std::string::npos)
      << refusal(p);
}

TEST(FusionRefuses, TemporaryReadOutside) {
  auto p = examples::elementwise_chain(kN);
  // chain_square reads t1 instead of t2: t1 is read outside the first pair.
  p.launches[2].args[0] = LaunchArg::of("t1");
  auto reason = refusal(p);
  EXPECT_NE(reason.find("temporary read outside: 't1' is also read by"), std::string::npos)
      << reason;
  auto q = first_two(examples::elementwise_chain(kN));
  for (auto& b : q.buffers)
    if (b.name == "t1")
      b.temporary = false;
  EXPECT_NE(refusal(q).find("temporary read outside: 't1' is not a temporary"), std::string::npos)
      << refusal(q);
}

TEST(FusionRefuses, GridMismatch) {
  auto p = examples::group_norm_then_silu(2, 16, 4, 81);
  p.launches[1].grid.groups[0] -= 1; // SiLU no longer covers all of t
  EXPECT_NE(refusal(p).find("grid mismatch: B's grid has"), std::string::npos) << refusal(p);
}

TEST(FusionRefuses, ConsumerThatIsNotElementwise) {
  pipeline::Pipeline p = examples::group_norm_then_silu(2, 16, 4, 81);
  p.launches[1] = p.launches[0];
  p.launches[1].args[0] = LaunchArg::of("t");
  p.launches[1].args[3] = LaunchArg::of("y");
  EXPECT_NE(refusal(p).find("B (group_norm) is not elementwise"), std::string::npos) << refusal(p);
}

// ---- coverage: an epilogue only where A's launch stores every element of t exactly once -------

// A stores t[i] = x[i] below `bound` with workgroup `a_workgroup` over 128 lanes; B adds 1 over
// t's 100 elements with workgroup 64. With A's workgroup 32 the pair is an epilogue; with 64 it
// is elementwise. `naive` is what an epilogue fusion without the coverage proof would make:
// B's body where A stores, nothing elsewhere.
std::string guarded_file(uint32_t a_workgroup, uint32_t bound) {
  const std::string wg = std::to_string(a_workgroup), b = std::to_string(bound);
  const std::string groups = std::to_string(128 / a_workgroup);
  return "kernel producer workgroup(" + wg +
         ", 1, 1) {\n"
         "  param x: buffer<f32, read>;\n  param t: buffer<f32, write>;\n"
         "  let i: u32 = global_id(0);\n  if lt(i, " +
         b +
         ":u32) {\n    t[i] = x[i];\n  }\n}\n"
         "kernel bump workgroup(64, 1, 1) {\n"
         "  param t: buffer<f32, read>;\n  param y: buffer<f32, write>;\n"
         "  let i: u32 = global_id(0);\n"
         "  if lt(i, len(y)) {\n    y[i] = add(t[i], 1.0:f32);\n  }\n}\n"
         "kernel naive workgroup(" +
         wg +
         ", 1, 1) {\n"
         "  param x: buffer<f32, read>;\n  param y: buffer<f32, write>;\n"
         "  let i: u32 = global_id(0);\n  if lt(i, " +
         b +
         ":u32) {\n    y[i] = add(x[i], 1.0:f32);\n  }\n}\n"
         "pipeline pair {\n  buffer x: f32[100];\n  temp t: f32[100];\n  buffer y: f32[100];\n"
         "  launch producer(x, t) groups(" +
         groups +
         ", 1, 1);\n  launch bump(t, y) groups(2, 1, 1);\n}\n"
         "pipeline naive {\n  buffer x: f32[100];\n  buffer y: f32[100];\n"
         "  launch naive(x, y) groups(" +
         groups + ", 1, 1);\n}\n";
}

pipeline::Buffers x_inputs(const pipeline::Pipeline& p) {
  pipeline::Buffers io = pipeline::make_buffers(p);
  io.at("x") =
      examples::detail_inputs::f32_buffer(examples::detail_inputs::stress(io.at("x").size(), 3));
  return io;
}

std::vector<float> floats(const rt::HostBuffer& b) {
  std::vector<float> out(b.size());
  std::memcpy(out.data(), b.data(), b.size_bytes());
  return out;
}

TEST(FusionCoverage, AnEpilogueThatSkipsElementsIsRefused) {
  policy::Registry registry;
  const text::KernelFile file(guarded_file(32, 90), "pair.hk");
  const auto p = pipeline::from_text(file, "pair", &registry);
  auto result = pipeline::fuse(p, &registry);
  ASSERT_EQ(result.refused.size(), 1u);
  EXPECT_EQ(result.pipeline.launches.size(), 2u);
  EXPECT_EQ(result.refused[0].reason,
            "A may not write every element of 't': its launch never stores t[90] (10 of 100 "
            "elements), where the unfused B reads the temporary's zero and the fused kernel would "
            "write nothing");
  // Why: the unfused pipeline computes y = 0 + 1 where A skips t; the naive fusion leaves y as
  // the caller gave it (zero) there, and agrees everywhere else.
  const auto unfused = floats(run_on("interp", p, x_inputs(p), registry).at("y"));
  const auto naive_p = pipeline::from_text(file, "naive", &registry);
  const auto naive = floats(run_on("interp", naive_p, x_inputs(naive_p), registry).at("y"));
  for (size_t i = 0; i < 100; ++i) {
    SCOPED_TRACE(i);
    if (i < 90) {
      EXPECT_EQ(unfused[i], naive[i]);
    } else {
      EXPECT_EQ(unfused[i], 1.0f);
      EXPECT_EQ(naive[i], 0.0f);
    }
  }
}

// Elementwise fusion needs no coverage proof: t becomes a local that starts at zero, as the
// temporary did, and a lane reads only what it wrote itself. A guard below t's length fuses and
// still computes y = 0 + 1 where A skips t, bit for bit on every device.
TEST(FusionCoverage, ElementwiseFusionKeepsTheTemporarysZero) {
  policy::Registry registry;
  const auto p =
      pipeline::from_text(text::KernelFile(guarded_file(64, 90), "pair.hk"), "pair", &registry);
  auto result = pipeline::fuse(p, &registry);
  ASSERT_EQ(result.fused.size(), 1u) << (result.refused.empty() ? "" : result.refused[0].reason);
  EXPECT_EQ(result.fused[0].kind, pipeline::FusionKind::Elementwise);
  for (const auto& device : devices()) {
    SCOPED_TRACE(device);
    const auto unfused = floats(run_on(device, p, x_inputs(p), registry).at("y"));
    const auto fused = floats(run_on(device, result.pipeline, x_inputs(p), registry).at("y"));
    EXPECT_EQ(unfused, fused);
    EXPECT_EQ(fused[95], 1.0f);
  }
}

// GroupNorm launched one workgroup short leaves the last group instance of t unwritten: its
// reduction, barriers and loops are enumerated from the launch, and the pair is refused.
TEST(FusionCoverage, GroupNormOneWorkgroupShortIsRefused) {
  auto p = examples::group_norm_then_silu(2, 16, 4, 81); // 8 instances of 4 x 81 elements
  p.launches[0].grid.groups[0] -= 1;
  EXPECT_EQ(refusal(p), "A may not write every element of 't': its launch never stores t[2268] "
                        "(324 of 2592 elements), where the unfused B reads the temporary's zero "
                        "and the fused kernel would write nothing");
}

// ---- fused names ------------------------------------------------------------------------------

TEST(FusedNames, PartsWithTheSeparatorsRoundTrip) {
  const std::vector<std::string> parts{"x+y", "f(z)", "back\\slash", "plain", "(+)"};
  const std::string name = pipeline::fused_name(parts);
  EXPECT_EQ(name, "fused(x\\+y+f\\(z\\)+back\\\\slash+plain+\\(\\+\\))");
  EXPECT_EQ(pipeline::fused_parts(name), parts);
  EXPECT_EQ(pipeline::fused_parts("fused(a+b)"), (std::vector<std::string>{"a", "b"}));
  // Not the form fused_name makes: nothing is read as parts.
  for (const char* other : {"fused(a+b", "fused()", "fused(a+)", "fused(+a)", "fused(a(b)",
                            "fused(a)b)", "fused(a\\b)", "fused(a\\)", "fuse(a+b)", "a+b"}) {
    SCOPED_TRACE(other);
    EXPECT_EQ(pipeline::fused_parts(other), std::nullopt);
  }
}

// Kernels whose quoted names hold '+', '(' and ')' fuse, print, read back and register the same
// parts; without the escape, "fused(a+b+f(x))" would read as three parts or none.
TEST(FusedNames, AFusedPipelineOfOddNamesReadsBackWithItsParts) {
  const std::string file = "kernel \"a+b\" workgroup(64, 1, 1) {\n"
                           "  param x: buffer<f32, read>;\n  param t: buffer<f32, write>;\n"
                           "  let i: u32 = global_id(0);\n"
                           "  if lt(i, len(t)) {\n    t[i] = mul(x[i], x[i]);\n  }\n}\n"
                           "kernel \"f(x)\" workgroup(64, 1, 1) {\n"
                           "  param t: buffer<f32, read>;\n  param y: buffer<f32, write>;\n"
                           "  let i: u32 = global_id(0);\n"
                           "  if lt(i, len(y)) {\n    y[i] = add(t[i], 1.0:f32);\n  }\n}\n"
                           "pipeline p {\n  buffer x: f32[100];\n  temp t: f32[100];\n"
                           "  buffer y: f32[100];\n  launch \"a+b\"(x, t) groups(2, 1, 1);\n"
                           "  launch \"f(x)\"(t, y) groups(2, 1, 1);\n}\n";
  policy::Registry registry;
  const auto fused = pipeline::fuse(
      pipeline::from_text(text::KernelFile(file, "odd.hk"), "", &registry), &registry);
  ASSERT_EQ(fused.fused.size(), 1u);
  const std::string name = "fused(a\\+b+f\\(x\\))";
  EXPECT_EQ(fused.fused[0].name, name);
  EXPECT_EQ(registry.fused_parts(name), (std::vector<std::string>{"a+b", "f(x)"}));
  const std::string printed = pipeline::print(fused.pipeline);
  EXPECT_NE(printed.find("kernel \"fused(a\\\\+b+f\\\\(x\\\\))\" workgroup"), std::string::npos)
      << printed;
  policy::Registry fresh;
  const auto back = pipeline::from_text(text::KernelFile(printed, "fused.hk"), "", &fresh);
  EXPECT_EQ(pipeline::print(back), printed);
  EXPECT_EQ(fresh.fused_parts(name), (std::vector<std::string>{"a+b", "f(x)"}));
}

TEST(Pipeline, CheckNamesTheLaunchAndBuffer) {
  auto p = examples::elementwise_chain(kN);
  p.launches[1].args[1] = LaunchArg::of("nope");
  try {
    pipeline::check(p);
    FAIL() << "accepted an unknown buffer";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_EQ(e.message(), "pipeline 'elementwise_chain', launch 2 (chain_scale), parameter c: "
                           "unknown buffer 'nope'");
  }
  p = examples::elementwise_chain(kN);
  p.launches[1].args[0] = LaunchArg::of("a");
  EXPECT_THROW(pipeline::check(p), Error); // f32 buffer for an f16 parameter
}

// ---- policy ----------------------------------------------------------------------------------

TEST(FusionPolicy, BudgetIsTheMeetOfTheParts) {
  policy::Registry registry;
  auto fused = pipeline::fuse(first_two(examples::elementwise_chain(kN)), &registry).pipeline;
  const std::string name = fused.launches[0].kernel.name();
  ASSERT_EQ(name, "fused(chain_mad+chain_scale)");
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("chain_mad"), "mad ok"));
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel(name), "covers nothing"));
  EXPECT_FALSE(registry.budget(name).holds(policy::OptIn::SingleRounding));

  // A opted in, B not: the barriers stay, so a device that fuses still matches the interpreter.
  auto io = chain_inputs(fused);
  const auto reference = run_on("interp", fused, chain_inputs(fused), registry);
  for (const auto& device : devices()) {
    SCOPED_TRACE(device);
    EXPECT_TRUE(run_on(device, fused, chain_inputs(fused), registry).at("t2") ==
                reference.at("t2"));
  }
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("chain_scale"), "scale ok"));
  EXPECT_EQ(registry.budget(name).single_rounding,
            "fused from chain_mad, chain_scale: chain_mad: mad ok; chain_scale: scale ok");
  EXPECT_FALSE(registry.budget(name).holds(policy::OptIn::RelaxedAccumulation));
}

TEST(FusionPolicy, LateOptInRegeneratesAtTheNextLaunch) {
  policy::Registry registry;
  auto fused = pipeline::fuse(first_two(examples::elementwise_chain(kN)), &registry).pipeline;
  auto cpu = rt::make_device("cpu", &registry);
  auto io = chain_inputs(fused);
  auto first = pipeline::run(fused, *cpu, io).launches[0];
  auto second = pipeline::run(fused, *cpu, io).launches[0];
  EXPECT_FALSE(first.memo_hit);
  EXPECT_TRUE(second.memo_hit);
  EXPECT_FALSE(second.budget.holds(policy::OptIn::SingleRounding));
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::all_kernels(), "display only"));
  auto third = pipeline::run(fused, *cpu, io).launches[0];
  EXPECT_FALSE(third.memo_hit);
  EXPECT_TRUE(third.budget.holds(policy::OptIn::SingleRounding));
  EXPECT_TRUE(pipeline::run(fused, *cpu, io).launches[0].memo_hit);
}

// The checker judges a narrowing site by the value it stores, so the pair here narrows only at its
// final store: t = a*b in f32, then out16 = narrow<f16>(t + c).
TEST(FusionPolicy, OptedInFusedKernelIsWithinTheCheckersModels) {
  policy::Registry registry;
  auto product =
      kernel("product", {64}, {"a", "b", "t"}, [](In<float> a, In<float> b, Out<float> t) {
        Var i(global_id(0), "i");
        If(i < t.size(), [&] { t[i] = a[i] * b[i]; });
      });
  auto plus_c =
      kernel("plus_c", {64}, {"t", "c", "out16"}, [](In<float> t, In<float> c, Out<f16> out16) {
        Var i(global_id(0), "i");
        If(i < out16.size(), [&] { out16[i] = narrow<f16>(t[i] + c[i]); });
      });
  pipeline::Pipeline pair;
  pair.name = "pair";
  pair.buffers = {{"a", ir::ScalarType::F32, kN, false},
                  {"b", ir::ScalarType::F32, kN, false},
                  {"c", ir::ScalarType::F32, kN, false},
                  {"t", ir::ScalarType::F32, kN, true},
                  {"out16", ir::ScalarType::F16, kN, false}};
  const auto grid = rt::Grid::for_lanes(product.kernel(), kN);
  pair.launches = {
      {product, {LaunchArg::of("a"), LaunchArg::of("b"), LaunchArg::of("t")}, grid},
      {plus_c, {LaunchArg::of("t"), LaunchArg::of("c"), LaunchArg::of("out16")}, grid}};
  auto fused = pipeline::fuse(pair, &registry).pipeline;
  ASSERT_EQ(fused.launches.size(), 1u);
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("product"), "a"));
  ASSERT_TRUE(registry.accept_single_rounding(policy::Scope::kernel("plus_c"), "b"));
  auto io = chain_inputs(fused);
  const auto& launch = fused.launches[0];
  std::vector<rt::Arg> args;
  for (const auto& a : launch.args)
    args.push_back(a.buffer.empty() ? rt::Arg::bits(a.scalar) : rt::Arg::of(io.at(a.buffer)));
  diff::Options options;
  options.registry = &registry;
  for (const auto& device : devices()) {
    if (device == "interp")
      continue;
    SCOPED_TRACE(device);
    auto dev = rt::make_device(device, &registry);
    auto report = diff::run(launch.kernel, *dev, launch.grid, args, options);
    EXPECT_TRUE(report.budget.holds(policy::OptIn::SingleRounding));
    EXPECT_TRUE(report.ok()) << diff::to_text(report);
  }
}

// ---- text --------------------------------------------------------------------------------------

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The example files are what pipeline::print writes for the example pipelines (after their
// comment lines), and read back to pipelines that print the same.
TEST(PipelineText, ExampleFilesPrintBack) {
  const std::string dir = std::string(HALFWAY_SOURCE_DIR) + "/examples/pipelines/";
  const std::pair<std::string, pipeline::Pipeline> files[] = {
      {"group_norm_then_silu.hk", examples::group_norm_then_silu(2, 16, 4, 81)},
      {"elementwise_chain.hk", examples::elementwise_chain(kN)}};
  for (const auto& [name, p] : files) {
    SCOPED_TRACE(name);
    std::string text = read(dir + name);
    while (text.rfind("//", 0) == 0)
      text.erase(0, text.find('\n') + 1);
    EXPECT_EQ(pipeline::print(p), text);
    policy::Registry registry;
    const auto back = pipeline::from_text(text::parse_file(dir + name), "", &registry);
    EXPECT_EQ(pipeline::print(back), text);
    EXPECT_EQ(back.launches.size(), p.launches.size());
    EXPECT_EQ(back.launches[0].kernel.hash(), p.launches[0].kernel.hash());
  }
}

// A printed fused pipeline reads back with its fused kernel registered under its parts.
TEST(PipelineText, FusedPipelineReadsBackWithItsParts) {
  policy::Registry registry;
  const auto fused = pipeline::fuse(examples::group_norm_then_silu(2, 16, 4, 81), &registry);
  const std::string printed = pipeline::print(fused.pipeline);
  policy::Registry fresh;
  const auto back = pipeline::from_text(text::KernelFile(printed, "fused.hk"), "", &fresh);
  EXPECT_EQ(pipeline::print(back), printed);
  EXPECT_EQ(fresh.fused_parts("fused(group_norm+silu)"),
            (std::vector<std::string>{"group_norm", "silu"}));
}

std::string text_error(const std::string& text) {
  try {
    policy::Registry registry;
    pipeline::from_text(text::KernelFile(text, "p.hk"), "", &registry);
  } catch (const Error& e) {
    return format_error(e.kind(), e.message(), e.context());
  }
  return "no error";
}

TEST(PipelineText, ErrorsNameTheFileAndLine) {
  const std::string copy = "kernel copy workgroup(64, 1, 1) {\n"
                           "  param x: buffer<f32, read>;\n"
                           "  param y: buffer<f32, write>;\n"
                           "  param s: f32;\n"
                           "  let i: u32 = global_id(0);\n"
                           "  y[i] = mul(x[i], s);\n"
                           "}\n";
  const std::string buffers = "pipeline p {\n  buffer x: f32[64];\n  buffer y: f32[64];\n";
  EXPECT_EQ(text_error(copy + buffers + "  launch nope(x, y, 1.0:f32) groups(1, 1, 1);\n}\n"),
            "p.hk:11:3: usage error: pipeline 'p': unknown kernel nope in p.hk; it has copy\n"
            "    launch nope(x, y, 1.0:f32) groups(1, 1, 1);\n"
            "    ^");
  EXPECT_EQ(text_error(copy + buffers + "  launch copy(x, y, 1:u32) groups(1, 1, 1);\n}\n"),
            "p.hk:11:21: usage error: pipeline 'p': parameter s of copy is f32, the constant given "
            "is u32\n"
            "    launch copy(x, y, 1:u32) groups(1, 1, 1);\n"
            "                      ^");
  EXPECT_NE(text_error(copy + buffers + "  launch copy(x, z, 1.0:f32) groups(1, 1, 1);\n}\n")
                .find("unknown buffer 'z'"),
            std::string::npos);
  EXPECT_NE(text_error(copy + buffers + "  launch copy(x, y, 1.0) groups(1, 1, 1);\n}\n")
                .find("p.hk:11:21: parse error: constant 1.0 needs a type suffix in a launch, "
                      "e.g. 1.0:f32"),
            std::string::npos)
      << text_error(copy + buffers + "  launch copy(x, y, 1.0) groups(1, 1, 1);\n}\n");
  EXPECT_NE(text_error(copy + buffers + "  launch copy(x, y, 1.0:f32);\n}\n")
                .find("p.hk:11:29: parse error: expected 'groups', found ';'"),
            std::string::npos)
      << text_error(copy + buffers + "  launch copy(x, y, 1.0:f32);\n}\n");
}

} // namespace
} // namespace halfway
