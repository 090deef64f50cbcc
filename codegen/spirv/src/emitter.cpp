#include "emitter.hpp"

#include "halfway/codegen/spirv/capabilities.hpp"
#include "halfway/codegen/spirv/fault.hpp"
#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/ir/analysis/loops.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/ir/printer.hpp"

#include <algorithm>
#include <functional>
#include <spirv/unified1/GLSL.std.450.h>

namespace halfway::codegen::spirv {

using ir::ScalarType;
using O = spv::Op;

Emitter::Emitter(const ir::VerifiedKernel& kernel, const policy::Budget& budget,
                 const Target& target, const Options& options)
    : k_(kernel.kernel()), name_(kernel.name()), budget_(budget), target_(target),
      options_(options) {}

// ---- errors -------------------------------------------------------------------------------------

void Emitter::refuse(ir::ExprId node, const std::string& what) const {
  ErrorContext c;
  c.kernel = name_;
  if (node != ir::kNone) {
    c.node = node;
    c.node_text = ir::print_expr(k_, node);
    c.line = k_.expr(node).line;
  }
  throw Error(ErrorKind::Unsupported,
              "kernel " + name_ + ": " + what + " is not expressible in the SPIR-V backend", c);
}

void Emitter::internal(const std::string& what) const {
  ErrorContext c;
  c.kernel = name_;
  throw Error(ErrorKind::Internal, "SPIR-V backend: " + what, c);
}

// ---- representations ----------------------------------------------------------------------------

Repr Emitter::canonical(ScalarType t) {
  switch (t) {
  case ScalarType::F16:
  case ScalarType::BF16:
    return Repr::F32;
  case ScalarType::E4M3:
  case ScalarType::E5M2:
    return Repr::Bits;
  case ScalarType::I8:
  case ScalarType::U8:
  case ScalarType::I16:
  case ScalarType::U16:
    return Repr::Wide;
  default:
    return Repr::Native;
  }
}

uint32_t Emitter::repr_type(ScalarType t, Repr r) {
  switch (r) {
  case Repr::F32:
    return t_f32();
  case Repr::Bits:
    return t_u32();
  case Repr::Wide:
    return b_.type_int(32, ir::info(t).is_signed);
  case Repr::Native:
    break;
  }
  if (t == ScalarType::Bool)
    return t_bool();
  if (ir::is_int(t))
    return t_int(t);
  if (t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64)
    return b_.type_float(ir::info(t).bits);
  internal(std::string("no native SPIR-V type for ") + std::string(ir::name(t)));
}

uint32_t Emitter::storage_type(ScalarType t) {
  if (t == ScalarType::BF16)
    return b_.type_int(16, false);
  if (ir::is_fp8(t))
    return b_.type_int(8, false);
  return repr_type(t, Repr::Native);
}

// ---- precision plan -----------------------------------------------------------------------------

void Emitter::plan_precision() {
  const bool single = budget_.single_rounding.has_value();
  const bool opaque = target_.uses_opaque_identity();
  // The test-only fault (fault.hpp) lowers barriered sites as if single rounding held.
  const bool drop = testing::injected_fault() == testing::Fault::DropNoContraction;
  for (const ir::NarrowingSite& site : ir::narrowing_sites(k_)) {
    if (single || (drop && site.needs_barrier())) {
      relaxed_.insert(site.producers.begin(), site.producers.end());
    } else if (site.needs_barrier() && opaque) {
      barriered_.insert(site.convert);
    }
  }
  if (budget_.relaxed_accumulation)
    for (const ir::Accumulation& acc : ir::accumulations(k_))
      relaxed_.insert(acc.ops.begin(), acc.ops.end());
}

void Emitter::scan_builtins() {
  for (const ir::Expr& e : k_.exprs) {
    if (e.op == ir::Op::GroupId)
      uses_group_[e.imm] = true;
    if (e.op == ir::Op::GlobalId)
      uses_global_[e.imm] = uses_group_[e.imm] = true;
  }
}

// ---- interface ----------------------------------------------------------------------------------

void Emitter::declare_buffers() {
  buffer_var_.assign(k_.params.size(), 0);
  std::unordered_map<uint32_t, uint32_t> block_of; // element type -> Block struct
  uint32_t binding = 0;
  for (uint32_t i = 0; i < k_.params.size(); ++i) {
    const ir::Param& p = k_.params[i];
    if (!p.is_buffer())
      continue;
    uint32_t element = storage_type(p.type);
    b_.note_storage_buffer_element(element);
    uint32_t& block = block_of[element];
    if (block == 0) {
      uint32_t array = b_.type_runtime_array(element, ir::bytes(p.type));
      uint32_t members[] = {array};
      block = b_.type_struct(members);
      b_.member_decorate(block, 0, spv::Decoration::Offset, {0});
      b_.decorate(block, spv::Decoration::Block);
    }
    uint32_t var = b_.global_variable(b_.type_pointer(spv::StorageClass::StorageBuffer, block),
                                      spv::StorageClass::StorageBuffer);
    b_.decorate(var, spv::Decoration::DescriptorSet, {0});
    b_.decorate(var, spv::Decoration::Binding, {binding});
    if (p.access == ir::Access::Read)
      b_.decorate(var, spv::Decoration::NonWritable);
    if (p.access == ir::Access::Write)
      b_.decorate(var, spv::Decoration::NonReadable);
    if (options_.debug_names)
      b_.name(var, p.name);
    buffer_var_[i] = var;
    bindings_.push_back({i, binding});
    ++binding;
  }
}

void Emitter::declare_shared_and_locals() {
  for (const ir::SharedArray& s : k_.shared) {
    uint32_t array = b_.type_array(repr_type(s.type, canonical(s.type)), s.size);
    uint32_t var = b_.global_variable(b_.type_pointer(spv::StorageClass::Workgroup, array),
                                      spv::StorageClass::Workgroup);
    if (options_.debug_names)
      b_.name(var, s.name);
    shared_var_.push_back(var);
  }
  for (const ir::PrivateArray& a : k_.privates) {
    uint32_t array = b_.type_array(repr_type(a.type, canonical(a.type)), a.size);
    uint32_t var = b_.local_variable(b_.type_pointer(spv::StorageClass::Function, array));
    if (options_.debug_names)
      b_.name(var, a.name);
    private_var_.push_back(var);
  }
  for (const ir::Local& l : k_.locals) {
    uint32_t type = repr_type(l.type, canonical(l.type));
    uint32_t var = b_.local_variable(b_.type_pointer(spv::StorageClass::Function, type));
    if (options_.debug_names)
      b_.name(var, l.name);
    local_var_.push_back(var);
  }
}

uint32_t Emitter::push_value(PushSlot slot, uint32_t param) {
  for (PushMember& m : push_)
    if (m.entry.slot == slot && m.entry.param == param)
      return m.loaded;
  PushMember m;
  m.entry.slot = slot;
  m.entry.param = param;
  m.type = t_u32();
  if (slot == PushSlot::Scalar) {
    ScalarType t = k_.params[param].type;
    if (t == ScalarType::F16 || t == ScalarType::BF16) {
      m.type = t_f32();
    } else if (ir::is_fp8(t) || t == ScalarType::Bool) {
      m.type = t_u32();
    } else if (ir::is_int(t) && ir::info(t).bits < 32) {
      m.type = b_.type_int(32, ir::info(t).is_signed);
    } else {
      m.type = repr_type(t, Repr::Native);
    }
    m.entry.size = ir::info(t).bits == 64 ? 8 : 4;
  }
  uint32_t offset = 0;
  if (!push_.empty())
    offset = push_.back().entry.offset + push_.back().entry.size;
  offset = (offset + m.entry.size - 1) / m.entry.size * m.entry.size;
  m.entry.offset = offset;
  if (push_var_ == 0)
    push_var_ = b_.fresh_id();
  auto saved = b_.stream();
  b_.set_stream(ModuleBuilder::Stream::Prologue);
  uint32_t ptr = b_.op(O::OpAccessChain, b_.type_pointer(spv::StorageClass::PushConstant, m.type),
                       {push_var_, u32(static_cast<uint32_t>(push_.size()))});
  m.loaded = b_.op(O::OpLoad, m.type, {ptr});
  b_.set_stream(saved);
  push_.push_back(m);
  return push_.back().loaded;
}

uint32_t Emitter::builtin_component(spv::BuiltIn builtin, uint32_t dim) {
  const uint64_t key = (uint64_t{static_cast<uint32_t>(builtin)} << 8) | dim;
  if (auto it = builtin_value_.find(key); it != builtin_value_.end())
    return it->second;
  const bool scalar = builtin == spv::BuiltIn::LocalInvocationIndex;
  if (scalar)
    dim = 0;
  uint32_t type = scalar ? t_u32() : b_.type_vector(t_u32(), 3);
  uint32_t& var = builtin_var_[static_cast<uint32_t>(builtin)];
  if (var == 0) {
    var = b_.global_variable(b_.type_pointer(spv::StorageClass::Input, type),
                             spv::StorageClass::Input);
    b_.decorate(var, spv::Decoration::BuiltIn, {static_cast<uint32_t>(builtin)});
    interface_.push_back(var);
  }
  auto saved = b_.stream();
  b_.set_stream(ModuleBuilder::Stream::Prologue);
  const uint64_t whole_key = (uint64_t{static_cast<uint32_t>(builtin)} << 8) | 0xff;
  uint32_t& whole = builtin_value_[whole_key];
  if (whole == 0)
    whole = b_.op(O::OpLoad, type, {var});
  uint32_t value = scalar ? whole : b_.op_lit(O::OpCompositeExtract, t_u32(), {whole}, {dim});
  b_.set_stream(saved);
  builtin_value_.emplace(key, value);
  return value;
}

// ---- control flow helpers -----------------------------------------------------------------------

void Emitter::begin_block(uint32_t label) {
  b_.label(label);
  current_label_ = label;
  open_ = true;
}

void Emitter::branch(uint32_t target) {
  b_.op_void(O::OpBranch, {target});
  open_ = false;
}

void Emitter::barrier() {
  constexpr uint32_t kSemantics = static_cast<uint32_t>(spv::MemorySemanticsMask::AcquireRelease) |
                                  static_cast<uint32_t>(spv::MemorySemanticsMask::UniformMemory) |
                                  static_cast<uint32_t>(spv::MemorySemanticsMask::WorkgroupMemory);
  const uint32_t workgroup = u32(static_cast<uint32_t>(spv::Scope::Workgroup));
  b_.op_void(O::OpControlBarrier, {workgroup, workgroup, u32(kSemantics)});
}

// ---- the entry: logical group id, early exit ----------------------------------------------------

// The device dispatches the logical grid directly when it fits the device's per-dimension limits,
// and otherwise folds x into (x, y) and moves the logical y to z (write_push_constants' fold_x).
// Both cases reduce to multiply-adds with uniform push constants, so no lane divides:
//   group.x = id.x + fold_x * id.y       (fold_x = 0 when not folded)
//   group.y = id.y + folded * (id.z - id.y)
//   group.z = id.z * (1 - folded)
// and a folded grid's extra groups (group.x >= groups.x) return at once, whole workgroups at a
// time, so barriers stay uniform.
void Emitter::emit_entry() {
  function_ = b_.fresh_id();
  entry_label_ = b_.fresh_id();
  current_label_ = entry_label_;
  b_.set_stream(ModuleBuilder::Stream::Body);

  using B = spv::BuiltIn;
  const uint32_t gx = push_value(PushSlot::GroupsX);
  const uint32_t fold_x = push_value(PushSlot::FoldX);
  const uint32_t wid_x = builtin_component(B::WorkgroupId, 0);
  const uint32_t wid_y = builtin_component(B::WorkgroupId, 1);
  uint32_t x = b_.op(O::OpIAdd, t_u32(), {wid_x, b_.op(O::OpIMul, t_u32(), {fold_x, wid_y})});
  if (options_.debug_names)
    b_.name(x, "group_x");

  uint32_t outside = b_.op(O::OpUGreaterThanEqual, t_bool(), {x, gx});
  // A checked module's invocations also poll the cancel word on entry, so that a long grid
  // without loops ends within a workgroup's time once the host raises it. The poll joins the
  // grid-bounds test in one return: lavapipe runs whatever follows a return under a return mask,
  // so a second early return cost act<f32> 40% of its time (0.61 of its GLSL twin, 0.89-0.97
  // with the one return).
  if (options_.checks)
    outside = b_.op(O::OpLogicalOr, t_bool(), {outside, poll_cancel()});
  uint32_t ret = b_.fresh_id(), inside = b_.fresh_id();
  b_.op_void(O::OpSelectionMerge,
             {inside, static_cast<uint32_t>(spv::SelectionControlMask::MaskNone)});
  b_.op_void(O::OpBranchConditional, {outside, ret, inside});
  begin_block(ret);
  b_.op_void(O::OpReturn, {});
  begin_block(inside);

  group_id_[0] = x;
  if (uses_group_[1] || uses_group_[2]) {
    const uint32_t folded = push_value(PushSlot::Folded);
    const uint32_t wid_z = builtin_component(B::WorkgroupId, 2);
    if (uses_group_[1])
      group_id_[1] = b_.op(
          O::OpIAdd, t_u32(),
          {wid_y, b_.op(O::OpIMul, t_u32(), {folded, b_.op(O::OpISub, t_u32(), {wid_z, wid_y})})});
    if (uses_group_[2])
      group_id_[2] =
          b_.op(O::OpIMul, t_u32(), {wid_z, b_.op(O::OpISub, t_u32(), {u32(1), folded})});
  }
  for (uint32_t d = 0; d < 3; ++d) {
    if (!uses_global_[d])
      continue;
    uint32_t base = b_.op(O::OpIMul, t_u32(), {group_id_[d], u32(k_.workgroup[d])});
    global_id_[d] = b_.op(O::OpIAdd, t_u32(), {base, builtin_component(B::LocalInvocationId, d)});
  }
}

// Shared arrays start as zeros in every workgroup (specs/ir.md): each lane clears a strided share,
// then the workgroup waits.
//
// The zeroing is skipped for an array the kernel itself fills completely before anything can read
// it: a 1D workgroup of exactly the array's size whose body starts (before any barrier, branch,
// loop or atomic) with `arr[local_id(0)] = v` (directly or through a local let to local_id(0) and
// never reassigned), v not reading the array. Every element is then written by its own lane
// before the first barrier, which is what the reduction pattern does.
std::vector<bool> Emitter::shared_filled_by_kernel() const {
  std::vector<bool> filled(k_.shared.size(), false);
  if (k_.workgroup[1] != 1 || k_.workgroup[2] != 1)
    return filled;
  std::set<uint32_t> assigned; // locals written by an assignment, a for or an atomic
  ir::for_each_stmt(k_.body, [&](const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Assign || s.kind == ir::StmtKind::For ||
        (s.kind == ir::StmtKind::Atomic && s.local != ir::kNone))
      assigned.insert(s.local);
  });
  std::set<uint32_t> lane_locals; // let l = local_id(0), never reassigned
  std::function<bool(ir::ExprId, uint32_t)> reads = [&](ir::ExprId id, uint32_t array) {
    const ir::Expr& e = k_.expr(id);
    if (e.op == ir::Op::Load && e.space == ir::Space::Shared && e.ref == array)
      return true;
    for (int a = 0; a < e.nargs; ++a)
      if (reads(e.args[a], array))
        return true;
    return false;
  };
  auto is_lane = [&](ir::ExprId id) {
    const ir::Expr& e = k_.expr(id);
    return (e.op == ir::Op::LocalId && e.imm == 0) ||
           (e.op == ir::Op::LocalGet && lane_locals.count(e.ref) > 0);
  };
  std::vector<bool> read_before(k_.shared.size(), false);
  for (const ir::Stmt& s : k_.body) {
    if (s.kind == ir::StmtKind::Let) {
      if (is_lane(s.a) && !assigned.count(s.local))
        lane_locals.insert(s.local);
    } else if (s.kind != ir::StmtKind::Store && s.kind != ir::StmtKind::Assign) {
      break; // a barrier, branch, loop, atomic or return ends the prefix
    }
    for (ir::ExprId root : ir::stmt_exprs(s))
      for (uint32_t a = 0; a < k_.shared.size(); ++a)
        if (reads(root, a))
          read_before[a] = true;
    if (s.kind == ir::StmtKind::Store && s.space == ir::Space::Shared && !read_before[s.mem] &&
        k_.shared[s.mem].rank() == 1 && k_.shared[s.mem].size == k_.workgroup[0] && is_lane(s.a))
      filled[s.mem] = true;
  }
  return filled;
}

