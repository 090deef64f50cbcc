#include "device_state.hpp"
#include "halfway/runtime/vulkan_api/program.hpp"
#include "halfway/runtime/vulkan_api/result.hpp"
#include "halfway/support/driver_call.hpp"
#include "loader.hpp"
#include "structs.hpp"

#include <cstring>

namespace halfway::vk {

uint64_t spirv_hash(const std::vector<uint32_t>& spirv) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t word : spirv) {
    for (int i = 0; i < 4; ++i) {
      h ^= (word >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

namespace {

// Refuse what would otherwise reach the driver as undefined behaviour.
void check_program(const detail::DeviceState& d, const Program& p, const ErrorContext& context) {
  if (p.spirv.size() < 5 || p.spirv[0] != 0x07230203u)
    throw Error(ErrorKind::Usage, "the program is not SPIR-V (no magic number)", context);
  if (p.entry.empty())
    throw Error(ErrorKind::Usage, "the program has no entry point name", context);
  // Vulkan 1.2 consumes SPIR-V up to 1.5, Vulkan 1.3 up to 1.6. A newer module would reach the
  // driver as undefined behaviour rather than as an error.
  uint32_t version = p.spirv[1];
  uint32_t max_version = VK_API_VERSION_MINOR(d.api_version) >= 3 ? 0x00010600u : 0x00010500u;
  if (version > max_version)
    throw Error(ErrorKind::Unsupported,
                "SPIR-V " + std::to_string(version >> 16) + "." +
                    std::to_string((version >> 8) & 0xff) + " needs a newer Vulkan than " +
                    api_version_string(d.api_version) + " of device " + d.info.name,
                context);
  if (p.push_constant_bytes % 4 != 0)
    throw Error(ErrorKind::Usage,
                "push constants of " + std::to_string(p.push_constant_bytes) +
                    " bytes: Vulkan wants a multiple of 4",
                context);
  const Limits& l = d.info.limits;
  if (p.push_constant_bytes > l.max_push_constants_size)
    throw Error(ErrorKind::Unsupported,
                "push constants of " + std::to_string(p.push_constant_bytes) +
                    " bytes exceed maxPushConstantsSize " +
                    std::to_string(l.max_push_constants_size) + " of device " + d.info.name,
                context);
  if (p.num_storage_buffers > l.max_per_stage_descriptor_storage_buffers)
    throw Error(ErrorKind::Unsupported,
                std::to_string(p.num_storage_buffers) +
                    " storage buffers exceed maxPerStageDescriptorStorageBuffers " +
                    std::to_string(l.max_per_stage_descriptor_storage_buffers) + " of device " +
                    d.info.name,
                context);
}

} // namespace

Pipeline::Pipeline(detail::DeviceState& d, const Program& p)
    : device_(d), kernel_name_(p.kernel_name), num_storage_buffers_(p.num_storage_buffers),
      push_constant_bytes_(p.push_constant_bytes), needs_(p.needs),
      spirv_hash_(vk::spirv_hash(p.spirv)) {
  ErrorContext context = kernel_context(p.kernel_name);
  check_program(d, p, context);
  uint64_t start = detail::now_ns();
  // The driver compiles here, on this thread: some drivers crash on valid SPIR-V
  // (support/driver_call.hpp), and the CLI then names this kernel and device.
  const support::DriverCall call(p.kernel_name, d.describe(), "compiling its pipeline");
  try {
    auto module =
        detail::make<VkShaderModuleCreateInfo>(VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    module.codeSize = p.spirv.size() * sizeof(uint32_t);
    module.pCode = p.spirv.data();
    d.check(d.vk.vkCreateShaderModule(d.device, &module, nullptr, &module_), "vkCreateShaderModule",
            context);

    std::vector<VkDescriptorSetLayoutBinding> bindings(p.num_storage_buffers);
    for (uint32_t i = 0; i < p.num_storage_buffers; ++i)
      bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    auto set = detail::make<VkDescriptorSetLayoutCreateInfo>(
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
    set.bindingCount = p.num_storage_buffers;
    set.pBindings = bindings.data();
    d.check(d.vk.vkCreateDescriptorSetLayout(d.device, &set, nullptr, &set_layout_),
            "vkCreateDescriptorSetLayout", context);

    VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_constant_bytes};
    auto layout =
        detail::make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &set_layout_;
    layout.pushConstantRangeCount = p.push_constant_bytes ? 1 : 0;
    layout.pPushConstantRanges = &push;
    d.check(d.vk.vkCreatePipelineLayout(d.device, &layout, nullptr, &layout_),
            "vkCreatePipelineLayout", context);

    auto create =
        detail::make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
    create.stage = detail::make<VkPipelineShaderStageCreateInfo>(
        VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = module_;
    create.stage.pName = p.entry.c_str();
    create.layout = layout_;
    d.check(
        d.vk.vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &create, nullptr, &pipeline_),
        "vkCreateComputePipelines", context);
  } catch (...) {
    destroy();
    throw;
  }
  creation_ns_ = detail::now_ns() - start;
}

Pipeline::~Pipeline() {
  destroy();
}

void Pipeline::destroy() noexcept {
  auto& d = device_;
  if (pipeline_)
    d.vk.vkDestroyPipeline(d.device, pipeline_, nullptr);
  if (layout_)
    d.vk.vkDestroyPipelineLayout(d.device, layout_, nullptr);
  if (set_layout_)
    d.vk.vkDestroyDescriptorSetLayout(d.device, set_layout_, nullptr);
  if (module_)
    d.vk.vkDestroyShaderModule(d.device, module_, nullptr);
  pipeline_ = VK_NULL_HANDLE;
  layout_ = VK_NULL_HANDLE;
  set_layout_ = VK_NULL_HANDLE;
  module_ = VK_NULL_HANDLE;
}

void Pipeline::record_dispatch(uint64_t wall_ns) {
  if (dispatch_count_++ == 0)
    first_dispatch_wall_ns_ = wall_ns;
}

} // namespace halfway::vk
