#pragma once
// The fusion part of `halfway demo` (specs/fusion.md).
#include "halfway/runtime/device.hpp"

#include <string>

namespace halfway::cli {

// Runs the three-kernel elementwise chain of examples/pipelines.hpp unfused on the interpreter
// (the reference) and unfused and fused on every device, under strict rounding, and returns a
// table of one row per device; `ok` becomes false when a fused output is not bit-exact.
std::string demo_fusion(const rt::LaunchOptions& launch, bool& ok);

} // namespace halfway::cli
