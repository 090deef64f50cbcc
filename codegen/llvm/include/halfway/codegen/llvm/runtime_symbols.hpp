#pragma once
// Functions of halfway's numerics library that generated code calls where LLVM has no exact
// instruction: the elementary functions (correctly rounded, as the interpreter's), fp8
// narrowings, and integer-to-float conversions that would otherwise round twice. The JIT defines
// each name as an absolute symbol at the function's address in this process.

#include <span>

namespace halfway::codegen::llvm {

struct RuntimeSymbol {
  const char* name;
  void* address;
};

std::span<const RuntimeSymbol> runtime_symbols();

} // namespace halfway::codegen::llvm
