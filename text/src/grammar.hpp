#pragma once
// The Spirit X3 grammar of the kernel text (specs/ir-text.md). It is the only file that includes
// X3, which is slow to compile; everything after the syntax tree is plain C++ in lower.cpp.

#include "ast.hpp"
#include "source.hpp"

#include <optional>
#include <vector>

namespace halfway::text {

// Reads the text's syntax piece by piece: a kernel's header and declarations, then its top-level
// statements one at a time, so that memory holds the syntax of one statement, not of a file.
// Both throw Error(Parse) with the position, what was expected and what was found.
class SyntaxReader {
public:
  explicit SyntaxReader(const Source& source) : source_(source) {}
  // The next kernel's header and declarations; nullopt at the end of the text. File-level
  // constants and pipelines read before it are appended to `consts` and `pipelines`.
  std::optional<ast::Kernel> next_kernel(std::vector<ast::Const>& consts,
                                         std::vector<ast::Pipeline>& pipelines);
  // The current kernel's next top-level statement; nullopt once its closing '}' is read.
  std::optional<ast::Stmt> next_statement();
  // Where reading stands: just after the declarations, inside the body, after next_kernel().
  uint32_t position() const { return pos_; }

private:
  const Source& source_;
  uint32_t pos_ = 0;
};

} // namespace halfway::text