// Private arrays are zero at the start of the lane (specs/ir.md): one store of a null array each.
void Emitter::zero_private() {
  for (size_t i = 0; i < k_.privates.size(); ++i) {
    const ir::PrivateArray& a = k_.privates[i];
    const uint32_t array = b_.type_array(repr_type(a.type, canonical(a.type)), a.size);
    b_.op_void(O::OpStore, {private_var_[i], b_.constant_null(array)});
  }
}

void Emitter::zero_shared() {
  if (k_.shared.empty())
    return;
  const std::vector<bool> filled = shared_filled_by_kernel();
  if (std::all_of(filled.begin(), filled.end(), [](bool f) { return f; }))
    return;
  const uint32_t lanes = k_.workgroup_lanes();
  const uint32_t lane = builtin_component(spv::BuiltIn::LocalInvocationIndex, 0);
  for (size_t i = 0; i < k_.shared.size(); ++i) {
    if (filled[i])
      continue;
    const ir::SharedArray& s = k_.shared[i];
    const uint32_t element = repr_type(s.type, canonical(s.type));
    const uint32_t zero = b_.constant_null(element);
    const uint32_t ptr_type = b_.type_pointer(spv::StorageClass::Workgroup, element);
    // More than a few strides: a loop (check_sizes() keeps size + lanes far below 2^32).
    const uint64_t strides = (uint64_t{s.size} + lanes - 1) / lanes;
    if (strides > 4) {
      const uint32_t counter =
          b_.local_variable(b_.type_pointer(spv::StorageClass::Function, t_u32()));
      b_.op_void(O::OpStore, {counter, lane});
      const uint32_t header = b_.fresh_id(), test = b_.fresh_id(), body = b_.fresh_id();
      const uint32_t cont = b_.fresh_id(), merge = b_.fresh_id();
      branch(header);
      begin_block(header);
      b_.op_void(O::OpLoopMerge,
                 {merge, cont, static_cast<uint32_t>(spv::LoopControlMask::MaskNone)});
      branch(test);
      begin_block(test);
      uint32_t idx = b_.op(O::OpLoad, t_u32(), {counter});
      b_.op_void(O::OpBranchConditional,
                 {b_.op(O::OpULessThan, t_bool(), {idx, u32(s.size)}), body, merge});
      begin_block(body);
      b_.op_void(O::OpStore, {b_.op(O::OpAccessChain, ptr_type, {shared_var_[i], idx}), zero});
      branch(cont);
      begin_block(cont);
      b_.op_void(O::OpStore, {counter, b_.op(O::OpIAdd, t_u32(), {idx, u32(lanes)})});
      branch(header);
      begin_block(merge);
      continue;
    }
    for (uint64_t first = 0; first < s.size; first += lanes) {
      uint32_t idx =
          first == 0 ? lane : b_.op(O::OpIAdd, t_u32(), {lane, u32(static_cast<uint32_t>(first))});
      const bool guard = first + lanes > s.size;
      uint32_t store = 0, merge = 0;
      if (guard) {
        store = b_.fresh_id();
        merge = b_.fresh_id();
        uint32_t in = b_.op(O::OpULessThan, t_bool(), {idx, u32(s.size)});
        b_.op_void(O::OpSelectionMerge,
                   {merge, static_cast<uint32_t>(spv::SelectionControlMask::MaskNone)});
        b_.op_void(O::OpBranchConditional, {in, store, merge});
        begin_block(store);
      }
      b_.op_void(O::OpStore, {b_.op(O::OpAccessChain, ptr_type, {shared_var_[i], idx}), zero});
      if (guard) {
        branch(merge);
        begin_block(merge);
      }
    }
  }
  barrier();
}

