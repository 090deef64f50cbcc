#include "device_state.hpp"

#include "halfway/runtime/vulkan_api/result.hpp"
#include "halfway/support/driver_call.hpp"
#include "structs.hpp"

#include <algorithm>
#include <chrono>

namespace halfway::vk::detail {

namespace {

// Largest chunk the staging buffer grows to; bigger transfers go through it in pieces.
constexpr uint64_t kMaxStaging = 64ull << 20;

} // namespace

std::string DeviceState::describe() const {
  std::string s = "Vulkan device " + info.name;
  const std::string& driver = info.driver_info.empty() ? info.driver_name : info.driver_info;
  if (!driver.empty())
    s += ", driver " + driver;
  return s;
}

DeviceState::~DeviceState() {
  if (!device)
    return;
  if (abandoned) { // a dispatch may still run: leak every object it may use (see `abandoned`)
    for (auto& [key, pipeline] : pipelines)
      static_cast<void>(pipeline.release());
    return;
  }
  vk.vkDeviceWaitIdle(device);
  pipelines.clear();
  release(staging);
  if (descriptor_pool)
    vk.vkDestroyDescriptorPool(device, descriptor_pool, nullptr);
  if (timestamps)
    vk.vkDestroyQueryPool(device, timestamps, nullptr);
  if (fence)
    vk.vkDestroyFence(device, fence, nullptr);
  if (command_pool)
    vk.vkDestroyCommandPool(device, command_pool, nullptr);
  vk.vkDestroyDevice(device, nullptr);
}

void DeviceState::check(VkResult result, std::string_view call, const ErrorContext& context) {
  if (result == VK_SUCCESS)
    return;
  if (result == VK_ERROR_DEVICE_LOST)
    lost = std::string(call);
  throw result_error(result, call, context, info.name);
}

void DeviceState::ensure_alive(const ErrorContext& context) const {
  if (lost.empty())
    return;
  throw Error(ErrorKind::Device,
              "device " + info.name + " was lost earlier (in " + lost + ") and runs nothing more",
              context);
}

namespace {

// How well memory type `flags` suits `use`; -1 when it cannot serve at all. Every host-visible
// use needs coherence, so no code path ever flushes or invalidates.
int memory_score(VkMemoryPropertyFlags flags, MemoryUse use) {
  constexpr VkMemoryPropertyFlags mappable =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  bool device_local = flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  bool host_visible = (flags & mappable) == mappable;
  switch (use) {
  case MemoryUse::Mapped:
    return host_visible ? (device_local ? 1 : 0) : -1;
  // Not the small host-visible BAR window if the device has plain device-local memory.
  case MemoryUse::DeviceLocal:
    return device_local ? ((flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ? 0 : 1) : -1;
  // Downloads read the staging buffer on the host: cached memory reads an order of magnitude
  // faster than write-combined; and keep the BAR window for others.
  case MemoryUse::Staging:
    return host_visible
               ? ((flags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 2 : 0) + (device_local ? 0 : 1)
               : -1;
  }
  return -1;
}

const char* use_name(MemoryUse use) {
  switch (use) {
  case MemoryUse::Mapped:
    return "host-visible coherent";
  case MemoryUse::DeviceLocal:
    return "device-local";
  case MemoryUse::Staging:
    return "host-visible coherent staging";
  }
  return "";
}

} // namespace

Allocation DeviceState::allocate(uint64_t bytes, MemoryUse use, const ErrorContext& context) {
  Allocation a;
  auto create = detail::make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  create.size = std::max<uint64_t>(bytes, 4); // Vulkan has no empty buffers
  create.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vk.vkCreateBuffer(device, &create, nullptr, &a.buffer), "vkCreateBuffer", context);

  VkMemoryRequirements needs;
  vk.vkGetBufferMemoryRequirements(device, a.buffer, &needs);
  uint32_t chosen = UINT32_MAX;
  int best = -1;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if (!(needs.memoryTypeBits & (1u << i)))
      continue;
    int score = memory_score(memory.memoryTypes[i].propertyFlags, use);
    if (score > best) {
      best = score;
      chosen = i;
    }
  }
  if (chosen == UINT32_MAX) {
    release(a);
    throw Error(ErrorKind::Unsupported,
                "device " + info.name + " has no " + use_name(use) +
                    " memory type for storage buffers",
                context);
  }

