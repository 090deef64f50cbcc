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

// Per private array: lane-major when every access is inside a loop and some access indexes by the
// variable of its innermost loop (LoweringPlan::private_lane_major).
std::vector<bool> private_lane_major(const ir::Kernel& k) {
  const size_t n = k.privates.size();
  std::vector<bool> outside_loop(n, false), by_loop_var(n, false);
  std::vector<uint32_t> loops; // enclosing loops' variables, innermost last (kNone: a while)
  // Expressions may share nodes (specs/ir.md): each walk visits a node once, marked with the
  // walk's number.
  std::vector<uint32_t> seen(k.exprs.size(), 0), seen_by_read(k.exprs.size(), 0);
  uint32_t walk = 0, read = 0;
  auto reads = [&](auto& self, ir::ExprId id, uint32_t local) -> bool {
    if (seen_by_read[id] == read)
      return false;
    seen_by_read[id] = read;
    const ir::Expr& e = k.expr(id);
    if (e.op == ir::Op::LocalGet)
      return e.ref == local;
    for (int i = 0; i < e.nargs; ++i)
      if (self(self, e.args[i], local))
        return true;
    return false;
  };
  auto access = [&](uint32_t ref, std::initializer_list<ir::ExprId> indices) {
    if (loops.empty()) {
      outside_loop[ref] = true;
      return;
    }
    for (ir::ExprId i : indices) {
      if (i == ir::kNone || loops.back() == ir::kNone)
        continue;
      ++read;
      if (reads(reads, i, loops.back()))
        by_loop_var[ref] = true;
    }
  };
  auto loads = [&](auto& self, ir::ExprId id) -> void {
    if (seen[id] == walk)
      return;
    seen[id] = walk;
    const ir::Expr& e = k.expr(id);
    if (e.op == ir::Op::Load && e.space == ir::Space::Private)
      access(e.ref, {e.args[0], e.args[1], e.args[2]});
    for (int i = 0; i < e.nargs; ++i)
      self(self, e.args[i]);
  };
  auto statements = [&](auto& self, const ir::Body& body) -> void {
    for (const ir::Stmt& s : body) {
      ++walk;
      for (ir::ExprId root : ir::stmt_exprs(s))
        loads(loads, root);
      if (s.kind == ir::StmtKind::Store && s.space == ir::Space::Private) {
        const auto idx = ir::store_indices(s);
        access(s.mem, {idx[0], idx[1], idx[2]});
      }
      const bool loop = s.kind == ir::StmtKind::For || s.kind == ir::StmtKind::While;
      if (loop)
        loops.push_back(s.kind == ir::StmtKind::For ? s.local : ir::kNone);
      self(self, s.body);
      self(self, s.else_body);
      if (loop)
        loops.pop_back();
    }
  };
  statements(statements, k.body);
  std::vector<bool> out(n);
  for (size_t a = 0; a < n; ++a)
    out[a] = !outside_loop[a] && by_loop_var[a];
  return out;
}

} // namespace

LoweringPlan::LoweringPlan(const ir::Kernel& k, const policy::Budget& budget,
                           const LlvmOptions& options)
    : storage(plan_storage(k)), precision(plan_precision(k, budget, options.single_rounding)),
      abi(groups_abi(k)), local_nan(local_nan_states(k)), node_nan(node_nan_states(k, local_nan)),
      observable(observable_locals(k)), address_uniformity(k, ir::LoadLevel::Address),
      lanes(k.workgroup_lanes()), private_lane_major(detail::private_lane_major(k)) {
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
