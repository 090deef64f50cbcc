#pragma once
// The command-line form of an opt-in, one argument each:
//     --accept-single-rounding:REASON            all kernels
//     --accept-single-rounding=KERNEL:REASON     the kernel named KERNEL
// and the same with --accept-relaxed-accumulation. KERNEL ends at the first ':', so the reason may
// contain colons and a kernel name may not. An empty KERNEL ("--accept-...=:REASON") is an error
// rather than all kernels: a shell variable that expanded to nothing must not widen an opt-in.
//
// Parsing only splits the argument; whether the opt-in is acceptable (blank reason, default kernel
// name) is the registry's decision, so that the CLI and the API refuse the same things with the
// same messages. Option parsers do not accept "--flag:value", so the CLI picks these arguments
// out of argv itself (is_opt_in_flag) before handing the rest on.

#include "halfway/policy/opt_in.hpp"
#include "halfway/policy/scope.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace halfway::policy {

struct OptInFlag {
  OptIn kind;
  Scope scope;
  std::string reason;

  friend bool operator==(const OptInFlag&, const OptInFlag&) = default;
};

struct OptInFlagParse {
  std::optional<OptInFlag> flag; // set on success
  std::string error;             // on failure, a sentence for the user

  explicit operator bool() const { return flag.has_value(); }
};

// True when `arg` is one of the two flags, well-formed or not: the flag name followed by the end
// of the argument, ':' or '='.
bool is_opt_in_flag(std::string_view arg);

// Parses one whole argument, e.g. "--accept-single-rounding=dot:bounded by the spec".
OptInFlagParse parse_opt_in_flag(std::string_view arg);

// The argument that parse_opt_in_flag turns back into `flag` (for logs and reproducible runs);
// exact only when the kernel name has no ':'.
std::string to_flag(const OptInFlag& flag);

} // namespace halfway::policy
