#include "glsl_compare.hpp"

#include "halfway/codegen/spirv/codegen.hpp"
#include "halfway/runtime/vulkan_api/environment.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <shaderc/shaderc.hpp>
#include <stdexcept>

namespace halfway::bench {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Side {
  vk::Program program;
  std::vector<std::byte> push;
  vk::Pipeline* pipeline = nullptr;
  std::vector<vk::Buffer*> bound;
};

} // namespace

std::vector<uint32_t> compile_glsl(const char* name, const char* source, double* ms) {
  auto t = Clock::now();
  shaderc::Compiler compiler;
  shaderc::CompileOptions options;
  options.SetTargetEnvironment(shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
  options.SetOptimizationLevel(shaderc_optimization_level_performance);
  auto r = compiler.CompileGlslToSpv(source, shaderc_compute_shader, name, options);
  if (r.GetCompilationStatus() != shaderc_compilation_status_success)
    throw std::runtime_error("shaderc: " + r.GetErrorMessage());
  *ms = ms_since(t);
  return {r.cbegin(), r.cend()};
}

GlslComparison compare_with_glsl(rt::VulkanDevice& device, const GlslCase& c, int runs) {
  GlslComparison out;
  const ir::Kernel& k = c.kernel->kernel();
  // Halfway's module (timed without validation) and GLSL's.
  codegen::spirv::Options o;
  o.validate = false;
  out.codegen_ms = 1e9;
  codegen::spirv::Shader shader;
  const codegen::spirv::Target target = device.target();
  for (int r = 0; r < 20; ++r) {
    shader = codegen::spirv::generate(*c.kernel, {}, target, o);
    out.codegen_ms = std::min(out.codegen_ms, shader.codegen_ms);
  }
  out.checked_sites = shader.sites.size();
  out.elided_checks = shader.elided_checks;
  codegen::spirv::Options plain = o;
  plain.checks = false;
  const codegen::spirv::Shader unchecked_shader =
      codegen::spirv::generate(*c.kernel, {}, target, plain);
  std::vector<uint32_t> glsl_words = compile_glsl(c.name.c_str(), c.glsl, &out.shaderc_ms);

  const bool multi = c.groups[0] != 0;
  const uint64_t groups =
      multi ? uint64_t{c.groups[0]} * c.groups[1] * c.groups[2] : (c.items + c.lanes - 1) / c.lanes;
  const vk::GroupGrid grid =
      multi ? vk::GroupGrid{c.groups[0], c.groups[1], c.groups[2]}
            : vk::plan_groups(groups, device.vulkan_info().limits.max_compute_work_group_count,
                              c.name);

  Side ours, theirs, unchecked;
  ours.program = {.kernel_name = c.name,
                  .spirv = shader.words,
                  .entry = shader.entry,
                  .num_storage_buffers = static_cast<uint32_t>(shader.bindings.size() + 1),
                  .push_constant_bytes = shader.push_bytes,
                  .needs = rt::vulkan_features(shader.needs)};
  unchecked.program = {.kernel_name = c.name + "_unchecked",
                       .spirv = unchecked_shader.words,
                       .entry = unchecked_shader.entry,
                       .num_storage_buffers =
                           static_cast<uint32_t>(unchecked_shader.bindings.size()),
                       .push_constant_bytes = unchecked_shader.push_bytes,
                       .needs = rt::vulkan_features(shader.needs)};
  theirs.program = {.kernel_name = c.name + "_glsl",
                    .spirv = glsl_words,
                    .num_storage_buffers = static_cast<uint32_t>(shader.bindings.size()),
                    .push_constant_bytes = static_cast<uint32_t>(4 * (1 + c.glsl_push.size())),
                    .needs = rt::vulkan_features(shader.needs)};
  // Both run on the device with halfway's feature set (GLSL needs a subset of it).
  vk::Device& d = device.runtime().device(ours.program.needs, c.name);

  std::vector<uint64_t> lengths(k.params.size(), 0);
  std::vector<vk::Buffer> buffers;
  std::vector<vk::Buffer*> bound;
  size_t b = 0;
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (!k.params[i].is_buffer())
      continue;
    lengths[i] = c.inputs[b].size() / ir::bytes(k.params[i].type);
    buffers.push_back(d.create_buffer(std::max<uint64_t>(4, c.inputs[b].size()), k.params[i].name));
    ++b;
  }
  for (auto& buf : buffers)
    bound.push_back(&buf);
  // The checked module's control buffer (codegen.hpp): no fault, no target, no cancel.
  vk::Buffer control = d.create_mapped_buffer(codegen::spirv::control::kWords * 4, "control");
  std::vector<uint32_t> words(codegen::spirv::control::kWords, 0);
  words[codegen::spirv::control::kWorkgroup] = words[codegen::spirv::control::kKey] =
      words[codegen::spirv::control::kTargetGroup] = words[codegen::spirv::control::kTargetKey] =
          codegen::spirv::control::kNone;
  control.upload(words);
  ours.bound = bound;
  ours.bound.push_back(&control);
  theirs.bound = unchecked.bound = bound;
  auto reset = [&] {
    for (size_t i = 0; i < buffers.size(); ++i)
      buffers[i].upload(std::span<const std::byte>(c.inputs[i]));
  };
  ours.push.resize(shader.push_bytes);
  const std::array<uint32_t, 3> logical =
      multi ? c.groups : std::array<uint32_t, 3>{static_cast<uint32_t>(groups), 1, 1};
  const codegen::spirv::Dispatch plan = codegen::spirv::plan_dispatch(
      logical, device.vulkan_info().limits.max_compute_work_group_count, c.name);
  codegen::spirv::write_push_constants(shader, k, c.scalars, lengths, logical, plan, ours.push);
  unchecked.push.resize(unchecked_shader.push_bytes);
  codegen::spirv::write_push_constants(unchecked_shader, k, c.scalars, lengths, logical, plan,
                                       unchecked.push);
  const vk::GroupGrid our_grid{plan.physical[0], plan.physical[1], plan.physical[2]};
  std::vector<uint32_t> gp{static_cast<uint32_t>(groups)};
  gp.insert(gp.end(), c.glsl_push.begin(), c.glsl_push.end());
  theirs.push.resize(gp.size() * 4);
  std::memcpy(theirs.push.data(), gp.data(), theirs.push.size());

  ours.pipeline = &d.pipeline(0x1000 + std::hash<std::string>{}(c.name), ours.program);
  theirs.pipeline = &d.pipeline(0x2000 + std::hash<std::string>{}(c.name), theirs.program);
  unchecked.pipeline = &d.pipeline(0x3000 + std::hash<std::string>{}(c.name), unchecked.program);
  out.halfway_pipeline_ms = static_cast<double>(ours.pipeline->creation_ns()) / 1e6;
  out.glsl_pipeline_ms = static_cast<double>(theirs.pipeline->creation_ns()) / 1e6;

  auto dispatch = [&](Side& s) {
    vk::LaunchTiming t = d.dispatch(*s.pipeline, s.bound, s.push, &s == &theirs ? grid : our_grid);
    return t.device_ns ? static_cast<double>(*t.device_ns) / 1e6
                       : static_cast<double>(t.wall_ns) / 1e6;
  };
  // First dispatches (cold compile), then the bit-for-bit check.
  reset();
  auto t0 = Clock::now();
  dispatch(ours);
  out.halfway_first_ms = ms_since(t0);
  out.output.resize(c.inputs[c.compare_binding].size());
  buffers[c.compare_binding].download(std::span<std::byte>(out.output));
  reset();
  t0 = Clock::now();
  dispatch(theirs);
  out.glsl_first_ms = ms_since(t0);
  std::vector<std::byte> glsl(out.output.size());
  buffers[c.compare_binding].download(std::span<std::byte>(glsl));
  reset();
  dispatch(unchecked);
  std::vector<std::byte> plain_result(out.output.size());
  buffers[c.compare_binding].download(std::span<std::byte>(plain_result));
  const std::vector<std::byte>& mine = out.output;
  // The first differing 32-bit word of each pair (out.output.size() when they agree).
  auto first_difference = [&](const std::vector<std::byte>& other) {
    size_t at = 0;
    while (at < mine.size() && mine[at] == other[at])
      ++at;
    return at;
  };
  auto word = [](const std::vector<std::byte>& v, size_t at) {
    uint32_t w = 0;
    std::memcpy(&w, v.data() + (at & ~size_t{3}),
                std::min<size_t>(4, v.size() - (at & ~size_t{3})));
    return w;
  };
  const size_t vs_glsl = first_difference(glsl), vs_unchecked = first_difference(plain_result);
  if (vs_glsl != mine.size() || vs_unchecked != mine.size()) {
    char detail[160];
    const size_t at = std::min(vs_glsl, vs_unchecked);
    std::snprintf(detail, sizeof detail,
                  " (first at byte %zu: word 0x%08x generated, 0x%08x unchecked, 0x%08x GLSL)", at,
                  word(mine, at), word(plain_result, at), word(glsl, at));
    throw std::runtime_error(c.name + ": generated (checked)" +
                             (vs_unchecked != mine.size() ? ", generated (unchecked)" : "") +
                             (vs_glsl != mine.size() ? " and GLSL" : "") + " results differ" +
                             detail);
  }

  std::vector<double> h, g, u;
  for (int r = 0; r < runs; ++r) {
    h.push_back(dispatch(ours));
    g.push_back(dispatch(theirs));
    u.push_back(dispatch(unchecked));
  }
  out.halfway_ms = median(h);
  out.glsl_ms = median(g);
  out.unchecked_ms = median(u);
  return out;
}

} // namespace halfway::bench
