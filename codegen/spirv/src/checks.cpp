// Checked memory accesses and cancel polls: the module's side of the control buffer.
//
// Every buffer and shared access whose index is not proven in range at generation time is
// checked: out of bounds, a store or atomic does not happen (it runs under a selection), a load
// reads element 0 instead and yields zero, and the fault is kept. Lavapipe runs shaders
// in-process, so an unchecked shared store past the end writes the host's heap; robustness
// features only cover buffers, and only by clamping or dropping, which hides the bug. The host
// turns the fault into the interpreter's error.
//
// Which fault is reported: the interpreter stops a workgroup at its first failing node (lanes in
// lockstep, lowest lane first) and reports the lowest failing workgroup. Here every lane runs on
// and keeps its own first fault (in its own order) in private variables, by selects. At its end
// an invocation that faulted raises kFaulted in the control buffer: that is all a launch pays for.
// After a fault the host builds the reporting form (Options::report_faults) and reruns it from
// the original inputs, where a faulting invocation records into
//   word kWorkgroup: atomic min over the faulting linear workgroups;
//   word kKey:       atomic min over site << lane_bits | lane, only in workgroup kTargetGroup;
//   words kIndex*:   the index, written only by the lane whose key is kTargetKey;
// once with no target (finding the workgroup), once with the workgroup (finding the key), once
// with the key (finding the index). Every choice is a deterministic minimum. Sites are numbered
// in evaluation order, so in straight-line code the key's minimum is the interpreter's choice;
// across loop iterations the order is by site, then lane, where the interpreter's is by
// iteration, and a kernel whose faults depend on timing (atomics, races) may report differently
// or not reproduce (an error saying so).

#include "emitter.hpp"
#include "halfway/ir/bits.hpp"

#include <algorithm>
#include <bit>

namespace halfway::codegen::spirv {

using ir::ScalarType;
using O = spv::Op;

namespace {

constexpr uint64_t kLocalKey = uint64_t{1} << 56;
constexpr uint64_t kBuiltinKey = uint64_t{2} << 56;

uint32_t repr_bytes(ScalarType t) {
  return ir::info(t).bits == 64 ? 8 : 4; // every shared element is held in 32 or 64 bits
}

} // namespace

// Every size the module derives from the kernel, in 64 bits: shared arrays are held in 32- or
// 64-bit elements, and no Vulkan device has 4 GiB of shared memory (the limit is a uint32_t).
uint64_t Emitter::check_sizes() const {
  uint64_t total = 0;
  for (const ir::SharedArray& s : k_.shared) {
    const uint64_t bytes = uint64_t{s.size} * repr_bytes(s.type); // < 2^35: no overflow
    total += bytes;                                               // < 2^35 * arrays
    if (total > 0xffffffffu) {
      ErrorContext c;
      c.kernel = name_;
      c.buffer = s.name;
      throw Error(
          ErrorKind::Limit,
          "kernel " + name_ + ": shared array " + s.name + " (" + std::string(ir::name(s.type)) +
              "[" + std::to_string(s.size) + "], " + std::to_string(bytes) +
              " bytes as held on the device) brings shared memory to " + std::to_string(total) +
              " bytes; Vulkan's maxComputeSharedMemorySize is a 32-bit count of bytes",
          c);
    }
  }
  if (options_.checks) {
    const uint64_t lanes = k_.workgroup_lanes();
    if (lanes == 0 || lanes > (uint64_t{1} << 20))
      internal("workgroup of " + std::to_string(lanes) + " lanes");
  }
  return total;
}

void Emitter::declare_control() {
  if (!options_.checks)
    return;
  lane_bits_ = static_cast<uint32_t>(std::bit_width(k_.workgroup_lanes() - 1));
  uint32_t array = b_.type_runtime_array(t_u32(), 4);
  uint32_t members[] = {array};
  uint32_t block = b_.type_struct(members);
  b_.member_decorate(block, 0, spv::Decoration::Offset, {0});
  b_.decorate(block, spv::Decoration::Block);
  control_var_ = b_.global_variable(b_.type_pointer(spv::StorageClass::StorageBuffer, block),
                                    spv::StorageClass::StorageBuffer);
  b_.decorate(control_var_, spv::Decoration::DescriptorSet, {0});
  b_.decorate(control_var_, spv::Decoration::Binding, {static_cast<uint32_t>(bindings_.size())});
  b_.decorate(control_var_, spv::Decoration::Coherent);
  if (options_.debug_names)
    b_.name(control_var_, "halfway_control");
  // This invocation's first fault: its site (kNone: none yet) and index, kept in private
  // variables by selects and written to the control buffer once, when the invocation ends.
  auto saved = b_.stream();
  const uint32_t ptr = b_.type_pointer(spv::StorageClass::Function, t_u32());
  fault_site_var_ = b_.local_variable(ptr);
  fault_low_var_ = b_.local_variable(ptr);
  fault_high_var_ = b_.local_variable(ptr);
  if (options_.debug_names) {
    b_.name(fault_site_var_, "fault_site");
    b_.name(fault_low_var_, "fault_index_low");
    b_.name(fault_high_var_, "fault_index_high");
  }
  b_.set_stream(ModuleBuilder::Stream::Prologue);
  b_.op_void(O::OpStore, {fault_site_var_, u32(control::kNone)});
  b_.op_void(O::OpStore, {fault_low_var_, u32(0)});
  b_.op_void(O::OpStore, {fault_high_var_, u32(0)});
  b_.set_stream(saved);
  ir::for_each_stmt(k_.body, [&](const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Assign || (s.kind == ir::StmtKind::Atomic && s.local != ir::kNone))
      assigned_.insert(s.local);
    if (s.kind == ir::StmtKind::For)
      for_locals_[s.local]++;
  });
  ir::for_each_stmt(k_.body, [&](const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Let && !assigned_.count(s.local) && !for_locals_.count(s.local) &&
        k_.expr(s.a).op == ir::Op::LocalId)
      lane_locals_[s.local] = static_cast<uint32_t>(k_.expr(s.a).imm);
  });
}

