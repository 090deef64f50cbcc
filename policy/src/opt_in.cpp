#include "halfway/policy/opt_in.hpp"

namespace halfway::policy {

std::string_view opt_in_name(OptIn kind) {
  switch (kind) {
  case OptIn::SingleRounding:
    return "single rounding";
  case OptIn::RelaxedAccumulation:
    return "relaxed accumulation";
  }
  return "unknown opt-in";
}

std::string_view opt_in_flag(OptIn kind) {
  switch (kind) {
  case OptIn::SingleRounding:
    return "--accept-single-rounding";
  case OptIn::RelaxedAccumulation:
    return "--accept-relaxed-accumulation";
  }
  return "--accept-unknown";
}

} // namespace halfway::policy
