#pragma once
// Small pieces the subcommands share so that every one of them treats the user's numbers, files,
// terminal and Ctrl-C the same way:
//   - strict parsing of counts and seconds, and checked size arithmetic;
//   - escaping of control characters before anything reaches a terminal;
//   - output files replaced atomically (temporary file, fsync, rename), checked before a launch;
//   - the SIGINT flag handed to devices as LaunchOptions::cancel, and a watchdog that ends the
//     process cleanly when a launch ignores its deadline or the interrupt;
//   - logging on stderr, and the one result document `--json` prints.

#include "halfway/diff/report.hpp"
#include "halfway/support/error.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::cli {

// ---- text and numbers ----------------------------------------------------------------------

// `s` with every control character (and DEL) written as \xHH, and backslashes left alone; with
// keep_layout, '\n' and '\t' stay as they are (multi-line text such as an error with its source
// line and caret, whose names were escaped field by field).
std::string escape_for_terminal(std::string_view s, bool keep_layout = false);

// A decimal count: digits only (no sign, no spaces, no suffix), at most 2^64-1. Anything else is
// a Usage error "OPTION TEXT: ...".
uint64_t parse_count(std::string_view text, std::string_view option);

// A duration in seconds ("2", "0.5"): positive, finite, at most 10^6. Returns whole
// milliseconds, rounded up. Usage error otherwise.
std::chrono::milliseconds parse_seconds(std::string_view text, std::string_view option);

std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b);
std::optional<uint64_t> checked_add(uint64_t a, uint64_t b);

// Bytes of RAM this machine has (0 when unknown): host buffers larger than this are refused
// before they are allocated.
uint64_t physical_memory_bytes();

// ---- files --------------------------------------------------------------------------------

// Checks, before any work, that `path` can be written by write_file_atomically: it is not a
// directory, not a device, FIFO or socket, its folder exists and is writable, and an existing
// file there is writable. Throws ErrorKind::Io naming the path and the reason.
void check_output_path(const std::string& path, std::string_view option);

// Writes `bytes` to a temporary file in the folder of `path` (symbolic links followed), checks
// every write and the close, fsyncs it and renames it over `path`; an existing file keeps its
// permission bits. On any failure the temporary file is removed, `path` is left as it was, and
// ErrorKind::Io names the path and strerror(errno).
void write_file_atomically(const std::string& path, std::string_view bytes);

// The two halves of write_file_atomically, for several files that should appear together: the
// constructor writes, fsyncs and closes the temporary file (throwing as above), commit() renames
// it over the target; a StagedFile destroyed before commit() removes its temporary file.
class StagedFile {
public:
  StagedFile(const std::string& path, std::string_view bytes);
  StagedFile(StagedFile&& other) noexcept;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  StagedFile& operator=(StagedFile&&) = delete;
  ~StagedFile();
  void commit();

private:
  void discard();
  std::string path_, target_, folder_, temp_; // temp_ empty: nothing to remove
};

// ---- interrupts and deadlines ---------------------------------------------------------------

// Installs the SIGINT handler once and returns its flag, for LaunchOptions::cancel. The first
// Ctrl-C raises the flag (the handler does nothing else); the handler resets itself, so a second
// Ctrl-C ends the process the default way.
const std::atomic<bool>* install_interrupt_handler();
bool interrupt_requested();

// While a LaunchWatch lives, a watchdog thread ends the process with exit status 2 (printing the
// Timeout or Interrupted error the usual way, --json included) when the launch runs `grace` past
// `budget`, or `grace` past a Ctrl-C: devices are expected to stop by themselves
// (LaunchOptions::timeout and cancel), and this bounds those that cannot (a hung driver). Output
// files are never written while a LaunchWatch lives, so none is left half-written.
// After the watched work returns, check() throws Timeout when it took longer than `budget`
// and Interrupted when Ctrl-C came meanwhile.
// `what` names the work in messages: "the launch on cpu".
class LaunchWatch {
public:
  LaunchWatch(std::string kernel, std::string what, std::chrono::milliseconds budget);
  ~LaunchWatch();
  LaunchWatch(const LaunchWatch&) = delete;
  LaunchWatch& operator=(const LaunchWatch&) = delete;
  void check() const;

private:
  std::string kernel_, device_;
  std::chrono::milliseconds budget_;
  std::chrono::steady_clock::time_point start_;
};

// Throws Interrupted when Ctrl-C was pressed (between launches, before files are written).
void throw_if_interrupted(const std::string& kernel);

// ---- driver crashes ---------------------------------------------------------------------------

// Installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT (on an alternate stack) that,
// while a driver call is in flight (support/driver_call.hpp), print the usual one-line error
// naming the kernel, the device and what the driver was doing, --json included, and end the
// process with status 2; any other fatal signal is a bug of halfway and goes on to the action
// these handlers replaced: a sanitizer's report, or the default action (a core dump to debug).
// Calling it again changes nothing. Nothing can continue after a driver crashed in the process:
// `halfway fuzz` runs its campaign in a child process for that reason (fuzz_process.hpp).
void install_crash_report();
// The default actions again, for a child process whose parent reports its death.
void remove_crash_report();
// "SIGSEGV" for SIGSEGV, "signal N" for one without a name here.
std::string signal_name(int sig);

// ---- logging and output -------------------------------------------------------------------

// spdlog's default logger writes to stderr ("halfway: LEVEL: message"), colours only on a
// terminal and never with NO_COLOR set; the level comes from HALFWAY_LOG (trace, debug, info,
// warn, error, off; default info), then `verbosity` (> 0 --verbose: debug, > 1 trace; < 0
// --quiet: error) overrides it.
void setup_logging(int verbosity);

// JSON string literals: diff::json_quote (halfway/diff/report.hpp).
using diff::json_quote;

// {"kind": "usage", "title": "usage error", "message": ..., "text": format_error(...), and the
// context fields that are set: "file", "line", "column", "kernel", "node", "buffer", "index",
// "length", "workgroup", "lane"}.
std::string error_json(ErrorKind kind, const std::string& message, const ErrorContext& context);

// What a command prints on stdout. In text mode text() prints at once (control characters
// escaped); in JSON mode results are collected and finish() prints exactly one document:
//     {"command": "run", "results": [RESULT, ...], "error": null | ERROR}
// Errors always also go to stderr as "halfway: MESSAGE".
class Output {
public:
  static Output& get();
  void set_json(bool json, std::string command);
  bool json() const { return json_; }
  void text(const std::string& s);
  void result(std::string json_value);
  // Prints the JSON document (when in JSON mode) without an error.
  void finish();
  // Prints the error on stderr and, in JSON mode, the document holding it. Safe to call from the
  // watchdog thread; only the first call prints.
  void fail(ErrorKind kind, const std::string& message, const ErrorContext& context);

private:
  bool json_ = false;
  bool done_ = false;
  std::string command_;
  std::vector<std::string> results_;
};

} // namespace halfway::cli
