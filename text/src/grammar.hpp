#pragma once
// The Spirit X3 grammar of the kernel text (specs/ir-text.md). It is the only file that includes
// X3, which is slow to compile; everything after the syntax tree is plain C++ in lower.cpp.

#include "ast.hpp"
#include "source.hpp"

#include <vector>

namespace halfway::text {

// Every kernel in the text, as syntax. Throws Error(Parse) with the position, what was expected
// and what was found.
std::vector<ast::Kernel> parse_syntax(const Source& source);

} // namespace halfway::text
