#include "halfway/runtime/vulkan/device.hpp"

#include "halfway/ir/printer.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/runtime/factories.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

namespace halfway::rt {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The vk::Device pipeline cache key: the memo key's hash and budget (the device is implicit).
uint64_t pipeline_key(uint64_t kernel_hash, uint64_t budget_key) {
  return kernel_hash * 0x9E3779B97F4A7C15ull + (budget_key + 1) * 0xC2B2AE3D27D4EB4Full;
}

namespace control = codegen::spirv::control;

// The interpreter's error for a fault the module recorded: workgroup `group`, key `key` (site and
// lane), and the index when the reporting rerun found it.
Error fault_error(const ir::Kernel& k, const codegen::spirv::Shader& shader,
                  std::span<const uint64_t> lengths, uint32_t group, uint32_t key,
                  std::optional<uint64_t> index, const std::string& device) {
  ErrorContext ctx;
  ctx.kernel = k.name;
  const uint32_t site_id = shader.lane_bits >= 32 ? 0 : key >> shader.lane_bits;
  if (site_id >= shader.sites.size())
    return Error(ErrorKind::Internal, "the Vulkan device recorded an unknown failure", ctx);
  const codegen::spirv::CheckSite& site = shader.sites[site_id];
  if (site.kind == ErrorKind::Limit) {
    ctx.line = site.line;
    ctx.workgroup = group;
    ctx.lane = key & ((uint64_t{1} << shader.lane_bits) - 1);
    return Error(ErrorKind::Limit,
                 "the loop at line " + std::to_string(site.line) +
                     " brought the invocation's loop iterations to " +
                     std::to_string(shader.loop_limit) + ", where device " + device +
                     " ends every loop by itself (lavapipe's loop limiter: this many back edges in "
                     "all, per invocation) and the results would be wrong. Run it on interp or cpu",
                 ctx);
  }
  if (site.node != ir::kNone) {
    ctx.node = site.node;
    ctx.node_text = ir::print_expr(k, site.node);
  }
  ctx.line = site.line;
  ctx.workgroup = group;
  ctx.lane = key & ((uint64_t{1} << shader.lane_bits) - 1);
  // --check: worded as the interpreter words them (interp/src/eval_int.cpp).
  if (site.kind == ErrorKind::DivideByZero || site.kind == ErrorKind::ShiftOverflow) {
    const ir::Expr& e = k.expr(site.node);
    const std::string what = std::string(ir::name(e.op)) + " of " + std::string(ir::name(e.type));
    if (site.kind == ErrorKind::DivideByZero)
      return Error(site.kind, what + " by zero", ctx);
    if (!index)
      return Error(site.kind,
                   what + " by an amount not below the width " +
                       std::to_string(ir::info(e.type).bits) +
                       " (the rerun that finds the amount did not fault again: the kernel is not "
                       "deterministic)",
                   ctx);
    const std::string amount =
        site.index_signed ? std::to_string(static_cast<int64_t>(*index)) : std::to_string(*index);
    return Error(site.kind,
                 what + " by " + amount + ", not below the width " +
                     std::to_string(ir::info(e.type).bits),
                 ctx);
  }
  const std::string& name = k.memory_name(site.space, site.mem);
  const uint64_t length =
      site.space == ir::Space::Buffer
          ? lengths[site.mem]
          : k.array(site.space, site.mem).dim(site.dimension < 0 ? 0 : site.dimension);
  const std::string what = std::string(site.access) +
                           (site.space == ir::Space::Buffer   ? " buffer "
                            : site.space == ir::Space::Shared ? " shared "
                                                              : " private ") +
                           name;
  const std::string dim =
      site.dimension < 0 ? "" : " in dimension " + std::to_string(site.dimension);
  ctx.buffer = name;
  ctx.length = length;
  if (!index)
    return Error(ErrorKind::OutOfBounds,
                 what + " out of bounds (length " + std::to_string(length) +
                     "; the rerun that finds the index did not fault again: the kernel is not "
                     "deterministic)",
                 ctx);
  if (site.index_signed && static_cast<int64_t>(*index) < 0)
    return Error(ErrorKind::OutOfBounds,
                 what + " at negative index -" + std::to_string(0 - *index) + dim + " (length " +
                     std::to_string(length) + ")",
                 ctx);
  ctx.index = *index;
  return Error(ErrorKind::OutOfBounds,
               what + " out of bounds" + dim + ": index " + std::to_string(*index) + ", length " +
                   std::to_string(length),
               ctx);
}

} // namespace

