#pragma once
// A storage buffer on one Device, with host upload and download.
//
// Where the memory lives depends on the device (Device::staged()): on one-heap and unified
// devices (lavapipe, integrated GPUs) the buffer is host-visible, coherent and mapped for its
// whole life, so upload and download are memcpy. On discrete GPUs it is device-local and every
// transfer goes through the Device's staging buffer with a copy command, because kernels read
// device-local memory at full bandwidth and mapped BAR memory at a fraction of it.
//
// Transfers are synchronous, like dispatches: when upload() or download() returns, the data is
// where it was asked to be. The Device must outlive its buffers.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include <vulkan/vulkan_core.h>

namespace halfway::vk {

namespace detail {
struct DeviceState;
}

class Buffer {
public:
  Buffer() = default;
  // `always_mapped`: host-visible and coherent even on a staged device (small buffers the host
  // reads or writes while a dispatch runs, such as the control buffer).
  Buffer(detail::DeviceState& device, uint64_t bytes, std::string name, bool always_mapped = false);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint64_t size() const { return size_; }
  const std::string& name() const { return name_; }
  VkBuffer handle() const { return buffer_; }
  // The mapping, or null for a staged buffer.
  std::byte* mapped() const { return mapped_; }
  bool belongs_to(const detail::DeviceState& device) const { return device_ == &device; }

  // Throw Error(Usage) naming the buffer when offset + data runs past size().
  void upload(std::span<const std::byte> data, uint64_t offset = 0);
  void download(std::span<std::byte> out, uint64_t offset = 0) const;

  template <class T> void upload(std::span<const T> data, uint64_t offset = 0) {
    upload(std::as_bytes(data), offset);
  }
  template <class T> void upload(const std::vector<T>& data, uint64_t offset = 0) {
    upload(std::as_bytes(std::span<const T>(data)), offset);
  }
  template <class T> void download(std::span<T> out, uint64_t offset = 0) const {
    download(std::as_writable_bytes(out), offset);
  }
  // The whole buffer as elements of T (size() / sizeof(T) of them).
  template <class T> std::vector<T> download_as() const {
    std::vector<T> out(size_ / sizeof(T));
    download(std::span<T>(out));
    return out;
  }

private:
  void release() noexcept;

  detail::DeviceState* device_ = nullptr;
  std::string name_;
  uint64_t size_ = 0;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  std::byte* mapped_ = nullptr; // null when staged
};

} // namespace halfway::vk
