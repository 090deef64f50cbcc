#include "halfway/runtime/vulkan_api/device.hpp"

#include "device_state.hpp"
#include "feature_chain.hpp"
#include "halfway/runtime/vulkan_api/instance.hpp"
#include "halfway/runtime/vulkan_api/result.hpp"
#include "instance_state.hpp"
#include "loader.hpp"
#include "structs.hpp"

#include <algorithm>

namespace halfway::vk {

namespace {

void create_device(detail::DeviceState& s, const std::string& kernel) {
  ErrorContext context = kernel_context(kernel);
  float priority = 1.0f;
  auto queue = detail::make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queue.queueFamilyIndex = s.info.compute_queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;

  bool atomic_float = needs_atomic_float_extension(s.features);
  detail::FeatureChain chain(atomic_float);
  chain.write(s.features);
  const char* extensions[] = {VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME};

  auto create = detail::make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  create.pNext = &chain.head;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  create.enabledExtensionCount = atomic_float ? 1 : 0;
  create.ppEnabledExtensionNames = extensions;
  s.check(vkCreateDevice(s.physical, &create, nullptr, &s.device), "vkCreateDevice", context);
  volkLoadDeviceTable(&s.vk, s.device);
  s.vk.vkGetDeviceQueue(s.device, s.info.compute_queue_family, 0, &s.queue);

  auto pool = detail::make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = s.info.compute_queue_family;
  s.check(s.vk.vkCreateCommandPool(s.device, &pool, nullptr, &s.command_pool),
          "vkCreateCommandPool", context);
  auto alloc =
      detail::make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  alloc.commandPool = s.command_pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  s.check(s.vk.vkAllocateCommandBuffers(s.device, &alloc, &s.commands), "vkAllocateCommandBuffers",
          context);
  auto fence = detail::make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  s.check(s.vk.vkCreateFence(s.device, &fence, nullptr, &s.fence), "vkCreateFence", context);
  if (s.info.limits.timestamp_valid_bits > 0) {
    auto query = detail::make<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
    query.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query.queryCount = 2;
    s.check(s.vk.vkCreateQueryPool(s.device, &query, nullptr, &s.timestamps), "vkCreateQueryPool",
            context);
  }
}

// A pool with room for one set of `bindings` storage buffers, reset after every dispatch.
void ensure_descriptor_pool(detail::DeviceState& s, uint32_t bindings,
                            const ErrorContext& context) {
  if (s.descriptor_pool && s.descriptor_capacity >= bindings)
    return;
  if (s.descriptor_pool && !s.abandoned)
    s.vk.vkDestroyDescriptorPool(s.device, s.descriptor_pool, nullptr);
  s.descriptor_pool = VK_NULL_HANDLE;
  uint32_t capacity = std::max(bindings, 16u);
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, capacity};
  auto create =
      detail::make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  create.maxSets = 1;
  create.poolSizeCount = 1;
  create.pPoolSizes = &size;
  s.check(s.vk.vkCreateDescriptorPool(s.device, &create, nullptr, &s.descriptor_pool),
          "vkCreateDescriptorPool", context);
  s.descriptor_capacity = capacity;
}

VkDescriptorSet bind_buffers(detail::DeviceState& s, const Pipeline& pipeline,
                             const std::vector<Buffer*>& buffers, const ErrorContext& context) {
  if (buffers.empty())
    return VK_NULL_HANDLE;
  ensure_descriptor_pool(s, static_cast<uint32_t>(buffers.size()), context);
  // Dispatches are synchronous, so the previous set is no longer in use.
  s.check(s.vk.vkResetDescriptorPool(s.device, s.descriptor_pool, 0), "vkResetDescriptorPool",
          context);
  VkDescriptorSetLayout layout = pipeline.set_layout();
  auto alloc =
      detail::make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  alloc.descriptorPool = s.descriptor_pool;
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &layout;
  VkDescriptorSet set;
  s.check(s.vk.vkAllocateDescriptorSets(s.device, &alloc, &set), "vkAllocateDescriptorSets",
          context);
  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (uint32_t i = 0; i < buffers.size(); ++i) {
    infos[i] = {buffers[i]->handle(), 0, VK_WHOLE_SIZE};
    writes[i] = detail::make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  s.vk.vkUpdateDescriptorSets(s.device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                              nullptr);
  return set;
}

void check_launch(const detail::DeviceState& s, const Pipeline& pipeline,
                  const std::vector<Buffer*>& buffers, std::size_t push_bytes, GroupGrid groups,
                  const ErrorContext& context) {
  if (buffers.size() != pipeline.num_storage_buffers())
    throw Error(ErrorKind::Usage,
                "dispatch binds " + std::to_string(buffers.size()) + " buffers; the kernel has " +
                    std::to_string(pipeline.num_storage_buffers()) + " storage buffers",
                context);
  if (push_bytes != pipeline.push_constant_bytes())
    throw Error(ErrorKind::Usage,
                "dispatch pushes " + std::to_string(push_bytes) +
                    " bytes of constants; the kernel "
                    "takes " +
                    std::to_string(pipeline.push_constant_bytes()),
                context);
  const auto& max = s.info.limits.max_compute_work_group_count;
  if (groups.x > max[0] || groups.y > max[1] || groups.z > max[2])
    throw Error(ErrorKind::Unsupported,
                "a grid of " + std::to_string(groups.x) + " x " + std::to_string(groups.y) + " x " +
                    std::to_string(groups.z) + " workgroups exceeds maxComputeWorkGroupCount " +
                    std::to_string(max[0]) + " x " + std::to_string(max[1]) + " x " +
                    std::to_string(max[2]) + " of device " + s.info.name +
                    " (plan_groups() folds a long grid into 2D)",
                context);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    ErrorContext at = context;
    if (!buffers[i])
      throw Error(ErrorKind::Usage, "binding " + std::to_string(i) + " is null", at);
    at.buffer = buffers[i]->name().empty() ? "#" + std::to_string(i) : buffers[i]->name();
    if (!buffers[i]->belongs_to(s))
      throw Error(ErrorKind::Usage, "the buffer belongs to another Device", at);
    if (buffers[i]->size() > s.info.limits.max_storage_buffer_range)
      throw Error(ErrorKind::Unsupported,
                  "a " + std::to_string(buffers[i]->size()) +
                      "-byte buffer exceeds "
                      "maxStorageBufferRange (" +
                      std::to_string(s.info.limits.max_storage_buffer_range) +
                      " bytes) of device " + s.info.name,
                  at);
  }
}

} // namespace

