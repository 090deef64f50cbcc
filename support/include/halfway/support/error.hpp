#pragma once
// One error type for every user-facing failure in halfway. An Error carries what went wrong
// (its kind) and where (kernel, node, buffer, lane, file:line); format() renders both the same
// way everywhere, and the CLI maps any Error to exit status 2.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace halfway {

enum class ErrorKind {
  Verify,        // the kernel is ill-typed or ill-formed
  Parse,         // malformed kernel text
  OutOfBounds,   // a load or store past the end of a buffer or shared array
  DivideByZero,  // integer division or remainder by zero
  ShiftOverflow, // a shift by at least the operand's width
  Barrier,       // a barrier reached by only part of a workgroup
  DataRace,      // two lanes touched the same shared element between barriers, one writing
  Unsupported,   // a backend cannot express a construct, or a device lacks a feature
  Device,        // device loss, out of memory, no device
  Usage,         // bad arguments: sizes, types, unknown names, missing files
  Limit,       // a device limit exceeded: shared bytes, workgroup size, group counts, buffer sizes
  Timeout,     // a launch ran past its deadline (LaunchOptions::timeout)
  Interrupted, // a launch was cancelled (Ctrl-C, or the caller's cancel flag)
  Io,          // a file could not be read or written (errno and path in the message)
  Internal,    // a bug in halfway itself
};

const char* error_kind_name(ErrorKind kind);

// Where an error happened. Every field is optional; format() prints those that are set.
struct ErrorContext {
  std::string kernel;
  std::optional<uint32_t> node; // expression or statement id inside the kernel
  std::string node_text;        // a short rendering of that node
  std::string buffer;
  std::optional<uint64_t> index;
  std::optional<uint64_t> length;
  std::optional<uint64_t> workgroup; // linear workgroup id
  std::optional<uint32_t> lane;      // local invocation index inside the workgroup
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string source_line; // the offending line of text, for a caret under `column`
};

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, std::string message, ErrorContext context = {});

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const ErrorContext& context() const { return context_; }

private:
  ErrorKind kind_;
  std::string message_;
  ErrorContext context_;
};

// "file:line:col: kernel K, node N (text): message [buffer B index I of length L, workgroup W lane
// L]" followed, when known, by the source line and a caret. Every part that may hold user text
// goes through printable(), so that an error message never carries terminal control sequences;
// the caret stays under its column (an escape is four columns wide, tabs are kept).
std::string format_error(ErrorKind kind, const std::string& message, const ErrorContext& context);

// `text` safe to print on a terminal: C0 control characters (newline excepted when
// keep_newlines; tab always kept), DEL, the C1 controls U+0080..U+009F and bytes that are not
// well-formed UTF-8 become \xHH, one escape per byte. Other UTF-8 is kept.
std::string printable(std::string_view text, bool keep_newlines = false);

} // namespace halfway
