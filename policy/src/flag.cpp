#include "halfway/policy/flag.hpp"

namespace halfway::policy {
namespace {

// The opt-in whose flag name `arg` starts with, followed by end, ':' or '='.
std::optional<OptIn> flag_kind(std::string_view arg) {
  for (OptIn kind : kAllOptIns) {
    std::string_view name = opt_in_flag(kind);
    if (!arg.starts_with(name))
      continue;
    std::string_view rest = arg.substr(name.size());
    if (rest.empty() || rest.front() == ':' || rest.front() == '=')
      return kind;
  }
  return std::nullopt;
}

OptInFlagParse failure(std::string error) {
  return {std::nullopt, std::move(error)};
}

} // namespace

bool is_opt_in_flag(std::string_view arg) {
  return flag_kind(arg).has_value();
}

OptInFlagParse parse_opt_in_flag(std::string_view arg) {
  auto kind = flag_kind(arg);
  if (!kind) {
    return failure("'" + std::string(arg) + "' is not " +
                   std::string(opt_in_flag(OptIn::SingleRounding)) + " or " +
                   std::string(opt_in_flag(OptIn::RelaxedAccumulation)) + ".");
  }
  std::string name(opt_in_flag(*kind));
  std::string_view rest = arg.substr(name.size());
  std::string usage =
      " Write " + name + ":REASON for all kernels or " + name + "=KERNEL:REASON for one kernel.";
  if (rest.empty())
    return failure(name + " needs a reason." + usage);
  if (rest.front() == ':') {
    return {OptInFlag{*kind, Scope::all_kernels(), std::string(rest.substr(1))}, {}};
  }
  rest.remove_prefix(1); // '='
  size_t colon = rest.find(':');
  if (colon == std::string_view::npos)
    return failure(name + " needs ':REASON' after the kernel name." + usage);
  if (colon == 0)
    return failure(name + "= names no kernel." + usage);
  return {OptInFlag{*kind, Scope::kernel(std::string(rest.substr(0, colon))),
                    std::string(rest.substr(colon + 1))},
          {}};
}

std::string to_flag(const OptInFlag& flag) {
  std::string out(opt_in_flag(flag.kind));
  if (!flag.scope.is_all_kernels())
    out += "=" + flag.scope.kernel_name();
  return out + ":" + flag.reason;
}

} // namespace halfway::policy