struct VulkanDevice::Compiled {
  codegen::spirv::Shader shader;
  vk::Program program;
  uint64_t key = 0;
  // The reporting form (codegen::spirv::Options::report_faults), made after the first fault.
  std::unique_ptr<Compiled> report;
};

VulkanDevice::VulkanDevice(policy::Registry* registry, VulkanDeviceOptions options)
    : registry_(registry ? registry : &policy::global_registry()), options_(std::move(options)),
      runtime_(std::make_unique<vk::Runtime>(options_.runtime)) {
  const vk::DeviceInfo& vi = runtime_->info();
  target_ = spirv_target(vi);
  target_.opaque_identity = options_.opaque_identity;
  info_.name = "vulkan:" + vi.name;
  info_.description = vk::describe(vi);
  info_.controls = float_controls(vi);
  const auto& max = vi.limits.max_compute_work_group_count;
  // x may be folded into (x, y) when z is 1 (codegen::spirv::plan_dispatch).
  info_.max_groups = {uint64_t{max[0]} * max[1], max[1], max[2]};
  info_.max_shared_bytes = vi.limits.max_compute_shared_memory_size;
  info_.max_workgroup_size = vi.limits.max_compute_work_group_size;
  info_.max_workgroup_invocations = vi.limits.max_compute_work_group_invocations;
  info_.max_buffer_bytes = vi.limits.max_storage_buffer_range;
  info_.may_fuse = target_.uses_opaque_identity();
  // GLSL.std.450 math is only as precise as Vulkan's precision table requires.
  info_.math = ir::MathProfile::Vulkan;
}

VulkanDevice::~VulkanDevice() = default;

std::vector<vk::ValidationMessage> VulkanDevice::validation_messages() const {
  return runtime_->validation_messages();
}

std::shared_ptr<VulkanDevice::Compiled> VulkanDevice::compiled(const ir::VerifiedKernel& kernel,
                                                               const policy::Budget& budget,
                                                               bool check_arith, bool* hit) {
  MemoKey key{kernel.hash(), info_.name, budget.key(), check_arith ? 1u : 0u};
  return memo_.get(
      key,
      [&] {
        codegen::spirv::Options o;
        if (options_.validate_spirv)
          o.validate = *options_.validate_spirv;
        o.checks = !options_.unchecked;
        o.check_arith = check_arith;
        auto c = std::make_shared<Compiled>();
        c->shader = codegen::spirv::generate(kernel, budget, target_, o);
        c->program.kernel_name = kernel.name();
        c->program.spirv = c->shader.words;
        c->program.entry = c->shader.entry;
        c->program.num_storage_buffers =
            static_cast<uint32_t>(c->shader.bindings.size() + (c->shader.control_binding ? 1 : 0));
        c->program.push_constant_bytes = c->shader.push_bytes;
        c->program.needs = vulkan_features(c->shader.needs);
        // The module with arithmetic checks is another pipeline of the same kernel and budget.
        c->key =
            pipeline_key(kernel.hash(), budget.key()) ^ (check_arith ? 0xbb67ae8584caa73bull : 0);
        return c;
      },
      hit);
}

const codegen::spirv::Shader& VulkanDevice::shader(const ir::VerifiedKernel& kernel) {
  std::lock_guard lock(mutex_);
  return compiled(kernel, registry_->budget(kernel.name()), false, nullptr)->shader;
}

