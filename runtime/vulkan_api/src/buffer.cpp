#include "halfway/runtime/vulkan_api/buffer.hpp"

#include "device_state.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace halfway::vk {

namespace {

void check_range(const std::string& name, uint64_t size, uint64_t offset, uint64_t bytes,
                 const char* what) {
  if (offset <= size && bytes <= size - offset)
    return;
  ErrorContext context;
  context.buffer = name;
  context.index = offset;
  context.length = size;
  throw Error(ErrorKind::Usage,
              std::string(what) + " of " + std::to_string(bytes) + " bytes runs past the buffer",
              context);
}

} // namespace

Buffer::Buffer(detail::DeviceState& device, uint64_t bytes, std::string name, bool always_mapped)
    : device_(&device), name_(std::move(name)), size_(bytes) {
  ErrorContext context;
  context.buffer = name_;
  device.ensure_alive(context);
  detail::Allocation a = device.allocate(
      bytes,
      device.staged && !always_mapped ? detail::MemoryUse::DeviceLocal : detail::MemoryUse::Mapped,
      context);
  buffer_ = a.buffer;
  memory_ = a.memory;
  mapped_ = a.mapped;
}

Buffer::~Buffer() {
  release();
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(std::exchange(other.device_, nullptr)), name_(std::move(other.name_)),
      size_(std::exchange(other.size_, 0)), buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::exchange(other.memory_, VK_NULL_HANDLE)),
      mapped_(std::exchange(other.mapped_, nullptr)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this == &other)
    return *this;
  release();
  device_ = std::exchange(other.device_, nullptr);
  name_ = std::move(other.name_);
  size_ = std::exchange(other.size_, 0);
  buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
  memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
  mapped_ = std::exchange(other.mapped_, nullptr);
  return *this;
}

void Buffer::release() noexcept {
  if (!device_)
    return;
  detail::Allocation a{buffer_, memory_, mapped_};
  device_->release(a);
  device_ = nullptr;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
}

void Buffer::upload(std::span<const std::byte> data, uint64_t offset) {
  check_range(name_, size_, offset, data.size(), "an upload");
  if (data.empty())
    return;
  ErrorContext context;
  context.buffer = name_;
  device_->ensure_alive(context);
  if (mapped_) {
    std::memcpy(mapped_ + offset, data.data(), data.size());
    return;
  }
  auto& d = *device_;
  for (uint64_t done = 0; done < data.size();) {
    detail::Allocation& staging = d.staging_buffer(data.size() - done, context);
    uint64_t chunk = std::min<uint64_t>(d.staging_size, data.size() - done);
    std::memcpy(staging.mapped, data.data() + done, chunk);
    VkCommandBuffer cmd = d.begin(context);
    // Earlier dispatches and copies may still read or write the destination.
    d.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
              VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy region{0, offset + done, chunk};
    d.vk.vkCmdCopyBuffer(cmd, staging.buffer, buffer_, 1, &region);
    d.submit_and_wait(context);
    done += chunk;
  }
}

void Buffer::download(std::span<std::byte> out, uint64_t offset) const {
  check_range(name_, size_, offset, out.size(), "a download");
  if (out.empty())
    return;
  ErrorContext context;
  context.buffer = name_;
  device_->ensure_alive(context);
  if (mapped_) {
    std::memcpy(out.data(), mapped_ + offset, out.size());
    return;
  }
  auto& d = *device_;
  for (uint64_t done = 0; done < out.size();) {
    detail::Allocation& staging = d.staging_buffer(out.size() - done, context);
    uint64_t chunk = std::min<uint64_t>(d.staging_size, out.size() - done);
    VkCommandBuffer cmd = d.begin(context);
    d.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
              VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_TRANSFER_BIT,
              VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    VkBufferCopy region{offset + done, 0, chunk};
    d.vk.vkCmdCopyBuffer(cmd, buffer_, staging.buffer, 1, &region);
    d.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
              VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    d.submit_and_wait(context);
    std::memcpy(out.data() + done, staging.mapped, chunk);
    done += chunk;
  }
}

} // namespace halfway::vk