// ---- statements ---------------------------------------------------------------------------------

void Emitter::block(const ir::Body& stmts) {
  for (const ir::Stmt& s : stmts) {
    if (!open_)
      return; // after break, continue or return: the rest is dead
    stmt(s);
  }
}

void Emitter::store_local(uint32_t local, Val v) {
  ScalarType t = k_.locals[local].type;
  b_.op_void(O::OpStore, {local_var_[local], as(v, t, canonical(t))});
}

void Emitter::stmt(const ir::Stmt& s) {
  cache_.clear();
  switch (s.kind) {
  case ir::StmtKind::Let:
  case ir::StmtKind::Assign:
    store_local(s.local, eval(s.a));
    return;
  case ir::StmtKind::Store:
    stmt_store(s);
    return;
  case ir::StmtKind::Atomic:
    stmt_atomic(s);
    return;
  case ir::StmtKind::If:
    stmt_if(s);
    return;
  case ir::StmtKind::For:
  case ir::StmtKind::While:
    stmt_loop(s);
    return;
  case ir::StmtKind::Break:
    branch(loops_.back().merge);
    return;
  case ir::StmtKind::Continue:
    branch(loops_.back().cont);
    return;
  case ir::StmtKind::Barrier:
    barrier();
    return;
  case ir::StmtKind::Return:
    flush_fault();
    b_.op_void(O::OpReturn, {});
    open_ = false;
    return;
  }
}

