#include "halfway/codegen/spirv/codegen.hpp"

#include <spirv-tools/libspirv.hpp>

namespace halfway::codegen::spirv {

std::string validate(std::span<const uint32_t> words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string messages;
  tools.SetMessageConsumer(
      [&](spv_message_level_t, const char*, const spv_position_t& position, const char* message) {
        messages += "word " + std::to_string(position.index) + ": " + message + "\n";
      });
  spvtools::ValidatorOptions options;
  if (tools.Validate(words.data(), words.size(), options))
    return {};
  return messages.empty() ? std::string("invalid module") : messages;
}

std::string disassemble(std::span<const uint32_t> words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string text;
  if (!tools.Disassemble(words.data(), words.size(), &text,
                         SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES |
                             SPV_BINARY_TO_TEXT_OPTION_INDENT))
    return "; (the module could not be disassembled)\n";
  return text;
}

} // namespace halfway::codegen::spirv
