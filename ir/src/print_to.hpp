#pragma once
// The printer writing into a stream: structural_hash hashes the canonical text as it is written,
// without holding it (a large kernel's text is several times the size of the file it came from).

#include "halfway/ir/kernel.hpp"

#include <ostream>

namespace halfway::ir {

void print_to(const Kernel& k, std::ostream& out);

} // namespace halfway::ir