uint32_t Emitter::control_word(uint32_t word) {
  auto saved = b_.stream();
  b_.set_stream(ModuleBuilder::Stream::Prologue);
  uint32_t& ptr = control_ptr_[word];
  if (ptr == 0)
    ptr = b_.op(O::OpAccessChain, b_.type_pointer(spv::StorageClass::StorageBuffer, t_u32()),
                {control_var_, u32(0), u32(word)});
  b_.set_stream(saved);
  return ptr;
}

uint64_t Emitter::local_key(uint32_t local) {
  return kLocalKey | local;
}

// The logical linear workgroup x + groups.x * (y + groups.y * z), computed in the prologue (so it
// dominates every fault record) only by modules that record faults. It wraps at 2^32: a grid of
// more workgroups would report the workgroup modulo 2^32.
uint32_t Emitter::group_linear() {
  if (group_linear_)
    return group_linear_;
  using B = spv::BuiltIn;
  auto saved = b_.stream();
  b_.set_stream(ModuleBuilder::Stream::Prologue);
  const uint32_t gx = push_value(PushSlot::GroupsX), gy = push_value(PushSlot::GroupsY);
  const uint32_t fold_x = push_value(PushSlot::FoldX), folded = push_value(PushSlot::Folded);
  const uint32_t wx = builtin_component(B::WorkgroupId, 0);
  const uint32_t wy = builtin_component(B::WorkgroupId, 1);
  const uint32_t wz = builtin_component(B::WorkgroupId, 2);
  auto add = [&](uint32_t a, uint32_t b) { return b_.op(O::OpIAdd, t_u32(), {a, b}); };
  auto mul = [&](uint32_t a, uint32_t b) { return b_.op(O::OpIMul, t_u32(), {a, b}); };
  const uint32_t x = add(wx, mul(fold_x, wy));
  const uint32_t y = add(wy, mul(folded, b_.op(O::OpISub, t_u32(), {wz, wy})));
  const uint32_t z = mul(wz, b_.op(O::OpISub, t_u32(), {u32(1), folded}));
  group_linear_ = add(x, mul(gx, add(y, mul(gy, z))));
  b_.set_stream(saved);
  return group_linear_;
}

