#pragma once
// Models of known device issues (tests/known-device-issues/) that change a value rather than only
// a NaN's sign or payload: each is a rewrite of the kernel into what the driver computes. A
// violating element is explained by a model when the rewritten kernel's reference, judged by the
// same checker (intervals included), accepts the device's element: the campaign replays the
// device's results against the rewritten kernel (campaign.cpp), so each element is judged on its
// own and nothing else about the kernel is excused.

#include "halfway/ir/kernel.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace halfway::kernelgen::detail {

// Appends the node op(args) of type t (imm: a constant's bits, a builtin's dimension) to k.
ir::ExprId add_node(ir::Kernel& k, ir::Op op, ir::ScalarType t,
                    std::initializer_list<ir::ExprId> args, uint64_t imm = 0);

struct QuirkModel {
  std::string cause; // "known device issue: ..." as the campaign prints it
  ir::Kernel kernel; // the kernel as the driver computes it
};

// The models that apply to `kernel` on the device named `device` (those that change nothing are
// left out).
std::vector<QuirkModel> quirk_models(const ir::Kernel& kernel, const std::string& device);

} // namespace halfway::kernelgen::detail