// The index is evaluated before the value and checked after it, as the interpreter does.
void Emitter::stmt_store(const ir::Stmt& s) {
  ScalarType t = k_.element_type(s.space, s.mem);
  if (by_element(s.space, s.mem)) {
    const std::array<ir::ExprId, 3> ix = ir::store_indices(s);
    std::array<uint32_t, 3> ids{};
    for (int i = 0; i < 3; ++i)
      if (ix[i] != ir::kNone)
        ids[i] = index(ix[i]);
    const uint32_t value = as(eval(s.b), t, canonical(t));
    array_access(s.space, s.mem, ix, ids, Access::Store, ir::kNone, s.line, 0, [&](uint32_t ptr) {
      b_.op_void(O::OpStore, {ptr, value});
      return 0u;
    });
    return;
  }
  const uint32_t idx = index(s.a);
  Val v = eval(s.b);
  uint32_t value = s.space == ir::Space::Buffer ? to_storage(v, t) : as(v, t, canonical(t));
  guarded(s.space, s.mem, s.a, idx, Access::Store, ir::kNone, s.line, 0, [&](uint32_t at) {
    b_.op_void(O::OpStore, {pointer(s.space, s.mem, at), value});
    return 0u;
  });
}

void Emitter::stmt_atomic(const ir::Stmt& s) {
  struct AtomicRow {
    ir::AtomicOp op;
    O if_signed, if_unsigned;
  };
  static constexpr AtomicRow kAtomics[] = {
      {ir::AtomicOp::Add, O::OpAtomicIAdd, O::OpAtomicIAdd},
      {ir::AtomicOp::Sub, O::OpAtomicISub, O::OpAtomicISub},
      {ir::AtomicOp::Min, O::OpAtomicSMin, O::OpAtomicUMin},
      {ir::AtomicOp::Max, O::OpAtomicSMax, O::OpAtomicUMax},
      {ir::AtomicOp::And, O::OpAtomicAnd, O::OpAtomicAnd},
      {ir::AtomicOp::Or, O::OpAtomicOr, O::OpAtomicOr},
      {ir::AtomicOp::Xor, O::OpAtomicXor, O::OpAtomicXor},
      {ir::AtomicOp::Exchange, O::OpAtomicExchange, O::OpAtomicExchange},
      {ir::AtomicOp::CompareExchange, O::OpAtomicCompareExchange, O::OpAtomicCompareExchange},
  };
  ScalarType t = k_.element_type(s.space, s.mem);
  const bool is_signed = ir::info(t).is_signed;
  if (ir::info(t).bits == 64) {
    b_.note_int64_atomic();
    (s.space == ir::Space::Buffer ? buffer_int64_atomics_ : shared_int64_atomics_) = true;
  }
  const uint32_t idx = index(s.a);
  uint32_t value = get(s.b, Repr::Native);
  uint32_t scope = u32(static_cast<uint32_t>(s.space == ir::Space::Buffer ? spv::Scope::Device
                                                                          : spv::Scope::Workgroup));
  uint32_t relaxed = u32(0);
  O opcode = O::OpNop;
  for (const AtomicRow& row : kAtomics)
    if (row.op == s.atomic)
      opcode = is_signed ? row.if_signed : row.if_unsigned;
  const uint32_t comparand = s.atomic == ir::AtomicOp::CompareExchange ? get(s.c, Repr::Native) : 0;
  const uint32_t zero = s.local != ir::kNone ? b_.constant(t_int(t), 0) : 0;
  uint32_t old =
      guarded(s.space, s.mem, s.a, idx, Access::Atomic, ir::kNone, s.line, zero, [&](uint32_t at) {
        uint32_t ptr = pointer(s.space, s.mem, at);
        if (comparand)
          return b_.op(opcode, t_int(t), {ptr, scope, relaxed, relaxed, value, comparand});
        return b_.op(opcode, t_int(t), {ptr, scope, relaxed, value});
      });
  if (s.local != ir::kNone)
    store_local(s.local, {old, Repr::Native});
}