// A key naming an index's value where two expressions certainly have the same value within one
// statement scope: the expression itself, a builtin coordinate, or a local that is only set by
// its let (or, inside its one for loop's body, only by that loop).
uint64_t Emitter::value_key(ir::ExprId id) const {
  const ir::Expr& e = k_.expr(id);
  if (ir::is_builtin(e.op))
    return kBuiltinKey | (uint64_t{static_cast<uint8_t>(e.op)} << 8) | e.imm;
  if (e.op == ir::Op::LocalGet && !assigned_.count(e.ref)) {
    auto it = for_locals_.find(e.ref);
    if (it == for_locals_.end())
      return local_key(e.ref);
    if (it->second == 1 &&
        std::find(active_for_.begin(), active_for_.end(), e.ref) != active_for_.end())
      return local_key(e.ref);
  }
  return id;
}

// Facts an if's condition gives its then-branch: lt(i, len(b)) on unsigned operands, possibly
// inside and(...).
void Emitter::push_facts(ir::ExprId cond) {
  const ir::Expr& e = k_.expr(cond);
  if (e.op == ir::Op::And && e.type == ScalarType::Bool) {
    push_facts(e.args[0]);
    push_facts(e.args[1]);
    return;
  }
  if (e.op != ir::Op::Lt)
    return;
  const ir::Expr& rhs = k_.expr(e.args[1]);
  if (rhs.op != ir::Op::BufferLen || ir::info(k_.expr(e.args[0]).type).is_signed)
    return;
  facts_.push_back({value_key(e.args[0]), rhs.ref});
}

bool Emitter::proven_in_bounds(ir::Space space, uint32_t mem, ir::ExprId index) const {
  const ir::Expr& e = k_.expr(index);
  if (space == ir::Space::Shared) {
    const uint64_t size = k_.shared[mem].size;
    if (e.op == ir::Op::Const) {
      const bool negative =
          ir::info(e.type).is_signed && ir::sign_extend(e.imm, ir::info(e.type).bits) < 0;
      return !negative && e.imm < size;
    }
    if (e.op == ir::Op::LocalId)
      return k_.workgroup[e.imm] <= size;
    if (e.op == ir::Op::LocalGet)
      if (auto it = lane_locals_.find(e.ref); it != lane_locals_.end())
        return k_.workgroup[it->second] <= size;
    return false;
  }
  const uint64_t key = value_key(index);
  for (const auto& [fact, buffer] : facts_)
    if (fact == key && buffer == mem)
      return true;
  return false;
}

void Emitter::selection(uint32_t cond, uint32_t then_label, uint32_t merge) {
  b_.op_void(O::OpSelectionMerge,
             {merge, static_cast<uint32_t>(spv::SelectionControlMask::MaskNone)});
  b_.op_void(O::OpBranchConditional, {cond, then_label, merge});
  begin_block(then_label);
}

