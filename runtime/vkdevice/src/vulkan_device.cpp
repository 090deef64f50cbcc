#include "halfway/runtime/vkdevice/vulkan_device.hpp"

#include "halfway/policy/policy.hpp"
#include "halfway/runtime/factories.hpp"

#include <chrono>
#include <cstring>
#include <map>

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

} // namespace

struct VulkanDevice::Compiled {
  codegen::spirv::Shader shader;
  vk::Program program;
  uint64_t key = 0;
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
  info_.may_fuse = target_.uses_opaque_identity();
}

VulkanDevice::~VulkanDevice() = default;

std::vector<vk::ValidationMessage> VulkanDevice::validation_messages() const {
  return runtime_->validation_messages();
}

std::shared_ptr<VulkanDevice::Compiled>
VulkanDevice::compiled(const ir::VerifiedKernel& kernel, const policy::Budget& budget, bool* hit) {
  MemoKey key{kernel.hash(), info_.name, budget.key(), 0};
  return memo_.get(
      key,
      [&] {
        codegen::spirv::Options o;
        if (options_.validate_spirv)
          o.validate = *options_.validate_spirv;
        auto c = std::make_shared<Compiled>();
        c->shader = codegen::spirv::generate(kernel, budget, target_, o);
        c->program.kernel_name = kernel.name();
        c->program.spirv = c->shader.words;
        c->program.entry = c->shader.entry;
        c->program.num_storage_buffers = static_cast<uint32_t>(c->shader.bindings.size());
        c->program.push_constant_bytes = c->shader.push_bytes;
        c->program.needs = vulkan_features(c->shader.needs);
        c->key = pipeline_key(kernel.hash(), budget.key());
        return c;
      },
      hit);
}

const codegen::spirv::Shader& VulkanDevice::shader(const ir::VerifiedKernel& kernel) {
  std::lock_guard lock(mutex_);
  return compiled(kernel, registry_->budget(kernel.name()), nullptr)->shader;
}

LaunchResult VulkanDevice::launch(const ir::VerifiedKernel& kernel, const Grid& grid,
                                  std::span<const Arg> args, const LaunchOptions& options) {
  const auto start = Clock::now();
  const ir::Kernel& k = kernel.kernel();
  check_args(k, grid, args);
  if (options.check_bounds) {
    ErrorContext c;
    c.kernel = kernel.name();
    throw Error(ErrorKind::Unsupported,
                "bounds checking is not available on " + info_.name + "; run on interp", c);
  }
  std::lock_guard lock(mutex_);
  LaunchResult result;
  result.budget = registry_->budget(kernel.name());

  bool hit = false;
  const auto codegen_start = Clock::now();
  std::shared_ptr<Compiled> c = compiled(kernel, result.budget, &hit);
  result.memo_hit = hit;
  if (!hit)
    result.compile_ms = ms_since(codegen_start);

  // Refuses (naming kernel, feature and device) when the device lacks a needed feature.
  vk::Device& device = runtime_->device(c->program.needs, kernel.name());
  vk::Pipeline* pipeline = device.find_pipeline(c->key);
  if (!pipeline) {
    const auto create_start = Clock::now();
    pipeline = &device.pipeline(c->key, c->program);
    result.compile_ms += ms_since(create_start);
    result.memo_hit = false;
  }

  // Device copies of the buffers, one per distinct host buffer.
  std::map<const HostBuffer*, vk::Buffer> copies;
  std::vector<vk::Buffer*> bound;
  std::vector<uint64_t> scalars(k.params.size(), 0), lengths(k.params.size(), 0);
  for (size_t i = 0; i < k.params.size(); ++i) {
    if (!k.params[i].is_buffer()) {
      scalars[i] = args[i].scalar;
      continue;
    }
    HostBuffer* host = args[i].buffer;
    lengths[i] = host->size();
    auto it = copies.find(host);
    if (it == copies.end()) {
      // Never empty, and a whole number of words: descriptors and staging copies want both.
      uint64_t bytes = std::max<uint64_t>(4, (host->size_bytes() + 3) / 4 * 4);
      it = copies.emplace(host, device.create_buffer(bytes, k.params[i].name)).first;
      if (host->size_bytes() > 0)
        it->second.upload(std::span<const std::byte>(host->data(), host->size_bytes()));
    }
    bound.push_back(&it->second);
  }
  const codegen::spirv::Dispatch plan = codegen::spirv::plan_dispatch(
      grid.groups, runtime_->info().limits.max_compute_work_group_count, kernel.name());
  std::vector<std::byte> push(c->shader.push_bytes);
  codegen::spirv::write_push_constants(c->shader, k, scalars, lengths, grid.groups, plan, push);
  vk::GroupGrid groups{plan.physical[0], plan.physical[1], plan.physical[2]};
  vk::LaunchTiming timing = device.dispatch(*pipeline, bound, push, groups);

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