void Emitter::stmt_if(const ir::Stmt& s) {
  uint32_t cond = get(s.a, Repr::Native);
  uint32_t then_label = b_.fresh_id(), merge = b_.fresh_id();
  uint32_t else_label = s.else_body.empty() ? merge : b_.fresh_id();
  b_.op_void(O::OpSelectionMerge,
             {merge, static_cast<uint32_t>(spv::SelectionControlMask::MaskNone)});
  b_.op_void(O::OpBranchConditional, {cond, then_label, else_label});
  begin_block(then_label);
  const size_t facts = facts_.size();
  if (options_.checks)
    push_facts(s.a);
  block(s.body);
  facts_.resize(facts);
  bool reaches_merge = open_;
  if (open_)
    branch(merge);
  if (!s.else_body.empty()) {
    begin_block(else_label);
    block(s.else_body);
    reaches_merge = reaches_merge || open_;
    if (open_)
      branch(merge);
  } else {
    reaches_merge = true;
  }
  begin_block(merge);
  if (!reaches_merge) {
    b_.op_void(O::OpUnreachable, {});
    open_ = false;
  }
}

// while c { body }  and  for v = a; v < b; v += c { body }:
//   header: OpLoopMerge merge cont; -> test
//   test:   evaluate the condition; -> body or merge
//   body:   ... -> cont          (break -> merge, continue -> cont)
//   cont:   (for: v += c) -> header
void Emitter::stmt_loop(const ir::Stmt& s) {
  const bool is_for = s.kind == ir::StmtKind::For;
  ScalarType vt = is_for ? k_.locals[s.local].type : ScalarType::Bool;
  if (is_for)
    store_local(s.local, eval(s.a));
  uint32_t header = b_.fresh_id(), test = b_.fresh_id(), body = b_.fresh_id();
  uint32_t cont = b_.fresh_id(), merge = b_.fresh_id();
  branch(header);
  begin_block(header);
  b_.op_void(O::OpLoopMerge, {merge, cont, static_cast<uint32_t>(spv::LoopControlMask::MaskNone)});
  branch(test);
  begin_block(test);
  cache_.clear();
  uint32_t cond = 0;
  if (is_for) {
    uint32_t v = b_.op(O::OpLoad, repr_type(vt, canonical(vt)), {local_var_[s.local]});
    uint32_t end = get(s.b, canonical(vt));
    cond = b_.op(ir::info(vt).is_signed ? O::OpSLessThan : O::OpULessThan, t_bool(), {v, end});
  } else {
    cond = get(s.a, Repr::Native);
  }
  // Every iteration polls the control buffer's cancel word: a loop the host wants to end (a
  // timeout, an interrupt) ends, and the invocation returns right after it. A short loop with
  // constant bounds and no loop inside (ir/analysis/loops.hpp) does not: the code around it polls
  // (an enclosing loop, the entry), and it cannot run long.
  uint32_t cancelled = 0;
  if (options_.checks && !(is_for && ir::bounded_without_poll(k_, s))) {
    cancelled = poll_cancel();
    cond = b_.op(O::OpLogicalAnd, t_bool(), {cond, b_.op(O::OpLogicalNot, t_bool(), {cancelled})});
  }
  b_.op_void(O::OpBranchConditional, {cond, body, merge});
  open_ = false;
  begin_block(body);
  loops_.push_back({merge, cont});
  const size_t facts = facts_.size();
  if (is_for)
    active_for_.push_back(s.local);
  // Inside the body of `for v = a; v < len(b); ...` that alone sets v, v is below len(b).
  if (is_for && options_.checks && !ir::info(vt).is_signed &&
      k_.expr(s.b).op == ir::Op::BufferLen && !assigned_.count(s.local) &&
      for_locals_[s.local] == 1)
    facts_.push_back({local_key(s.local), k_.expr(s.b).ref});
  block(s.body);
  facts_.resize(facts);
  if (is_for)
    active_for_.pop_back();
  loops_.pop_back();
  if (open_)
    branch(cont);
  begin_block(cont);
  if (is_for) {
    cache_.clear();
    // v += step, wrapping in the loop variable's own width.
    uint32_t v =
        as({b_.op(O::OpLoad, repr_type(vt, canonical(vt)), {local_var_[s.local]}), canonical(vt)},
           vt, Repr::Native);
    uint32_t next = b_.op(O::OpIAdd, t_int(vt), {v, get(s.c, Repr::Native)});
    store_local(s.local, {next, Repr::Native});
  }
  if (options_.checks && target_.loop_limit)
    count_iteration(s.line);
  branch(header);
  begin_block(merge);
  if (options_.checks && target_.loop_limit)
    count_loop_exit();
  if (cancelled) {
    const uint32_t stop = b_.fresh_id(), go_on = b_.fresh_id();
    selection(cancelled, stop, go_on);
    // Flushed here too: a loop that can only end by a cancel (`while true`) makes the compiler
    // take this branch as always taken, and a loop the driver cut must still report its fault.
    flush_fault();
    b_.op_void(O::OpReturn, {});
    begin_block(go_on);
  }
}

