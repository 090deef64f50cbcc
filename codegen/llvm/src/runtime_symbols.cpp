#include "halfway/codegen/llvm/runtime_symbols.hpp"

#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/int_convert.hpp"
#include "halfway/numerics/math.hpp"
#include "symbol_names.hpp"

#include <array>

namespace {

using halfway::num::Format;
using halfway::num::Fp8Overflow;
using halfway::num::Rounding;

extern "C" uint64_t halfway_cpu_math(uint32_t fn, uint32_t format, uint64_t x, uint64_t y) {
  return halfway::num::math(static_cast<halfway::num::MathFn>(fn), static_cast<Format>(format), x,
                            y);
}

extern "C" uint64_t halfway_cpu_convert(uint32_t from, uint64_t bits, uint32_t to,
                                        uint32_t rounding, uint32_t saturate) {
  return halfway::num::convert_bits(static_cast<Format>(from), bits, static_cast<Format>(to),
                                    static_cast<Rounding>(rounding),
                                    saturate ? Fp8Overflow::Saturate : Fp8Overflow::Nan);
}

extern "C" uint64_t halfway_cpu_int_to_float(uint64_t value, uint32_t width, uint32_t is_signed,
                                             uint32_t to, uint32_t rounding, uint32_t saturate) {
  return halfway::num::int_to_float(value, static_cast<int>(width), is_signed != 0,
                                    static_cast<Format>(to), static_cast<Rounding>(rounding),
                                    saturate ? Fp8Overflow::Saturate : Fp8Overflow::Nan);
}

} // namespace

namespace halfway::codegen::llvm {

std::span<const RuntimeSymbol> runtime_symbols() {
  static const std::array<RuntimeSymbol, 3> symbols = {{
      {detail::kMathSymbol, reinterpret_cast<void*>(&halfway_cpu_math)},
      {detail::kConvertSymbol, reinterpret_cast<void*>(&halfway_cpu_convert)},
      {detail::kIntToFloatSymbol, reinterpret_cast<void*>(&halfway_cpu_int_to_float)},
  }};
  return symbols;
}

} // namespace halfway::codegen::llvm
