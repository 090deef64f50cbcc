#pragma once
// Kernels as text: the .hk files a user writes, diffs, attaches to a bug report and runs, so that
// every numerical surprise is reproducible from one file. The text form is exactly what
// ir::print writes (specs/ir-text.md has the grammar); parsing it back gives the same kernel:
// print(parse(text)) == text for canonical text, and parse(print(k)) hashes like k.

#include "halfway/ir/kernel.hpp"
#include "halfway/ir/verifier.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::text {

// The largest kernel text the parser accepts, in bytes (16 MiB): parse_file refuses a larger file
// before reading it, and parsing refuses larger text. Parsing takes memory proportional to the
// text: the IR plus the syntax of one top-level statement at a time, at most 20 times the text
// for dense expressions; more for text of nothing but the shortest statements (`x=x;` repeated:
// 32 times) and for one statement holding a multi-megabyte expression (61 times); specs/ir-text.md
// has each shape's figure. Nesting of brackets is limited to 128 levels.
inline constexpr uint64_t kMaxTextBytes = uint64_t{16} << 20;

// Every kernel in `text`, in order, not yet verified. A malformed text throws halfway::Error
// (ErrorKind::Parse) whose message reads "file_name:line:column: parse error: expected X, found
// Y", followed by the offending line and a caret under the column.
std::vector<ir::Kernel> parse_kernels(std::string_view text, const std::string& file_name);

// Parses and verifies every kernel. A verifier error (ErrorKind::Verify) is rethrown with the file,
// line, column and source line of the statement or expression it is about.
std::vector<ir::VerifiedKernel> parse_verified(std::string_view text, const std::string& file_name);

} // namespace halfway::text
