#include "source.hpp"

#include "halfway/ir/printer.hpp"
#include "halfway/text/parse.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

namespace halfway::text {

namespace {
bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == '+';
}
// Where a `//` comment starts in a line, skipping quoted names; npos when there is none.
size_t comment_start(std::string_view line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quoted && line[i] == '\\') {
      ++i;
    } else if (line[i] == '"') {
      quoted = !quoted;
    } else if (!quoted && line[i] == '/' && i + 1 < line.size() && line[i + 1] == '/') {
      return i;
    }
  }
  return std::string_view::npos;
}

} // namespace

Source::Source(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
  if (text.size() > kMaxTextBytes) {
    ErrorContext c;
    c.file = file_;
    throw Error(ErrorKind::Parse,
                "kernel text of " + std::to_string(text.size()) +
                    " bytes is larger than the limit of " + std::to_string(kMaxTextBytes) +
                    " bytes (16 MiB)",
                c);
  }
  // Exactly: text of short lines has a line start per 5 bytes, and doubling would hold up to twice
  // that while the IR is built.
  line_starts_.reserve(1 + static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));
  line_starts_.push_back(0);
  for (uint32_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      line_starts_.push_back(i + 1);
}

uint32_t Source::line_of(uint32_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return static_cast<uint32_t>(it - line_starts_.begin());
}

uint32_t Source::column_of(uint32_t offset) const {
  return offset - line_starts_[line_of(offset) - 1] + 1;
}

std::string_view Source::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size())
    return {};
  uint32_t begin = line_starts_[line - 1];
  uint32_t end = line < line_starts_.size() ? line_starts_[line] - 1 : uint32_t(text_.size());
  if (end > begin && text_[end - 1] == '\r')
    --end;
  return text_.substr(begin, end - begin);
}

uint32_t Source::first_nonblank(uint32_t line) const {
  std::string_view l = line_text(line);
  size_t i = l.find_first_not_of(" \t");
  uint32_t start = line == 0 || line > line_starts_.size() ? 0 : line_starts_[line - 1];
  return start + static_cast<uint32_t>(i == std::string_view::npos ? 0 : i);
}

uint32_t Source::skip_blank(uint32_t offset) const {
  while (offset < text_.size()) {
    char c = text_[offset];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++offset;
    } else if (c == '/' && offset + 1 < text_.size() && text_[offset + 1] == '/') {
      while (offset < text_.size() && text_[offset] != '\n')
        ++offset;
    } else {
      break;
    }
  }
  return offset;
}

uint32_t Source::end_of_previous_token(uint32_t offset) const {
  uint32_t p = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  while (p > 0) {
    char c = text_[p - 1];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      --p;
      continue;
    }
    uint32_t start = line_starts_[line_of(p - 1) - 1];
    size_t comment = comment_start(text_.substr(start, p - start));
    if (comment == std::string_view::npos)
      break;
    p = start + static_cast<uint32_t>(comment);
  }
  return p;
}

ErrorContext Source::context(uint32_t offset) const {
  ErrorContext c;
  c.file = file_;
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(text_.size()));
  c.line = line_of(offset);
  c.column = column_of(offset);
  c.source_line = std::string(line_text(c.line));
  return c;
}

void Source::fail(uint32_t offset, const std::string& message) const {
  throw Error(ErrorKind::Parse, message, context(offset));
}

std::string Source::token_at(uint32_t offset) const {
  if (offset >= text_.size())
    return "end of input";
  char c = text_[offset];
  if (c == '\n' || c == '\r')
    return "end of line";
  size_t end = offset;
  while (end < text_.size() && end - offset < 40 && is_word_char(text_[end]))
    ++end;
  if (end == offset)
    end = offset + 1;
  std::string token(text_.substr(offset, end - offset));
  // Keep messages printable whatever the input holds.
  for (char& ch : token)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f)
      ch = '?';
  return "'" + token + "'";
}

