#pragma once
// How each IR op becomes SPIR-V: one row per ir::Op, in the op table's order. The emitter looks
// up the row for the operand class (float, signed, unsigned, bool) instead of switching on ops;
// only the ops marked Special have a routine of their own.

#include "halfway/ir/ops.hpp"

#include <cstdint>
#include <spirv/unified1/spirv.hpp11>

namespace halfway::codegen::spirv {

enum class ImplKind : uint8_t { None, Core, Glsl, Special };

enum class Special : uint32_t {
  Leaf, // constants, locals, parameters, builtins, len, loads
  Convert,
  Bitcast,
  Pack,
  Unpack,
  FloatMin, // IEEE minNum with -0 < +0, select-based (exact on every driver)
  FloatMax,
  Clamp, // min(max(x, lo), hi) from the min and max above: GLSL's clamps differ when lo > hi
  Copysign,
  Identity, // abs of an unsigned integer
  Select,
  Erf, // refused: no GLSL.std.450 instruction
};

struct Impl {
  ImplKind kind = ImplKind::None;
  uint32_t code = 0; // spv::Op, GLSLstd450 or Special
};

struct SpirvRow {
  ir::Op op;
  Impl f, s, u, b; // float, signed int, unsigned int, bool operands
  // A float arithmetic instruction that gets NoContraction under strict rounding.
  bool contract = false;
  // GLSL.std.450 defines the float form for 16- and 32-bit floats only.
  bool glsl_f16_f32_only = false;
  // bf16 cannot be expressed (computing in f32 would round twice).
  bool bf16_refused = false;
};

const SpirvRow& spirv_row(ir::Op op);

} // namespace halfway::codegen::spirv
