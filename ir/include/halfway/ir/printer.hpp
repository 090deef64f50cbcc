#pragma once
// The canonical text form of a kernel (specs/ir-text.md). It is stable: golden tests compare it,
// the text parser reads it back, and the structural hash is computed from it.

#include "halfway/ir/kernel.hpp"

#include <string>

namespace halfway::ir {

std::string print(const Kernel& k);
// One expression as it appears inside the kernel text, e.g. "add(mul(a, x[i]), y[i])".
std::string print_expr(const Kernel& k, ExprId e);
// A constant's literal text, e.g. "1.5:f32", "nan(0x7fc00000):f32", "true".
std::string print_constant(ScalarType type, uint64_t bits);
// True when `name` can be printed without quotes.
bool is_identifier(std::string_view name);
// `name` as the text form writes a kernel's name: as is when it is an identifier, else in double
// quotes with '"' and '\' escaped.
std::string quoted_name(const std::string& name);

} // namespace halfway::ir
