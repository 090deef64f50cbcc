#pragma once
// Comparing one element of a reference output with the device's, bit for bit.
//
// Floats compare by num::same_result under the device's float controls:
//  - equal bit patterns after flushing both sides in formats the device flushes (the interpreter
//    already flushes the operands and results of float ops there; flushing again accepts a device
//    that flushes a conversion or a store too, which SPIR-V allows);
//  - any NaN equals any NaN, whatever its sign and payload: IEEE 754 leaves both unspecified for
//    a NaN result, the interpreter returns canonical NaNs and devices do not;
//  - zeros compare with their sign, unless the device does not preserve signed zero, inf and NaN;
//    then +-0 are equal and anything is accepted where either side is an infinity or a NaN.
// Integers (and anything that is not a float) compare by equality of the bits.

#include "halfway/ir/types.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "halfway/numerics/formats.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace halfway::diff {

// The numerics format of a float type; none for integers and bool.
std::optional<num::Format> float_format(ir::ScalarType type);

bool same_bits(ir::ScalarType type, uint64_t reference, uint64_t device,
               const num::FloatControls& controls);

// How far apart two values are: for floats the number of representable values between them
// (num::ulp_distance: adjacent values 1, +0/-0 0, two NaNs 0, a NaN and a number UINT64_MAX),
// after flushing both where the controls flush; for integers the absolute difference.
uint64_t distance(ir::ScalarType type, uint64_t a, uint64_t b, const num::FloatControls& controls);

// "1.5 (0x3e00)", "-nan (0xfe00)", "-7 (0xfffffff9)": the value and its bit pattern.
std::string format_value(ir::ScalarType type, uint64_t bits);
// The value alone ("1.5", "nan", "-inf", "-7"), floats with enough digits to be exact-ish (%.9g
// for f32 and narrower, %.17g for f64).
std::string value_text(ir::ScalarType type, uint64_t bits);
// Why the number `v` is not exactly a value of the float type `type`, for messages about a
// scalar argument (the CLI's --arg, the Python module's scalars): "out of range for f16 (the
// largest finite value is 65504)" or "not exactly representable in bf16; the nearest value is
// 0.100097656". For a `v` that ir::exact_bits refuses.
std::string inexact_reason(ir::ScalarType type, double v);
// "0x3e00", as wide as the type.
std::string bits_text(ir::ScalarType type, uint64_t bits);

} // namespace halfway::diff
