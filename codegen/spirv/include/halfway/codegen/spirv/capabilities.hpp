#pragma once
// The one table of what halfway's SPIR-V can ask of a Vulkan device: each capability the code
// generator may declare, the extension SPIR-V 1.3 needs for it, and the device feature (a Needs
// field) that must be enabled for it. The code generator declares capabilities, extensions and
// Needs by walking it; the Vulkan device turns Needs into Vulkan features by walking
// needs_features(), whose names are Vulkan's, so no other place lists the pairs.

#include "halfway/codegen/spirv/codegen.hpp"

#include <span>
#include <spirv/unified1/spirv.hpp11>

namespace halfway::codegen::spirv {

struct CapabilityRow {
  spv::Capability capability;
  const char* name;      // as spirv-dis prints it, and as Shader::capabilities lists it
  const char* extension; // the SPV_KHR_* extension it needs in SPIR-V 1.3, or null
  // The device feature it needs, or null: Shader is always there, the float-controls modes are
  // properties the Target reports (not features), and Int64Atomics needs a feature that depends
  // on where the atomics are (buffer or shared), which the code generator sets itself.
  bool Needs::*need;
};

// In the order modules declare them.
std::span<const CapabilityRow> capability_table();

struct NeedsFeature {
  bool Needs::*need;
  const char* vulkan_name; // the member of Vulkan's feature structs, e.g. "shaderFloat16"
};

// Every Needs field with Vulkan's name for it.
std::span<const NeedsFeature> needs_features();

} // namespace halfway::codegen::spirv
