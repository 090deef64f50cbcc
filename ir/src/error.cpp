#include "halfway/ir/error.hpp"

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

std::string format_error(ErrorKind kind, const std::string& message, const ErrorContext& c) {
  std::ostringstream out;
  if (!c.file.empty()) {
    out << c.file;
    if (c.line)
      out << ':' << c.line << ':' << c.column;
    out << ": ";
  }
  out << error_kind_name(kind) << ": ";
  if (!c.kernel.empty())
    out << "kernel " << c.kernel;
  if (c.node) {
    out << (c.kernel.empty() ? "" : ", ") << "node " << *c.node;
    if (!c.node_text.empty())
      out << " (" << c.node_text << ')';
  }
  if (!c.kernel.empty() || c.node)
    out << ": ";
  out << message;
  bool where = !c.buffer.empty() || c.index || c.workgroup || c.lane;
  if (where) {
    out << " [";
    const char* sep = "";
    if (!c.buffer.empty()) {
      out << "buffer " << c.buffer;
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
    out << '\n' << "  " << c.source_line << '\n' << "  ";
    for (uint32_t i = 1; i < c.column; ++i)
      out << (c.source_line[i - 1] == '\t' ? '\t' : ' ');
    out << '^';
  }
  return out.str();
}

Error::Error(ErrorKind kind, std::string message, ErrorContext context)
    : std::runtime_error(format_error(kind, message, context)), kind_(kind),
      message_(std::move(message)), context_(std::move(context)) {}

} // namespace halfway
