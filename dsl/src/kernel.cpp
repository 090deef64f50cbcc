#include "halfway/dsl/kernel.hpp"

namespace halfway::detail {

std::string param_name(const std::vector<std::string>& names, size_t i) {
  if (i < names.size())
    return names[i];
  return "p" + std::to_string(i);
}

} // namespace halfway::detail
