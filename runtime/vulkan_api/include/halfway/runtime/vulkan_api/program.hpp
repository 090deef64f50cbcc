#pragma once
// A kernel as the runtime sees it: SPIR-V words and the shape of its interface; and the pipeline
// made from it.
//
// The interface is deliberately narrow, matching what codegen/spirv emits: storage buffers at
// bindings 0..n-1 of descriptor set 0, and one push-constant block at offset 0 for scalars. No
// uniform buffers, images or specialisation constants.

#include "halfway/runtime/vulkan_api/features.hpp"

#include <cstdint>
#include <string>
#include <vector>
#include <vulkan/vulkan_core.h>

namespace halfway::vk {

namespace detail {
struct DeviceState;
}

struct Program {
  std::string kernel_name{}; // for errors and reports, e.g. "linear<f16>"
  std::vector<uint32_t> spirv{};
  std::string entry = "main";
  uint32_t num_storage_buffers = 0; // bindings 0..n-1 in set 0
  uint32_t push_constant_bytes = 0; // a multiple of 4, at most maxPushConstantsSize
  Features needs{};
};

// FNV-1a over the words: lets the pipeline cache catch a key reused for different code.
uint64_t spirv_hash(const std::vector<uint32_t>& spirv);

// Shader module, descriptor-set layout, pipeline layout and compute pipeline for one Program on
// one Device. Made and owned by Device::pipeline(); valid as long as the Device.
class Pipeline {
public:
  Pipeline(detail::DeviceState& device, const Program& program);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  const std::string& kernel_name() const { return kernel_name_; }
  uint32_t num_storage_buffers() const { return num_storage_buffers_; }
  uint32_t push_constant_bytes() const { return push_constant_bytes_; }
  const Features& needs() const { return needs_; }
  uint64_t spirv_hash() const { return spirv_hash_; }
  // vkCreateShaderModule through vkCreateComputePipelines. Drivers that compile lazily (Mesa)
  // pay the real compile at the first dispatch instead: see first_dispatch_wall_ns().
  uint64_t creation_ns() const { return creation_ns_; }
  // Wall time of the first dispatch, which includes any lazy compile; 0 before it.
  uint64_t first_dispatch_wall_ns() const { return first_dispatch_wall_ns_; }

  VkPipeline handle() const { return pipeline_; }
  VkPipelineLayout layout() const { return layout_; }
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  // Called by Device::dispatch.
  void record_dispatch(uint64_t wall_ns);

private:
  void destroy() noexcept;

  detail::DeviceState& device_;
  std::string kernel_name_;
  uint32_t num_storage_buffers_;
  uint32_t push_constant_bytes_;
  Features needs_;
  uint64_t spirv_hash_;
  uint64_t creation_ns_ = 0;
  uint64_t first_dispatch_wall_ns_ = 0;
  uint64_t dispatch_count_ = 0;
  VkShaderModule module_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

} // namespace halfway::vk