uint32_t Emitter::guarded(ir::Space space, uint32_t mem, ir::ExprId index, uint32_t index_id,
                          Access access, ir::ExprId node, uint32_t line, uint32_t zero,
                          const std::function<uint32_t(uint32_t)>& access_fn) {
  if (!options_.checks)
    return access_fn(index_id);
  if (proven_in_bounds(space, mem, index)) {
    ++elided_;
    return access_fn(index_id);
  }
  const ScalarType index_type = k_.expr(index).type;
  const bool is_signed = ir::info(index_type).is_signed;
  const bool wide = ir::info(index_type).bits == 64;
  static constexpr const char* kAccess[] = {"load from", "store to", "atomic on"};
  CheckSite site;
  site.space = space;
  site.mem = mem;
  site.node = node;
  site.line = line ? line : (node != ir::kNone ? k_.expr(node).line : 0);
  site.access = kAccess[static_cast<int>(access)];
  site.index_signed = is_signed;
  const uint32_t site_id = add_site(site);

  const uint32_t length = space == ir::Space::Buffer ? push_value(PushSlot::BufferLength, mem)
                                                     : u32(k_.shared[mem].size);
  uint32_t in = 0;
  if (wide) {
    uint32_t idx = is_signed ? b_.op(O::OpBitcast, t_u64(), {index_id}) : index_id;
    in = b_.op(O::OpULessThan, t_bool(), {idx, b_.op(O::OpUConvert, t_u64(), {length})});
  } else {
    uint32_t idx = is_signed ? b_.op(O::OpBitcast, t_u32(), {index_id}) : index_id;
    in = b_.op(O::OpULessThan, t_bool(), {idx, length});
    if (is_signed)
      in = b_.op(O::OpLogicalAnd, t_bool(),
                 {in, b_.op(O::OpSGreaterThanEqual, t_bool(), {index_id, i32(0)})});
  }
  note_fault(b_.op(O::OpLogicalNot, t_bool(), {in}), site_id, index_id, index_type);
  // Loads need no branch around the access: they read element 0 instead (every buffer has one:
  // the device allocates at least 8 bytes, and shared arrays are never empty) and select zero.
  if (access == Access::Load) {
    const uint32_t idx_type = b_.type_of(index_id);
    const uint32_t safe = b_.op(O::OpSelect, idx_type, {in, index_id, b_.constant(idx_type, 0)});
    const uint32_t loaded = access_fn(safe);
    return b_.op(O::OpSelect, b_.type_of(loaded), {in, loaded, zero});
  }
  // Stores and atomics must not happen at all out of bounds.
  const uint32_t head = current_label_, ok = b_.fresh_id(), merge = b_.fresh_id();
  selection(in, ok, merge);
  const uint32_t value = access_fn(index_id);
  const uint32_t ok_end = current_label_;
  branch(merge);
  begin_block(merge);
  if (zero == 0)
    return value;
  return b_.op(O::OpPhi, b_.type_of(value), {value, ok_end, zero, head});
}

bool Emitter::by_element(ir::Space space, uint32_t mem) const {
  return space == ir::Space::Private || (space == ir::Space::Shared && k_.shared[mem].rank() > 1);
}

uint32_t Emitter::array_access(ir::Space space, uint32_t mem,
                               const std::array<ir::ExprId, 3>& indices,
                               const std::array<uint32_t, 3>& index_ids, Access access,
                               ir::ExprId node, uint32_t line, uint32_t zero,
                               const std::function<uint32_t(uint32_t)>& access_fn) {
  static constexpr const char* kAccess[] = {"load from", "store to", "atomic on"};
  const ir::SharedArray& a = k_.array(space, mem);
  const uint32_t rank = a.rank();
  uint32_t in_all = 0, linear = 0;
  for (uint32_t d = 0; d < rank; ++d) {
    const ScalarType index_type = k_.expr(indices[d]).type;
    const bool is_signed = ir::info(index_type).is_signed;
    const uint32_t id = index_ids[d];
    uint32_t in = 0, low = 0;
    if (ir::info(index_type).bits == 64) {
      const uint32_t u = is_signed ? b_.op(O::OpBitcast, t_u64(), {id}) : id;
      in = b_.op(O::OpULessThan, t_bool(), {u, b_.constant(t_u64(), a.dim(d))});
      low = b_.op(O::OpUConvert, t_u32(), {u});
    } else {
      low = is_signed ? b_.op(O::OpBitcast, t_u32(), {id}) : id;
      in = b_.op(O::OpULessThan, t_bool(), {low, u32(a.dim(d))});
      if (is_signed)
        in = b_.op(O::OpLogicalAnd, t_bool(),
                   {in, b_.op(O::OpSGreaterThanEqual, t_bool(), {id, i32(0)})});
    }
    if (options_.checks) {
      CheckSite site;
      site.space = space;
      site.mem = mem;
      site.node = node;
      site.line = line ? line : (node != ir::kNone ? k_.expr(node).line : 0);
      site.access = kAccess[static_cast<int>(access)];
      site.index_signed = is_signed;
      site.dimension = rank > 1 ? static_cast<int>(d) : -1;
      note_fault(b_.op(O::OpLogicalNot, t_bool(), {in}), add_site(site), id, index_type);
    }
    in_all = d == 0 ? in : b_.op(O::OpLogicalAnd, t_bool(), {in_all, in});
    // Within the dimensions the row-major element is below the size (< 2^32); outside, the
    // value is replaced by element 0 below and never used.
    linear = d == 0 ? low
                    : b_.op(O::OpIAdd, t_u32(),
                            {b_.op(O::OpIMul, t_u32(), {linear, u32(a.dim(d))}), low});
  }
  const ScalarType t = a.type;
  const bool is_private = space == ir::Space::Private;
  const uint32_t ptr_type =
      b_.type_pointer(is_private ? spv::StorageClass::Function : spv::StorageClass::Workgroup,
                      repr_type(t, canonical(t)));
  const uint32_t var = is_private ? private_var_[mem] : shared_var_[mem];
  // Loads need no branch: outside they read element 0 and yield zero.
  if (access == Access::Load) {
    const uint32_t safe = b_.op(O::OpSelect, t_u32(), {in_all, linear, u32(0)});
    const uint32_t loaded = access_fn(b_.op(O::OpAccessChain, ptr_type, {var, safe}));
    return b_.op(O::OpSelect, b_.type_of(loaded), {in_all, loaded, zero});
  }
  const uint32_t ok = b_.fresh_id(), merge = b_.fresh_id();
  selection(in_all, ok, merge);
  const uint32_t value = access_fn(b_.op(O::OpAccessChain, ptr_type, {var, linear}));
  branch(merge);
  begin_block(merge);
  return value;
}