// ---- module -------------------------------------------------------------------------------------

void Emitter::finish_module(Shader& shader) {
  declare_push_constants(shader);
  declare_capabilities(shader);
  b_.execution_mode(function_, spv::ExecutionMode::LocalSize,
                    {k_.workgroup[0], k_.workgroup[1], k_.workgroup[2]});
  b_.entry_point(function_, shader.entry, interface_);
  if (options_.debug_names)
    b_.name(function_, shader.entry);
}

void Emitter::declare_push_constants(Shader& shader) {
  if (push_.empty())
    return;
  std::vector<uint32_t> members;
  for (const PushMember& m : push_)
    members.push_back(m.type);
  uint32_t block = b_.type_struct(members);
  b_.decorate(block, spv::Decoration::Block);
  for (uint32_t i = 0; i < push_.size(); ++i)
    b_.member_decorate(block, i, spv::Decoration::Offset, {push_[i].entry.offset});
  b_.global_variable_with_id(push_var_, b_.type_pointer(spv::StorageClass::PushConstant, block),
                             spv::StorageClass::PushConstant);
  if (options_.debug_names)
    b_.name(push_var_, "push");
  const PushEntry& last = push_.back().entry;
  shader.push_bytes = last.offset + last.size;
  for (const PushMember& m : push_)
    shader.push.push_back(m.entry);
  if (shader.push_bytes > 128)
    refuse(ir::kNone, "a push-constant block of " + std::to_string(shader.push_bytes) +
                          " bytes (scalars, buffer lengths and grid; Vulkan guarantees 128)");
}

