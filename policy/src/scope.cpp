#include "halfway/policy/scope.hpp"

namespace halfway::policy {

std::string to_string(const Scope& scope) {
  if (scope.is_all_kernels())
    return "all kernels";
  return "kernel '" + scope.kernel_name() + "'";
}

} // namespace halfway::policy