uint32_t Emitter::add_site(const CheckSite& site) {
  const auto site_id = static_cast<uint32_t>(sites_.size());
  if (lane_bits_ < 32 && (uint64_t{site_id} >> (32 - lane_bits_)) != 0)
    refuse(site.node, "more than " + std::to_string((uint64_t{1} << (32 - lane_bits_)) - 1) +
                          " checked memory accesses and loops");
  sites_.push_back(site);
  return site_id;
}

// Lavapipe ends loops by itself (gallivm's loop limiter): each invocation batch gets 65,535 loop
// back edges in all, across every loop of the shader, and then every loop it enters exits at its
// first back edge, silently. Measured: one `for` of 100,000 iterations ran 65,535; two of 40,000
// in sequence ran 65,534 in all; the kernel went on with wrong results. A flag set on a loop's own
// exits cannot see that (the compiler proves it always set and folds the test away), so where the
// target has such a limit every invocation counts what the driver counts: each back edge, in every
// loop's continue block, and each loop exit (a batch runs the exiting iteration to the loop's end
// under a mask, which the driver counts too; measured: two loops of 40,000 ran 40,000 + 25,534).
// It notes a fault (site kind Limit, naming the loop) when the count nears the limit at a back
// edge: the driver is about to cut that loop. Lanes of one batch that run different loops in
// divergent branches share the driver's count but not this one, so those can still be cut unseen.
void Emitter::count_iteration(uint32_t line) {
  if (!back_edges_var_) {
    back_edges_var_ = b_.local_variable(b_.type_pointer(spv::StorageClass::Function, t_u32()));
    if (options_.debug_names)
      b_.name(back_edges_var_, "back_edges");
    auto saved = b_.stream();
    b_.set_stream(ModuleBuilder::Stream::Prologue);
    b_.op_void(O::OpStore, {back_edges_var_, u32(0)});
    b_.set_stream(saved);
  }
  CheckSite site;
  site.kind = ErrorKind::Limit;
  site.line = line;
  site.access = "loop";
  const uint32_t site_id = add_site(site);
  const uint32_t n =
      b_.op(O::OpIAdd, t_u32(), {b_.op(O::OpLoad, t_u32(), {back_edges_var_}), u32(1)});
  b_.op_void(O::OpStore, {back_edges_var_, n});
  // One back edge early: the fault is kept in a private variable, and a loop the driver cuts at a
  // back edge loses what its last iteration wrote to loop-carried values (measured: a note made in
  // the cut iteration was gone after the loop). So a loop whose count reaches limit - 1 is
  // reported, even if it would have ended there by itself.
  note_fault(b_.op(O::OpUGreaterThanEqual, t_bool(), {n, u32(target_.loop_limit - 1)}), site_id,
             u32(0), ScalarType::U32);
}

