#pragma once
// Names of the runtime functions generated code calls (runtime_symbols.hpp). One list, read by
// the lowering (declarations) and by runtime_symbols.cpp (definitions).

namespace halfway::codegen::llvm::detail {

// uint64_t (uint32_t fn, uint32_t format, uint64_t x, uint64_t y): num::math.
inline constexpr const char* kMathSymbol = "halfway_cpu_math";
// uint64_t (uint32_t from, uint64_t bits, uint32_t to, uint32_t rounding, uint32_t saturate):
// num::convert_bits.
inline constexpr const char* kConvertSymbol = "halfway_cpu_convert";
// uint64_t (uint64_t value, uint32_t width, uint32_t is_signed, uint32_t to, uint32_t rounding,
// uint32_t saturate): num::int_to_float.
inline constexpr const char* kIntToFloatSymbol = "halfway_cpu_int_to_float";

} // namespace halfway::codegen::llvm::detail