Device::Device(Instance& instance, const DeviceInfo& info, const Features& features,
               DeviceOptions options, const std::string& kernel)
    : state_(std::make_unique<detail::DeviceState>()) {
  require_features(info, features, kernel);
  auto& s = *state_;
  s.info = info;
  s.features = features;
  s.options = options;
  s.physical = instance.state().physical_devices.at(info.index);
  s.api_version = std::min(instance.api_version(), info.api_version);
  s.staged = options.memory == MemoryMode::Staged ||
             (options.memory == MemoryMode::Auto && !info.unified_memory);
  vkGetPhysicalDeviceMemoryProperties(s.physical, &s.memory);
  create_device(s, kernel);
}

Device::~Device() = default;
Device::Device(Device&&) noexcept = default;
Device& Device::operator=(Device&&) noexcept = default;

bool Device::abandoned() const {
  return state_ && state_->abandoned;
}

const DeviceInfo& Device::info() const {
  return state_->info;
}
const Features& Device::features() const {
  return state_->features;
}
bool Device::staged() const {
  return state_->staged;
}

Buffer Device::create_buffer(uint64_t bytes, std::string name) {
  return Buffer(*state_, bytes, std::move(name));
}

Buffer Device::create_mapped_buffer(uint64_t bytes, std::string name) {
  return Buffer(*state_, bytes, std::move(name), true);
}

Pipeline* Device::find_pipeline(uint64_t key) {
  auto it = state_->pipelines.find(key);
  return it == state_->pipelines.end() ? nullptr : it->second.get();
}

std::size_t Device::pipeline_count() const {
  return state_->pipelines.size();
}

Pipeline& Device::pipeline(uint64_t key, const Program& program) {
  auto& s = *state_;
  ErrorContext context = kernel_context(program.kernel_name);
  s.ensure_alive(context);
  if (Pipeline* cached = find_pipeline(key)) {
    if (cached->spirv_hash() != spirv_hash(program.spirv))
      throw Error(ErrorKind::Internal,
                  "pipeline key " + std::to_string(key) + " already holds kernel " +
                      cached->kernel_name() + " with different SPIR-V",
                  context);
    return *cached;
  }
  require_features(s.info, program.needs, program.kernel_name);
  if (!covers(s.features, program.needs))
    throw Error(ErrorKind::Usage,
                "needs " + describe_features(program.needs) + " but this Device enables only " +
                    describe_features(s.features) + " (Runtime::device(needs) picks the right one)",
                context);
  auto created = std::make_unique<Pipeline>(s, program);
  Pipeline& result = *created;
  s.pipelines.emplace(key, std::move(created));
  return result;
}

LaunchTiming Device::dispatch(Pipeline& pipeline, const std::vector<Buffer*>& buffers,
                              std::span<const std::byte> push, GroupGrid groups,
                              const DispatchWait* wait) {
  auto& s = *state_;
  ErrorContext context = kernel_context(pipeline.kernel_name());
  s.ensure_alive(context);
  check_launch(s, pipeline, buffers, push.size(), groups, context);

  uint64_t start = detail::now_ns();
  VkDescriptorSet set = bind_buffers(s, pipeline, buffers, context);
  VkCommandBuffer cmd = s.begin(context);
  if (s.timestamps)
    s.vk.vkCmdResetQueryPool(cmd, s.timestamps, 0, 2);
  // Earlier uploads (copies) and dispatches wrote these buffers in other submissions; a fence
  // wait on the host does not order them against this one.
  s.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  if (s.timestamps)
    s.vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s.timestamps, 0);
  s.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.handle());
  if (set)
    s.vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &set,
                                 0, nullptr);
  if (!push.empty())
    s.vk.vkCmdPushConstants(cmd, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                            static_cast<uint32_t>(push.size()), push.data());
  s.vk.vkCmdDispatch(cmd, groups.x, groups.y, groups.z);
  if (s.timestamps)
    s.vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s.timestamps, 1);
  // Mapped buffers are read by the host next, staged ones by a copy.
  s.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
  LaunchTiming timing;
  timing.stopped = s.submit_and_wait(context, wait);
  timing.wall_ns = detail::now_ns() - start;
  if (timing.stopped)
    return timing; // its timestamps and time say nothing about the kernel

  if (s.timestamps) {
    uint64_t ticks[2];
    s.check(s.vk.vkGetQueryPoolResults(s.device, s.timestamps, 0, 2, sizeof ticks, ticks,
                                       sizeof(uint64_t),
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
            "vkGetQueryPoolResults", context);
    uint32_t bits = s.info.limits.timestamp_valid_bits;
    uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    uint64_t elapsed = (ticks[1] - ticks[0]) & mask;
    timing.device_ns = static_cast<uint64_t>(elapsed * double(s.info.limits.timestamp_period));
  }
  pipeline.record_dispatch(timing.wall_ns);
  return timing;
}

} // namespace halfway::vk