void Emitter::count_loop_exit() {
  if (!back_edges_var_)
    return; // no back edge was emitted (every loop body ended in a break or return)
  const uint32_t n =
      b_.op(O::OpIAdd, t_u32(), {b_.op(O::OpLoad, t_u32(), {back_edges_var_}), u32(1)});
  b_.op_void(O::OpStore, {back_edges_var_, n});
}

// Keeps the first fault of this invocation: where `bad` holds and no fault was kept yet, the site
// and the index (as two words; signed 32-bit indices sign-extended). Selects only: on lavapipe a
// branch around the recording costs as much as taking it (both sides run under masks, and its
// atomics run lane by lane), measured at 0.35x of the unchecked speed for three checked loads.
void Emitter::note_fault(uint32_t bad, uint32_t site, uint32_t index_id, ScalarType index_type) {
  uint32_t low = 0, high = 0;
  if (ir::info(index_type).bits == 64) {
    const uint32_t bits = b_.op(O::OpBitcast, t_u64(), {index_id});
    low = b_.op(O::OpUConvert, t_u32(), {bits});
    high = b_.op(O::OpUConvert, t_u32(),
                 {b_.op(O::OpShiftRightLogical, t_u64(), {bits, b_.constant(t_u64(), 32)})});
  } else if (ir::info(index_type).is_signed) {
    low = b_.op(O::OpBitcast, t_u32(), {index_id});
    high = b_.op(O::OpBitcast, t_u32(),
                 {b_.op(O::OpShiftRightArithmetic, t_i32(), {index_id, i32(31)})});
  } else {
    low = index_id;
    high = u32(0);
  }
  const uint32_t current = b_.op(O::OpLoad, t_u32(), {fault_site_var_});
  const uint32_t first = b_.op(O::OpLogicalAnd, t_bool(),
                               {bad, b_.op(O::OpIEqual, t_bool(), {current, u32(control::kNone)})});
  auto keep = [&](uint32_t var, uint32_t value) {
    b_.op_void(O::OpStore, {var, b_.op(O::OpSelect, t_u32(),
                                       {first, value, b_.op(O::OpLoad, t_u32(), {var})})});
  };
  keep(fault_site_var_, u32(site));
  keep(fault_low_var_, low);
  keep(fault_high_var_, high);
}

// The interpreter fails a division or remainder by zero and a shift by at least the width (a
// negative signed amount reads as a huge unsigned one). Noted like an out-of-bounds access, so the
// same reruns find the lowest workgroup, then the first (site, lane), then the amount. Sites are
// made when the op is evaluated, after its operands' own checks: the interpreter's order.
void Emitter::check_arith(ir::ExprId id, const ir::Expr& e, ScalarType t, uint32_t operand) {
  if (!options_.checks || !options_.check_arith)
    return;
  const bool shift = e.op == ir::Op::Shl || e.op == ir::Op::Shr;
  const uint32_t bits = ir::info(t).bits;
  const bool is_signed = ir::info(t).is_signed;
  CheckSite site;
  site.kind = shift ? ErrorKind::ShiftOverflow : ErrorKind::DivideByZero;
  site.node = id;
  site.line = e.line;
  site.index_signed = is_signed;
  const uint32_t site_id = add_site(site);
  const uint32_t type = b_.type_of(operand);
  if (!shift) {
    note_fault(b_.op(O::OpIEqual, t_bool(), {operand, b_.constant(type, 0)}), site_id, u32(0),
               ScalarType::U32);
    return;
  }
  const uint32_t bad = b_.op(O::OpUGreaterThanEqual, t_bool(), {operand, b_.constant(type, bits)});
  // The amount is recorded in 32 or 64 bits; 8- and 16-bit ones are extended as their sign says.
  uint32_t amount = operand;
  ScalarType amount_type = bits == 64 ? (is_signed ? ScalarType::I64 : ScalarType::U64)
                                      : (is_signed ? ScalarType::I32 : ScalarType::U32);
  if (bits < 32)
    amount =
        b_.op(is_signed ? O::OpSConvert : O::OpUConvert, is_signed ? t_i32() : t_u32(), {operand});
  note_fault(bad, site_id, amount, amount_type);
}

