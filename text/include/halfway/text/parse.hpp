#pragma once
// Kernels as text: the .hk files a user writes, diffs, attaches to a bug report and runs, so that
// every numerical surprise is reproducible from one file. The text form is exactly what
// ir::print writes (specs/ir-text.md has the grammar); parsing it back gives the same kernel:
// print(parse(text)) == text for canonical text, and parse(print(k)) hashes like k.

#include "halfway/ir/kernel.hpp"
#include "halfway/ir/verifier.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace halfway::text {

// Every kernel in `text`, in order, not yet verified. A malformed text throws halfway::Error
// (ErrorKind::Parse) whose message reads "file_name:line:column: parse error: expected X, found
// Y", followed by the offending line and a caret under the column.
std::vector<ir::Kernel> parse_kernels(std::string_view text, const std::string& file_name);

// Parses and verifies every kernel. A verifier error (ErrorKind::Verify) is rethrown with the file,
// line, column and source line of the statement or expression it is about.
std::vector<ir::VerifiedKernel> parse_verified(std::string_view text, const std::string& file_name);

} // namespace halfway::text
