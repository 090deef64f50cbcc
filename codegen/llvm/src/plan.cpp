#include "plan.hpp"

#include "observable.hpp"

namespace halfway::codegen::llvm::detail {

namespace {

// The NaN state of every node, from the states of its operands and of the locals.
std::vector<NanState> node_nan_states(const ir::Kernel& k, const std::vector<NanState>& locals) {
  std::vector<NanState> out(k.exprs.size(), NanState::NoNan);
  std::vector<bool> known(k.exprs.size(), false);
  auto state = [&](auto& self, ir::ExprId id) -> NanState {
    if (known[id])
      return out[id];
    const ir::Expr& e = k.expr(id);
    NanState args[4] = {};
    for (int i = 0; i < e.nargs; ++i)
      args[i] = self(self, e.args[i]);
    out[id] = e.op == ir::Op::LocalGet ? locals[e.ref] : result_nan_state(k, e, args);
    known[id] = true;
    return out[id];
  };
  for (ir::ExprId id = 0; id < k.exprs.size(); ++id)
    state(state, id);
  return out;
}

} // namespace

LoweringPlan::LoweringPlan(const ir::Kernel& k, const policy::Budget& budget,
                           const LlvmOptions& options)
    : storage(plan_storage(k)), precision(plan_precision(k, budget, options.single_rounding)),
      abi(groups_abi(k)), local_nan(local_nan_states(k)), node_nan(node_nan_states(k, local_nan)),
      observable(observable_locals(k)), address_uniformity(k, ir::LoadLevel::Address),
      lanes(k.workgroup_lanes()) {
  const std::vector<Part>& parts = storage.parts;
  flat = parts.size() == 1 && parts[0].kind == Part::Kind::Lanes && k.shared.empty() &&
         k.privates.empty() && k.workgroup[1] == 1 && k.workgroup[2] == 1;
  for (const ir::SharedArray& s : k.shared) {
    shared_offset.push_back(scratch_bytes);
    scratch_bytes += (uint64_t{s.size} * ir::bytes(s.type) + 63) / 64 * 64;
  }
  // At most 1024 lanes x kMaxPrivateBytes (ir/verifier.hpp): 16 MiB.
  for (const ir::PrivateArray& a : k.privates) {
    private_offset.push_back(scratch_bytes);
    scratch_bytes += (uint64_t{a.size} * ir::bytes(a.type) * lanes + 63) / 64 * 64;
  }
}

} // namespace halfway::codegen::llvm::detail
