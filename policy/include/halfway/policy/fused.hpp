#pragma once
// Kernels built by a fusion pass from other kernels (the parts). Such a kernel computes what its
// parts compute, so it may round as they do only where every part's author agreed: it holds an
// opt-in only when every part holds it. Its generated name is not something an author chose or
// can see in their source, so a Kernel scope naming it covers nothing (registry.hpp).

#include "halfway/policy/outcome.hpp"

#include <string>

namespace halfway::policy {

enum class FuseError {
  // The fused name is empty or halfway::kDefaultKernelName: reading it through parts would change
  // the budget of every unnamed kernel.
  ReservedName,
  // No parts: the meet over nothing would hold every opt-in.
  NoParts,
  // The name is already registered with other parts. Two fusions must not share a name: the
  // launch memo and the report could not tell them apart.
  Conflict,
  // The fused kernel would be (through other fused kernels) one of its own parts.
  Cycle,
};

std::string fuse_error_message(FuseError error);

using FuseOutcome = Outcome<FuseError>;

} // namespace halfway::policy
