#pragma once
// Emulating a device's float controls (SPIR-V DenormFlushToZero / SignedZeroInfNanPreserve,
// Vulkan's VkPhysicalDeviceFloatControlsProperties) so the interpreter can match a device bit for
// bit or judge it fairly.
//
// What a flushing device does: an operation executed with flush-to-zero for a bit width treats
// each subnormal input as a zero of the same sign and replaces a subnormal result by a zero of the
// same sign (after rounding). Conversions and loads/stores that merely move bits are not required
// to flush. To emulate an operation, flush every operand with apply_flush, compute exactly, flush
// the result. SPIR-V also allows a device to flush only sometimes; the differential checker should
// then accept either the flushed or the unflushed answer, which these helpers make easy to compute.
// Lavapipe advertises neither preserve nor flush, and was measured not to flush f32 inputs
// (docs/measured.md).
//
// Which flag applies: F16 -> flush_f16, F32 -> flush_f32, F64 -> flush_f64. BF16 follows flush_f32:
// devices compute bf16 in their f32 units, and bf16 subnormals are f32 subnormals there. FP8 is a
// storage format only (converted exactly to wider formats before any arithmetic) and is never
// flushed.

#include "halfway/numerics/formats.hpp"

#include <cstdint>

namespace halfway::num {

struct FloatControls {
  bool flush_f16 = false;
  bool flush_f32 = false;
  bool flush_f64 = false;
  // SignedZeroInfNanPreserve. When false the device may ignore the sign of zero and treat
  // infinities and NaNs as undefined; same_result then accepts any answer where either side is
  // inf or NaN and compares zeros without their sign.
  bool preserve_signed_zero_inf_nan = true;
};

// Whether subnormals of format f are flushed under these controls.
bool flushes(Format f, const FloatControls& c);

// A subnormal pattern becomes the zero of the same sign when f is flushed; anything else is
// returned unchanged.
uint64_t apply_flush(Format f, uint64_t bits, const FloatControls& c);

// Whether a device result `got` is acceptable for the exact (unflushed) reference `want` under
// the controls: bit-identical after flushing both, or both NaN (any payload), or equal up to the
// sign of zero / involving inf or NaN when signed zero/inf/NaN are not preserved.
bool same_result(Format f, uint64_t want, uint64_t got, const FloatControls& c);

} // namespace halfway::num
