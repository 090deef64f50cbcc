#pragma once
// Which Vulkan drivers get the opaque-identity narrowing barrier.
//
// NoContraction stops a driver from contracting a*b+c into an FMA, but some compilers also fuse an
// f32 multiply(-add) into the f32->f16 conversion that follows it (AMD's v_fma_mixlo_f16) as a
// late peephole that ignores NoContraction. For those drivers the code generator puts an integer
// identity the compiler cannot see through (bitcast, XOR with a push-constant zero, bitcast back)
// between the f32 value and the conversion. The table is keyed by VkDriverId; a driver not in it
// gets NoContraction only. Add a row, with its evidence, when a driver is measured fusing.

#include <cstdint>
#include <span>

namespace halfway::codegen::spirv {

struct DriverFusion {
  uint32_t driver_id; // VkDriverId
  const char* name;
  bool opaque_identity; // emit the opaque identity before barriered narrowings
  const char* evidence;
};

std::span<const DriverFusion> driver_fusion_table();
// The row for `driver_id`, or null.
const DriverFusion* find_driver(uint32_t driver_id);
// True when the table says the driver gets the opaque identity.
bool driver_needs_opaque_identity(uint32_t driver_id);

// Iterations after which the driver silently ends any loop (Target::loop_limit), 0 for none
// known. Lavapipe (llvmpipe, VkDriverId 13): 65,535, gallivm's loop limiter; measured here with a
// `for` of 100,000 iterations that ran 65,535 and went on.
uint32_t driver_loop_limit(uint32_t driver_id);

} // namespace halfway::codegen::spirv
