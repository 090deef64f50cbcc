#include "halfway/policy/fused.hpp"

#include "halfway/ir/names.hpp"

namespace halfway::policy {

std::string fuse_error_message(FuseError error) {
  switch (error) {
  case FuseError::ReservedName:
    return "A fused kernel needs a name of its own, not an empty one nor '" +
           std::string(kDefaultKernelName) + "', which every unnamed kernel has.";
  case FuseError::NoParts:
    return "A fused kernel must be built from at least one part.";
  case FuseError::Conflict:
    return "This fused kernel name is already registered with other parts; give each fusion a "
           "distinct name.";
  case FuseError::Cycle:
    return "A fused kernel cannot be one of its own parts.";
  }
  return "The fused kernel could not be registered.";
}

} // namespace halfway::policy