BodySize estimate_body(const Source& source, uint32_t offset) {
  std::string_view t = source.text();
  BodySize out;
  uint32_t depth = 1;
  // The last character before the current one that is not blank or in a comment; the body
  // starts after a '{'.
  char last = '{';
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  // The names read in the current stretch: a part of a line in which no local comes into or goes
  // out of scope, so that a name means one local, parameter or constant throughout, and the
  // lowering gives all its reads one node (lower.cpp). A stretch ends at a line end, where a
  // let's or for's new local comes into scope (the ';' of the let, the '{' of the loop's body),
  // and at the '}' of a block that declared a local. Each name counts once per stretch: at least
  // once per line and meaning, as the lowering needs.
  std::vector<std::string_view> names;
  size_t distinct = 0; // names[0, distinct) are sorted and distinct
  auto compact = [&] {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    distinct = names.size();
  };
  auto end_stretch = [&] {
    compact();
    out.tokens += names.size();
    names.clear();
    distinct = 0;
  };
  bool declared = false; // a let or for named a local that comes into scope at the next ';' or '{'
  // Per open block (depth - 1; check_nesting bounds the depth), whether it declared a local.
  std::vector<bool> declares(1, false);
  std::string_view previous; // the word before
  for (size_t i = offset; i < t.size(); ++i) {
    const char c = t[i];
    if (blank(c)) {
      if (c == '\n' || c == '\r')
        end_stretch();
      continue;
    }
    if (is_word_char(c)) {
      size_t end = i;
      while (end < t.size() && is_word_char(t[end]))
        ++end;
      size_t next = end;
      while (next < t.size() && blank(t[next]))
        ++next;
      const char after = next < t.size() ? t[next] : '\0';
      const std::string_view word = t.substr(i, end - i);
      const bool named = std::isalpha(static_cast<unsigned char>(c)) || c == '_';
      // Words that are never an expression node: a statement's first word (a keyword, a local
      // assigned to, a buffer stored to, an atomic), a type (after ':'), a template argument
      // (after '<'), and a declared or assigned name (followed by ':' or '='; `inf:f32` is a
      // constant, and `inf` cannot name anything).
      const bool never = last == ';' || last == '{' || last == '}' || last == ':' || last == '<' ||
                         after == '=' || (after == ':' && named && word != "inf");
      declared = declared || previous == "let" || previous == "for";
      if (never) {
      } else if (ir::is_identifier(word) && !is_literal_word(word) && after != '(' &&
                 after != '[' && after != '<') {
        // A name read in an expression: a local, a scalar parameter or a named constant.
        names.push_back(word);
        if (names.size() >= 2 * distinct + 4096) // bounded by the distinct names, not the reads
          compact();
      } else {
        ++out.tokens;
      }
      previous = word;
      last = t[end - 1];
      i = end - 1;
      continue;
    }
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      while (i < t.size() && t[i] != '\n')
        ++i;
      end_stretch();
      continue;
    }
    last = c;
    if (c == '"') {
      for (++i; i < t.size() && t[i] != '"' && t[i] != '\n'; ++i)
        if (t[i] == '\\')
          ++i;
      continue;
    }
    if (c == ';') {
      ++out.statements;
      out.top_level += depth == 1;
      if (declared)
        end_stretch(); // the let's local comes into scope
      declares.back() = declares.back() || declared;
      declared = false;
    } else if (c == '{') {
      ++depth;
      if (declared)
        end_stretch(); // the loop variable comes into scope in the body
      declares.push_back(declared);
      declared = false;
    } else if (c == '}') {
      ++out.statements;
      if (declares.back())
        end_stretch(); // the block's locals go out of scope
      declares.pop_back();
      if (--depth == 0)
        break;
      out.top_level += depth == 1;
    }
  }
  end_stretch();
  return out;
}

namespace {

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The offset of the next token after `i`, past whitespace and comments.
uint32_t next_token(std::string_view t, uint32_t i) {
  while (i < t.size()) {
    if (std::isspace(static_cast<unsigned char>(t[i]))) {
      ++i;
    } else if (t[i] == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      while (i < t.size() && t[i] != '\n')
        ++i;
    } else {
      break;
    }
  }
  return i;
}

// Whether the word `w` stands at `i` (and no identifier character follows it).
bool word_at(std::string_view t, uint32_t i, std::string_view w) {
  return t.substr(i, w.size()) == w &&
         (i + w.size() >= t.size() || !is_ident_char(t[i + w.size()]));
}

} // namespace

void check_nesting(const Source& source) {
  std::string_view t = source.text();
  uint32_t depth = 0;
  // Each `else if` nests the following if inside the else block, one level deeper for the parser,
  // until the chain ends: chained[d] counts the open `else if` levels of the chain at brace depth
  // d, released at the first `}` back to d that no `else` follows.
  std::vector<uint32_t> chained(1, 0);
  uint32_t braces = 0;
  auto deeper = [&](uint32_t at) {
    if (++depth > kMaxNesting)
      source.fail(at, "nesting is deeper than " + std::to_string(kMaxNesting) +
                          " levels of parentheses, brackets, braces and else-if chains");
  };
  for (uint32_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') { // comment: to the end of the line
      while (i < t.size() && t[i] != '\n')
        ++i;
    } else if (c == '"') { // quoted name: to the closing quote (the grammar reports a missing one)
      for (++i; i < t.size() && t[i] != '"' && t[i] != '\n'; ++i)
        if (t[i] == '\\')
          ++i;
    } else if (is_ident_char(c)) { // a word: `else if` opens a level
      uint32_t start = i;
      while (i + 1 < t.size() && is_ident_char(t[i + 1]))
        ++i;
      if (word_at(t, start, "else") && i + 1 - start == 4 &&
          word_at(t, next_token(t, i + 1), "if")) {
        deeper(start);
        ++chained[braces];
      }
    } else if (c == '(' || c == '[' || c == '{') {
      deeper(i);
      if (c == '{') {
        ++braces;
        if (chained.size() <= braces)
          chained.push_back(0);
        chained[braces] = 0;
      }
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
      if (c == '}' && braces > 0) {
        depth -= chained[braces]; // a chain left open inside the block ends with it
        chained[braces] = 0;
        --braces;
        if (chained[braces] > 0 && !word_at(t, next_token(t, i + 1), "else")) {
          depth -= chained[braces];
          chained[braces] = 0;
        }
      }
    }
  }
}

} // namespace halfway::text