// The capabilities of what was emitted, with their extensions and device features, from the
// capability table; and the float-controls execution modes per width the module declares.
void Emitter::declare_capabilities(Shader& shader) {
  using C = spv::Capability;
  std::set<C> on{C::Shader};
  auto add = [&](bool used, C c) {
    if (used)
      on.insert(c);
  };
  // A 16/8-bit type used only in ways the storage capabilities allow still needs one of them to
  // be declared at all.
  const CapabilityUse& use = b_.use();
  add(use.float16 || (b_.declared_float(16) && !use.storage_buffer_16bit), C::Float16);
  add(use.int16 || (b_.declared_int(16) && !use.storage_buffer_16bit), C::Int16);
  add(use.int8 || (b_.declared_int(8) && !use.storage_buffer_8bit), C::Int8);
  add(use.float64, C::Float64);
  add(use.int64, C::Int64);
  add(use.int64_atomics, C::Int64Atomics);
  add(use.storage_buffer_16bit, C::StorageBuffer16BitAccess);
  add(use.storage_buffer_8bit, C::StorageBuffer8BitAccess);
  for (uint32_t w : {16u, 32u, 64u}) {
    if (!b_.declared_float(w))
      continue;
    const Target::Width& tw = target_.width(w);
    if (tw.rounding_mode_rte)
      b_.execution_mode(function_, spv::ExecutionMode::RoundingModeRTE, {w});
    if (tw.denorm_preserve)
      b_.execution_mode(function_, spv::ExecutionMode::DenormPreserve, {w});
    if (tw.signed_zero_inf_nan_preserve)
      b_.execution_mode(function_, spv::ExecutionMode::SignedZeroInfNanPreserve, {w});
    add(tw.rounding_mode_rte, C::RoundingModeRTE);
    add(tw.denorm_preserve, C::DenormPreserve);
    add(tw.signed_zero_inf_nan_preserve, C::SignedZeroInfNanPreserve);
  }

  size_t declared = 0;
  for (const CapabilityRow& row : capability_table()) {
    if (!on.count(row.capability))
      continue;
    ++declared;
    b_.capability(row.capability);
    shader.capabilities.push_back(row.name);
    if (row.extension && std::find(shader.extensions.begin(), shader.extensions.end(),
                                   row.extension) == shader.extensions.end())
      shader.extensions.push_back(row.extension);
    if (row.need)
      shader.needs.*row.need = true;
  }
  if (declared != on.size())
    throw Error(ErrorKind::Internal, "a SPIR-V capability missing from the capability table",
                {.kernel = name_});
  for (const std::string& e : shader.extensions)
    b_.extension(e);
  shader.needs.shader_buffer_int64_atomics = buffer_int64_atomics_;
  shader.needs.shader_shared_int64_atomics = shared_int64_atomics_;
}

Shader Emitter::run() {
  const uint64_t shared_bytes = check_sizes();
  plan_precision();
  scan_builtins();
  declare_buffers();
  declare_control();
  declare_shared_and_locals();
  emit_entry();
  zero_shared();
  zero_private();
  block(k_.body);
  if (open_) {
    flush_fault();
    b_.op_void(O::OpReturn, {});
  }
  b_.finish_function(function_, entry_label_);

  Shader shader;
  shader.kernel = name_;
  shader.budget = budget_;
  shader.bindings = bindings_;
  shader.shared_bytes = shared_bytes;
  if (control_var_) {
    shader.control_binding = static_cast<uint32_t>(bindings_.size());
    shader.sites = sites_;
    shader.lane_bits = lane_bits_;
    shader.loop_limit = target_.loop_limit;
    shader.elided_checks = elided_;
  }
  finish_module(shader);
  shader.words = b_.assemble(0x00010300);
  shader.opaque_identities = opaque_count_;
  shader.no_contraction = no_contraction_;
  return shader;
}

} // namespace halfway::codegen::spirv
