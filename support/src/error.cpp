#include "halfway/support/error.hpp"

#include "halfway/support/utf8.hpp"

#include <sstream>

namespace halfway {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::Verify:
    return "verify error";
  case ErrorKind::Parse:
    return "parse error";
  case ErrorKind::OutOfBounds:
    return "out-of-bounds access";
  case ErrorKind::DivideByZero:
    return "integer division by zero";
  case ErrorKind::ShiftOverflow:
    return "shift overflow";
  case ErrorKind::Barrier:
    return "divergent barrier";
  case ErrorKind::DataRace:
    return "shared-memory data race";
  case ErrorKind::Unsupported:
    return "unsupported";
  case ErrorKind::Device:
    return "device error";
  case ErrorKind::Usage:
    return "usage error";
  case ErrorKind::Limit:
    return "device limit exceeded";
  case ErrorKind::Timeout:
    return "timeout";
  case ErrorKind::Interrupted:
    return "interrupted";
  case ErrorKind::Io:
    return "i/o error";
  case ErrorKind::Internal:
    return "internal error";
  }
  return "error";
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] that encodes a code point of U+00A0 or
// above; 0 when there is none (an ASCII byte, a C1 control, a malformed or truncated sequence).
size_t utf8_length(std::string_view text, size_t i) {
  size_t end = i;
  const std::optional<uint32_t> cp = decode_utf8(text, end);
  return cp && *cp >= 0xa0 ? end - i : 0;
}

} // namespace

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if ((b >= 0x20 && b < 0x7f) || b == '\t' || (b == '\n' && keep_newlines)) {
      out += text[i++];
      continue;
    }
    if (size_t n = b >= 0x80 ? utf8_length(text, i) : 0) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 15];
    ++i;
  }
  return out;
}

std::string format_error(ErrorKind kind, const std::string& message, const ErrorContext& c) {
  std::ostringstream out;
  if (!c.file.empty()) {
    out << printable(c.file);
    if (c.line)
      out << ':' << c.line << ':' << c.column;
    out << ": ";
  }
  out << error_kind_name(kind) << ": ";
  if (!c.kernel.empty())
    out << "kernel " << printable(c.kernel);
  if (c.node) {
    out << (c.kernel.empty() ? "" : ", ") << "node " << *c.node;
    if (!c.node_text.empty())
      out << " (" << printable(c.node_text) << ')';
  }
  if (!c.kernel.empty() || c.node)
    out << ": ";
  out << printable(message, true);
  bool where = !c.buffer.empty() || c.index || c.workgroup || c.lane;
  if (where) {
    out << " [";
    const char* sep = "";
    if (!c.buffer.empty()) {
      out << "buffer " << printable(c.buffer);
      sep = ", ";
    }
    if (c.index) {
      out << sep << "index " << *c.index;
      sep = ", ";
    }
    if (c.length) {
      out << sep << "length " << *c.length;
      sep = ", ";
    }
    if (c.workgroup) {
      out << sep << "workgroup " << *c.workgroup;
      sep = ", ";
    }
    if (c.lane)
      out << sep << "lane " << *c.lane;
    out << ']';
  }
  if (!c.source_line.empty()) {
    // The caret line: a tab under a tab, as many spaces as the line prints columns before it.
    const std::string_view line = c.source_line;
    out << '\n' << "  " << printable(line) << '\n' << "  ";
    for (size_t i = 0; i + 1 < c.column && i < line.size();) {
      if (line[i] == '\t') {
        out << '\t';
        ++i;
        continue;
      }
      size_t n = 1, width = 1;
      const auto b = static_cast<unsigned char>(line[i]);
      if (b < 0x20 || b == 0x7f)
        width = 4;
      else if (b >= 0x80 && (n = utf8_length(line, i)) == 0)
        n = 1, width = 4;
      out << std::string(width, ' ');
      i += n;
    }
    out << '^';
  }
  return out.str();
}

Error::Error(ErrorKind kind, std::string message, ErrorContext context)
    : std::runtime_error(format_error(kind, message, context)), kind_(kind),
      message_(std::move(message)), context_(std::move(context)) {}

} // namespace halfway
