#pragma once
// NaN bits, tracked lazily. The interpreter's arithmetic returns the canonical quiet NaN with the
// sign bit clear; x86 returns a negative default NaN or an operand's payload. Both are "a NaN" to
// every later arithmetic op, so generated code only fixes the bits where they can be observed:
// stores, bitcasts, packs, conversions and the sign operations (neg, abs, copysign). Each lowered
// value carries how far its NaN bits may be from the interpreter's; locals carry the join over all
// their assignments, so accumulation loops stay free of selects and still vectorise.

#include "halfway/ir/kernel.hpp"

#include <vector>

namespace halfway::codegen::llvm::detail {

enum class NanState : uint8_t {
  NoNan,         // never a NaN (a constant, an integer converted): compatible with every state
  Clean,         // bit-identical to the interpreter's value
  SignedPayload, // a NaN here has the interpreter's sign but maybe another payload (widenings)
  Dirty,         // a NaN here stands for the interpreter's canonical +qNaN (arithmetic results)
};

// Two values meeting (select arms, a local's assignments) keep a state only when they agree:
// a Dirty NaN must become +qNaN while a Clean one must keep its bits. `agree` is false when the
// states conflict; the values must then be made Clean first, and the result is Clean.
inline NanState merge(NanState a, NanState b, bool& agree) {
  agree = true;
  if (a == NanState::NoNan)
    return b;
  if (b == NanState::NoNan || a == b)
    return a;
  agree = false;
  return NanState::Clean;
}

// The state of an op's result given its operands' (the lowering produces values at least this
// clean; see lower_expr.cpp).
NanState result_nan_state(const ir::Kernel& k, const ir::Expr& e, const NanState* args);

// Whether widening fp8 format `t` to f32 (lower_convert.cpp) gives a NaN of the code's sign
// without a select: such a widening to f32 or f64 is SignedPayload rather than Clean.
bool fp8_widening_keeps_nan_sign(ir::ScalarType t);

// The state of each local: the merge over every value assigned to it (a fixpoint). When the
// assignments disagree the local is Clean, and each assignment stores canonical bits.
std::vector<NanState> local_nan_states(const ir::Kernel& k);

} // namespace halfway::codegen::llvm::detail
