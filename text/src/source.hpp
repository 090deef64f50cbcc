#pragma once
// The text being parsed, with an index of where its lines start, so that any byte offset becomes
// file:line:column plus the line's text for a caret. Every error the text library raises about a
// place in the text is built here, so all of them look the same.

#include "halfway/support/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::text {

class Source {
public:
  // `text` must outlive the Source.
  Source(std::string_view text, std::string file);

  std::string_view text() const { return text_; }
  const std::string& file() const { return file_; }

  uint32_t line_of(uint32_t offset) const; // 1-based
  uint32_t lines() const { return static_cast<uint32_t>(line_starts_.size()); }
  uint32_t column_of(uint32_t offset) const; // 1-based, in bytes
  std::string_view line_text(uint32_t line) const;
  // Offset of the first character of `line` that is not a space or tab.
  uint32_t first_nonblank(uint32_t line) const;

  // The first offset from `offset` on that is not whitespace or inside a `//` comment.
  uint32_t skip_blank(uint32_t offset) const;

  // Just after the last token before `offset`, looking back over whitespace and comments.
  uint32_t end_of_previous_token(uint32_t offset) const;

  // file, line, column and source line of `offset`.
  ErrorContext context(uint32_t offset) const;
  [[noreturn]] void fail(uint32_t offset, const std::string& message) const;

  // The token at `offset` as an error message shows it: 'name', '1.5', ';' or "end of input".
  std::string token_at(uint32_t offset) const;

private:
  std::string_view text_;
  std::string file_;
  std::vector<uint32_t> line_starts_;
};

// Words that read as constants in an expression, so that nothing can be named by them.
inline bool is_literal_word(std::string_view w) {
  return w == "true" || w == "false" || w == "inf";
}

// Upper bounds on what a kernel body holds, from a scan of its text (starting inside the body's
// '{', ending at the matching '}'): every expression node starts a word or number token that is
// not a statement's first word, a type, a template argument or a declared or assigned name, and
// every statement ends in ';' or '}' (a top-level one at depth 1). The reads of a name on one line
// share a node (lower.cpp), so a name counts once per stretch of a line in which it means one
// thing. The lowering reserves its vectors from them once instead of growing them by doubling,
// which would briefly hold three times the final size; counting only the words that can be new
// nodes keeps the reservation close to the need (`x=x;x=x;` on one line is one node).
struct BodySize {
  uint64_t tokens = 0;
  uint64_t statements = 0; // at any depth
  uint64_t top_level = 0;  // in the body itself, not in a nested block
};
BodySize estimate_body(const Source& source, uint32_t offset);

// Rejects text nested more deeply than the parser may recurse (brackets, parentheses, braces), so
// that hostile input fails with a message instead of exhausting the stack.
inline constexpr uint32_t kMaxNesting = 128;
void check_nesting(const Source& source);

} // namespace halfway::text