// Before every return: when this invocation kept a fault, fold it into the control buffer.
void Emitter::flush_fault() {
  if (!fault_site_var_)
    return;
  const uint32_t device = u32(static_cast<uint32_t>(spv::Scope::Device));
  const uint32_t relaxed = u32(0);
  const uint32_t site = b_.op(O::OpLoad, t_u32(), {fault_site_var_});
  const uint32_t faulted = b_.op(O::OpINotEqual, t_bool(), {site, u32(control::kNone)});
  // The launch form only raises kFaulted (one plain store, where a fault happened); the reporting
  // form (Options::report_faults), built and run only after a fault, records the details with
  // atomics. Both in one module would cost every launch: lavapipe runs both sides of a branch
  // under masks, even a uniform one, and atomics lane by lane (measured: with the reporting code
  // present but not taken, saxpy ran at 0.28x of the unchecked speed; with the plain store, 0.91x).
  if (!options_.report_faults) {
    const uint32_t raise = b_.fresh_id(), raised = b_.fresh_id();
    selection(faulted, raise, raised);
    b_.op_void(O::OpStore, {control_word(control::kFaulted), u32(1)});
    branch(raised);
    begin_block(raised);
    return;
  }
  const uint32_t record = b_.fresh_id(), done = b_.fresh_id();
  selection(faulted, record, done);
  const uint32_t wg = group_linear();
  b_.op(O::OpAtomicUMin, t_u32(), {control_word(control::kWorkgroup), device, relaxed, wg});
  const uint32_t target =
      b_.op(O::OpAtomicLoad, t_u32(), {control_word(control::kTargetGroup), device, relaxed});
  const uint32_t in_target = b_.fresh_id(), target_done = b_.fresh_id();
  selection(b_.op(O::OpIEqual, t_bool(), {wg, target}), in_target, target_done);
  const uint32_t lane = builtin_component(spv::BuiltIn::LocalInvocationIndex, 0);
  const uint32_t key =
      b_.op(O::OpBitwiseOr, t_u32(),
            {b_.op(O::OpShiftLeftLogical, t_u32(), {site, u32(lane_bits_)}), lane});
  b_.op(O::OpAtomicUMin, t_u32(), {control_word(control::kKey), device, relaxed, key});
  const uint32_t target_key =
      b_.op(O::OpAtomicLoad, t_u32(), {control_word(control::kTargetKey), device, relaxed});
  const uint32_t is_key = b_.fresh_id(), key_done = b_.fresh_id();
  selection(b_.op(O::OpIEqual, t_bool(), {key, target_key}), is_key, key_done);
  b_.op_void(O::OpStore,
             {control_word(control::kIndexLow), b_.op(O::OpLoad, t_u32(), {fault_low_var_})});
  b_.op_void(O::OpStore,
             {control_word(control::kIndexHigh), b_.op(O::OpLoad, t_u32(), {fault_high_var_})});
  branch(key_done);
  begin_block(key_done);
  branch(target_done);
  begin_block(target_done);
  branch(done);
  begin_block(done);
}

uint32_t Emitter::poll_cancel() {
  // A volatile plain load: it cannot be hoisted out of a loop, and on lavapipe it costs a vector
  // load where an atomic load runs lane by lane.
  const uint32_t word = b_.op_lit(O::OpLoad, t_u32(), {control_word(control::kCancel)},
                                  {static_cast<uint32_t>(spv::MemoryAccessMask::Volatile)});
  return b_.op(O::OpINotEqual, t_bool(), {word, u32(0)});
}

} // namespace halfway::codegen::spirv