LaunchResult VulkanDevice::launch(const ir::VerifiedKernel& kernel, const Grid& grid,
                                  std::span<const Arg> args, const LaunchOptions& options) {
  const auto start = Clock::now();
  const ir::Kernel& k = kernel.kernel();
  check_args(k, grid, args);
  check_limits(k, grid, args, info_);
  if (options.check_bounds && options_.unchecked) {
    ErrorContext c;
    c.kernel = kernel.name();
    throw Error(ErrorKind::Unsupported,
                "the checks that are not free (integer division by zero, shift overflow) need "
                "checked modules, and this " +
                    info_.name + " device was made without checks (the benchmark baseline)",
                c);
  }
  const Cancel cancel = options.make_cancel();
  std::lock_guard lock(mutex_);
  LaunchResult result;
  result.budget = registry_->budget(kernel.name());

  bool hit = false;
  const auto codegen_start = Clock::now();
  std::shared_ptr<Compiled> c = compiled(kernel, result.budget, options.check_bounds, &hit);
  result.memo_hit = hit;
  if (!hit)
    result.compile_ms = ms_since(codegen_start);
  const codegen::spirv::Shader& shader = c->shader;
  if (shader.shared_bytes > info_.max_shared_bytes) {
    ErrorContext ctx;
    ctx.kernel = kernel.name();
    throw Error(ErrorKind::Limit,
                "kernel " + kernel.name() + ": shared memory of " +
                    std::to_string(shader.shared_bytes) +
                    " bytes as held on the device (f16, bf16 and 8/16-bit elements take 32 bits) "
                    "exceeds the limit of " +
                    std::to_string(info_.max_shared_bytes) + " bytes of device " + info_.name,
                ctx);
  }

  // Refuses (naming kernel, feature and device) when the device lacks a needed feature.
  vk::Device& device = runtime_->device(c->program.needs, kernel.name());
  vk::Pipeline* pipeline = device.find_pipeline(c->key);
  if (!pipeline) {
    const auto create_start = Clock::now();
    pipeline = &device.pipeline(c->key, c->program);
    result.compile_ms += ms_since(create_start);
    result.memo_hit = false;
  }
  if (cancel.expired())
    throw cancel.error(kernel.name(), info_.name);

  // Device copies of the buffers, one per distinct host buffer.
  std::map<const HostBuffer*, vk::Buffer> copies;
  std::set<const HostBuffer*> written;
  std::vector<vk::Buffer*> bound;
  std::vector<uint64_t> scalars(k.params.size(), 0), lengths(k.params.size(), 0);
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (!k.params[i].is_buffer()) {
      scalars[i] = args[i].scalar;
      continue;
    }
    HostBuffer* host = args[i].buffer;
    lengths[i] = host->size();
    if (k.params[i].access != ir::Access::Read)
      written.insert(host);
    auto it = copies.find(host);
    if (it == copies.end()) {
      // Never empty, and a whole number of words: descriptors and staging copies want both. At
      // least 8 bytes: a checked load out of bounds reads element 0 instead (checks.cpp).
      uint64_t bytes = std::max<uint64_t>(8, (host->size_bytes() + 3) / 4 * 4);
      it = copies.emplace(host, device.create_buffer(bytes, k.params[i].name)).first;
      if (host->size_bytes() > 0)
        it->second.upload(std::span<const std::byte>(host->data(), host->size_bytes()));
    }
    bound.push_back(&it->second);
  }
  // The control buffer (codegen.hpp): always mapped, so the host can raise its cancel word while
  // the dispatch runs. One per vk::Device, reused by every launch.
  vk::Buffer* control = nullptr;
  if (shader.control_binding) {
    auto it = control_.find(&device);
    if (it == control_.end())
      it =
          control_
              .emplace(&device, device.create_mapped_buffer(control::kWords * 4, "halfway_control"))
              .first;
    control = &it->second;
    bound.push_back(control);
  }
  const codegen::spirv::Dispatch plan = codegen::spirv::plan_dispatch(
      grid.groups, runtime_->info().limits.max_compute_work_group_count, kernel.name());
  std::vector<std::byte> push(shader.push_bytes);
  codegen::spirv::write_push_constants(shader, k, scalars, lengths, grid.groups, plan, push);
  vk::GroupGrid groups{plan.physical[0], plan.physical[1], plan.physical[2]};

  // A bounded launch waits in slices; past the deadline (or on the cancel flag) it raises the
  // cancel word, which every loop of the module polls, so the dispatch ends within a loop
  // iteration and the device stays usable.
  vk::DispatchWait wait;
  wait.expired = [&] { return cancel.expired(); };
  wait.stop = [&] {
    if (control && control->mapped())
      std::atomic_ref<uint32_t>(
          *reinterpret_cast<uint32_t*>(control->mapped() + control::kCancel * 4))
          .store(1);
  };
  const bool bounded = cancel.has_deadline() || cancel.flag;
  std::array<uint32_t, control::kWords> words{};
  auto run = [&](vk::Pipeline& p, std::span<const std::byte> constants, uint32_t target_group,
                 uint32_t target_key) {
    if (control) {
      words.fill(0);
      words[control::kWorkgroup] = words[control::kKey] = control::kNone;
      words[control::kTargetGroup] = target_group;
      words[control::kTargetKey] = target_key;
      control->upload(std::span<const uint32_t>(words));
    }
    vk::LaunchTiming t = device.dispatch(p, bound, constants, groups, bounded ? &wait : nullptr);
    if (t.stopped || cancel.expired())
      throw cancel.error(kernel.name(), info_.name);
    if (control)
      control->download(std::span<uint32_t>(words));
    return t;
  };
  vk::LaunchTiming timing = run(*pipeline, push, control::kNone, control::kNone);

  // A fault: rerun from the original inputs to find its workgroup, then the key (site and lane)
  // in that workgroup, then the index of that key (checks.cpp). The caller's buffers are
  // untouched: nothing is copied back.
  if (control && words[control::kFaulted] != 0) {
    if (!c->report) {
      codegen::spirv::Options o;
      if (options_.validate_spirv)
        o.validate = *options_.validate_spirv;
      o.report_faults = true;
      o.check_arith = options.check_bounds;
      auto r = std::make_unique<Compiled>();
      r->shader = codegen::spirv::generate(kernel, result.budget, target_, o);
      r->program = c->program;
      r->program.kernel_name = kernel.name() + " (reporting)";
      r->program.spirv = r->shader.words;
      r->program.push_constant_bytes = r->shader.push_bytes;
      r->program.needs = vulkan_features(r->shader.needs);
      r->key = c->key ^ 0x6a09e667f3bcc909ull;
      c->report = std::move(r);
    }
    const Compiled& r = *c->report;
    vk::Pipeline* reporting = device.find_pipeline(r.key);
    if (!reporting)
      reporting = &device.pipeline(r.key, r.program);
    std::vector<std::byte> report_push(r.shader.push_bytes);
    codegen::spirv::write_push_constants(r.shader, k, scalars, lengths, grid.groups, plan,
                                         report_push);
    auto rerun = [&](uint32_t target_group, uint32_t target_key) {
      run(*reporting, report_push, target_group, target_key);
    };
    auto reload = [&] {
      for (auto& [host, copy] : copies)
        if (written.count(host) && host->size_bytes() > 0)
          copy.upload(std::span<const std::byte>(host->data(), host->size_bytes()));
    };
    reload();
    rerun(control::kNone, control::kNone);
    const uint32_t group = words[control::kWorkgroup];
    if (group == control::kNone) {
      ErrorContext ctx;
      ctx.kernel = k.name;
      throw Error(ErrorKind::OutOfBounds,
                  "a checked access faulted (or a loop was cut) on " + info_.name +
                      ", but the rerun that finds where did not fault again: the kernel is not "
                      "deterministic; run it on interp",
                  ctx);
    }
    reload();
    rerun(group, control::kNone);
    const uint32_t key = words[control::kKey];
    if (key == control::kNone)
      throw fault_error(k, shader, lengths, group, 0, std::nullopt, info_.name);
    reload();
    rerun(group, key);
    std::optional<uint64_t> index;
    if (words[control::kKey] == key)
      index = uint64_t{words[control::kIndexLow]} | (uint64_t{words[control::kIndexHigh]} << 32);
    throw fault_error(k, shader, lengths, group, key, index, info_.name);
  }

  // Success: fetch every output (each distinct buffer once), then, only when all downloads
  // worked, copy them into the caller's buffers.
  std::map<HostBuffer*, std::vector<std::byte>> outputs;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const ir::Param& p = k.params[i];
    HostBuffer* host = args[i].buffer;
    if (!p.is_buffer() || p.access == ir::Access::Read || outputs.count(host))
      continue;
    std::vector<std::byte>& bytes = outputs[host];
    bytes.resize(host->size_bytes());
    if (!bytes.empty())
      copies.at(host).download(std::span<std::byte>(bytes));
  }
  for (auto& [host, bytes] : outputs)
    if (!bytes.empty())
      std::memcpy(host->data(), bytes.data(), bytes.size());
  result.device_ms = timing.device_ns ? static_cast<double>(*timing.device_ns) / 1e6
                                      : static_cast<double>(timing.wall_ns) / 1e6;
  result.wall_ms = ms_since(start);
  return result;
}

std::unique_ptr<Device> make_vulkan_device(policy::Registry* registry,
                                           const std::string& selector) {
  VulkanDeviceOptions options;
  options.runtime.device = selector;
  return std::make_unique<VulkanDevice>(registry, std::move(options));
}

} // namespace halfway::rt