  auto alloc = detail::make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.allocationSize = needs.size;
  alloc.memoryTypeIndex = chosen;
  try {
    check(vk.vkAllocateMemory(device, &alloc, nullptr, &a.memory), "vkAllocateMemory", context);
    check(vk.vkBindBufferMemory(device, a.buffer, a.memory, 0), "vkBindBufferMemory", context);
    if (use != MemoryUse::DeviceLocal) {
      void* mapped = nullptr;
      check(vk.vkMapMemory(device, a.memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory", context);
      a.mapped = static_cast<std::byte*>(mapped);
    }
  } catch (...) {
    release(a);
    throw;
  }
  return a;
}

void DeviceState::release(Allocation& a) noexcept {
  if (abandoned) { // the abandoned dispatch may still write it: leaked (see `abandoned`)
    a = Allocation{};
    return;
  }
  if (a.buffer)
    vk.vkDestroyBuffer(device, a.buffer, nullptr);
  if (a.memory)
    vk.vkFreeMemory(device, a.memory, nullptr); // unmaps implicitly
  a = Allocation{};
}

Allocation& DeviceState::staging_buffer(uint64_t bytes, const ErrorContext& context) {
  bytes = std::min(bytes, kMaxStaging);
  if (staging_size >= bytes && staging.buffer)
    return staging;
  release(staging);
  staging_size = 0;
  staging = allocate(bytes, MemoryUse::Staging, context);
  staging_size = bytes;
  return staging;
}

VkCommandBuffer DeviceState::begin(const ErrorContext& context) {
  auto begin_info =
      detail::make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
  begin_info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vk.vkBeginCommandBuffer(commands, &begin_info), "vkBeginCommandBuffer", context);
  return commands;
}

bool DeviceState::submit_and_wait(const ErrorContext& context, const DispatchWait* wait) {
  check(vk.vkEndCommandBuffer(commands), "vkEndCommandBuffer", context);
  auto submit = detail::make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  // The shader runs on the driver's threads until the fence: a crash there is named too.
  const support::DriverCall call(context.kernel, describe(), "running its dispatch");
  check(vk.vkQueueSubmit(queue, 1, &submit, fence), "vkQueueSubmit", context);
  bool stopped = false;
  VkResult waited = VK_TIMEOUT;
  if (wait) {
    using namespace std::chrono;
    const auto ns = [](milliseconds ms) { return static_cast<uint64_t>(nanoseconds(ms).count()); };
    const auto give_up = steady_clock::now() + nanoseconds(options.fence_timeout_ns);
    while ((waited = vk.vkWaitForFences(device, 1, &fence, VK_TRUE, ns(wait->slice))) ==
               VK_TIMEOUT &&
           steady_clock::now() < give_up) {
      if (wait->expired && wait->expired()) {
        stopped = true;
        if (wait->stop)
          wait->stop();
        // The dispatch normally ends within the grace. If not, keep waiting (up to the fence
        // timeout): returning while it runs would free buffers the shader may still write.
        waited = vk.vkWaitForFences(device, 1, &fence, VK_TRUE, ns(wait->grace));
        if (waited == VK_TIMEOUT) {
          const auto left = give_up - steady_clock::now();
          waited = vk.vkWaitForFences(
              device, 1, &fence, VK_TRUE,
              left.count() > 0 ? static_cast<uint64_t>(duration_cast<nanoseconds>(left).count())
                               : 0);
        }
        if (waited == VK_TIMEOUT) {
          lost = "vkWaitForFences (a stopped dispatch did not end)";
          abandoned = true;
          throw Error(ErrorKind::Device,
                      "device " + info.name + " did not end a stopped dispatch within " +
                          std::to_string(options.fence_timeout_ns / 1'000'000'000) +
                          " s; treating the device as lost",
                      context);
        }
        break;
      }
    }
  } else {
    waited = vk.vkWaitForFences(device, 1, &fence, VK_TRUE, options.fence_timeout_ns);
  }
  if (waited == VK_TIMEOUT) {
    lost = "vkWaitForFences (timed out)";
    abandoned = true;
    throw Error(ErrorKind::Device,
                "device " + info.name + " did not finish within " +
                    std::to_string(options.fence_timeout_ns / 1'000'000'000) +
                    " s (vkWaitForFences timed out); treating the device as lost",
                context);
  }
  check(waited, "vkWaitForFences", context);
  check(vk.vkResetFences(device, 1, &fence), "vkResetFences", context);
  check(vk.vkResetCommandBuffer(commands, 0), "vkResetCommandBuffer", context);
  return stopped;
}

void DeviceState::barrier(VkPipelineStageFlags src_stages, VkAccessFlags src_access,
                          VkPipelineStageFlags dst_stages, VkAccessFlags dst_access) {
  auto b = detail::make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  b.srcAccessMask = src_access;
  b.dstAccessMask = dst_access;
  vk.vkCmdPipelineBarrier(commands, src_stages, dst_stages, 0, 1, &b, 0, nullptr, 0, nullptr);
}

} // namespace halfway::vk::detail
