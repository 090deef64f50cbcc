#pragma once
// The code generator's state for one kernel. emitter.cpp: interface, prologue and statements;
// expr.cpp: expressions; convert.cpp: conversions and the integer soft-float routines for the
// formats SPIR-V lacks.

#include "halfway/codegen/spirv/codegen.hpp"
#include "halfway/codegen/spirv/module.hpp"
#include "halfway/ir/kernel.hpp"
#include "halfway/support/error.hpp"
#include "op_table.hpp"

#include <array>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace halfway::codegen::spirv {

// How a value of an IR type is held in SPIR-V. Each IR type has a canonical representation (for
// locals, shared elements and selects) and may exist in others while an expression is built.
enum class Repr : uint8_t {
  Native, // the SPIR-V type of the same format: bool, intN, half, float, double
  F32,    // f32 holding the exact value (f16, bf16, fp8)
  Bits,   // u32 holding the zero-extended bit pattern (f16, bf16, fp8)
  Wide,   // 32-bit integer holding the sign- or zero-extended value (8/16-bit integers)
};

struct Val {
  uint32_t id = 0;
  Repr repr = Repr::Native;
};

class Emitter {
public:
  Emitter(const ir::VerifiedKernel& kernel, const policy::Budget& budget, const Target& target,
          const Options& options);
  Shader run();

private:
  using ST = ir::ScalarType;

  // ---- planning and interface (emitter.cpp) ----------------------------------------------------
  void plan_precision();
  void scan_builtins();
  void declare_buffers();
  void declare_shared_and_locals();
  uint32_t push_value(PushSlot slot, uint32_t param = 0);
  uint32_t builtin_component(spv::BuiltIn builtin, uint32_t dim);
  void emit_entry();
  void zero_shared();
  void zero_private();
  std::vector<bool> shared_filled_by_kernel() const;
  // The module around the function: push constants, capabilities, the entry point.
  void finish_module(Shader& shader);
  void declare_push_constants(Shader& shader);
  void declare_capabilities(Shader& shader);
  [[noreturn]] void refuse(ir::ExprId node, const std::string& what) const;
  [[noreturn]] void internal(const std::string& what) const;

  // ---- types -----------------------------------------------------------------------------------
  uint32_t t_bool() { return b_.type_bool(); }
  uint32_t t_u32() { return b_.type_int(32, false); }
  uint32_t t_i32() { return b_.type_int(32, true); }
  uint32_t t_u64() { return b_.type_int(64, false); }
  uint32_t t_f32() { return b_.type_float(32); }
  uint32_t t_f64() { return b_.type_float(64); }
  uint32_t t_int(ST t) { return b_.type_int(ir::info(t).bits, ir::info(t).is_signed); }
  uint32_t repr_type(ST t, Repr r);
  uint32_t storage_type(ST t); // buffer element type
  static Repr canonical(ST t);
  uint32_t u32(uint32_t v) { return b_.constant_u32(v); }
  uint32_t i32(int32_t v) { return b_.constant_i32(v); }

  // ---- statements (emitter.cpp) ----------------------------------------------------------------
  void block(const ir::Body& stmts);
  void stmt(const ir::Stmt& s);
  void stmt_if(const ir::Stmt& s);
  void stmt_loop(const ir::Stmt& s);
  void stmt_store(const ir::Stmt& s);
  void stmt_atomic(const ir::Stmt& s);
  void store_local(uint32_t local, Val v);
  void begin_block(uint32_t label);
  void branch(uint32_t target);
  void barrier();

  // ---- checked accesses and cancel polls (checks.cpp) ------------------------------------------
  enum class Access : uint8_t { Load, Store, Atomic };
  void declare_control();
  uint64_t check_sizes() const;         // the shared bytes as held
  uint32_t control_word(uint32_t word); // pointer to a control-buffer word
  uint32_t group_linear();
  bool proven_in_bounds(ir::Space space, uint32_t mem, ir::ExprId index) const;
  uint64_t value_key(ir::ExprId id) const;
  static uint64_t local_key(uint32_t local);
  void push_facts(ir::ExprId cond);
  // Emits `access()` under the bounds check of `index_id` (the value of expression `index`):
  // in bounds it runs, out of bounds the fault is recorded and a load yields `zero`. Returns the
  // loaded value (through an OpPhi) or 0.
  uint32_t guarded(ir::Space space, uint32_t mem, ir::ExprId index, uint32_t index_id,
                   Access access, ir::ExprId node, uint32_t line, uint32_t zero,
                   const std::function<uint32_t(uint32_t)>& access_fn);
  void note_fault(uint32_t bad, uint32_t site, uint32_t index_id, ir::ScalarType index_type);
  // Private arrays and rank-2 and rank-3 shared arrays: every index (`index_ids`, the values of
  // expressions `indices`) is compared with its dimension, with or without checks. With checks
  // a fault is noted per dimension; without, an access outside does not happen (a load yields
  // `zero`), so that no index reaches outside the array. Returns what `access_fn` returned for
  // the element's pointer (a load: merged with `zero`).
  bool by_element(ir::Space space, uint32_t mem) const;
  uint32_t array_access(ir::Space space, uint32_t mem, const std::array<ir::ExprId, 3>& indices,
                        const std::array<uint32_t, 3>& index_ids, Access access, ir::ExprId node,
                        uint32_t line, uint32_t zero,
                        const std::function<uint32_t(uint32_t)>& access_fn);
  // Options::check_arith: notes a zero divisor of div/rem `id`, or a shift amount of shl/shr `id`
  // not below the width. `operand` is the divisor or amount as evaluated, of type `t`.
  void check_arith(ir::ExprId id, const ir::Expr& e, ir::ScalarType t, uint32_t operand);
  void flush_fault();
  uint32_t add_site(const CheckSite& site);
  void count_iteration(uint32_t line);
  void count_loop_exit();
  uint32_t poll_cancel(); // bool: the host asked the invocation to end
  void selection(uint32_t cond, uint32_t then_label, uint32_t merge);

  // ---- expressions (expr.cpp) ------------------------------------------------------------------
  Val eval(ir::ExprId id);
  uint32_t get(ir::ExprId id, Repr want);
  uint32_t as(Val v, ST type, Repr want);
  uint32_t constant(ST type, uint64_t bits, Repr want);
  Val eval_uncached(ir::ExprId id, const ir::Expr& e);
  Val eval_leaf(ir::ExprId id, const ir::Expr& e);
  Val eval_generic(ir::ExprId id, const ir::Expr& e, const SpirvRow& row);
  Val eval_special(ir::ExprId id, const ir::Expr& e, Special which);
  Val eval_bitcast(const ir::Expr& e);
  Val eval_pack(const ir::Expr& e);
  Val eval_unpack(const ir::Expr& e);
  Val eval_float_min_max(const ir::Expr& e, bool is_min);
  uint32_t float_min_max(uint32_t a, uint32_t b, bool is_min, uint32_t type, uint32_t width);
  Val eval_clamp(const ir::Expr& e);
  Val eval_copysign(const ir::Expr& e);
  Val eval_select(const ir::Expr& e);
  uint32_t index(ir::ExprId id);
  uint32_t pointer(ir::Space space, uint32_t mem, uint32_t index_id);
  uint32_t to_storage(Val v, ST type);
  Val from_storage(uint32_t id, ST type);
  uint32_t integer_division(ir::Op op, ST type, uint32_t a, uint32_t b);
  uint32_t float_arith(spv::Op op, uint32_t type, std::initializer_list<uint32_t> args,
                       ir::ExprId origin);
  uint32_t sign_bit(uint32_t value, uint32_t width); // bool: the float's sign bit is set
  uint32_t work_float(ir::ExprId id, ST type);       // f64 Native, else the F32 form

  // ---- conversions and soft float (convert.cpp) ------------------------------------------------
  Val eval_convert(ir::ExprId id, const ir::Expr& e);
  Val convert_int_to_int(ir::ExprId arg, ST from, ST to);
  Val convert_float_to_int(ir::ExprId arg, ST from, ST to);
  Val convert_int_to_float(ir::ExprId id, const ir::Expr& e, ST from);
  Val convert_float_to_float(ir::ExprId id, const ir::Expr& e, ST from);
  uint32_t opaque_identity(uint32_t value, uint32_t width);
  // f32 (or f64 with round_odd) value -> target bits, correctly rounded with integer code.
  uint32_t soft_narrow(ST to, uint32_t f32_value, ir::RoundingMode mode, bool saturate);
  uint32_t soft_widen(ST from, uint32_t bits); // -> f32, exact
  uint32_t f64_to_f32_odd(uint32_t x);
  uint32_t f64_to_f32_directed(uint32_t x, ir::RoundingMode mode);
  uint32_t int_to_f32_odd(uint32_t value, ST from);
  uint32_t round_to_bf16(uint32_t f32_value); // f32 -> f32 holding the nearest-even bf16

  const ir::Kernel& k_;
  const std::string& name_;
  policy::Budget budget_;
  const Target& target_;
  Options options_;
  ModuleBuilder b_;

  std::set<ir::ExprId> relaxed_;   // float ops that lose NoContraction (budget)
  std::set<ir::ExprId> barriered_; // narrowing converts that get the opaque identity
  uint32_t no_contraction_ = 0, opaque_count_ = 0;

  // Interface.
  std::vector<uint32_t> buffer_var_; // per parameter (0 for scalars)
  std::vector<BufferBinding> bindings_;
  std::vector<uint32_t> private_var_; // Function storage, one flat array per private array
  std::vector<uint32_t> shared_var_;  // per shared array
  std::vector<uint32_t> local_var_;   // per local
  struct PushMember {
    PushEntry entry;
    uint32_t type = 0;
    uint32_t loaded = 0; // id of the prologue load
  };
  std::vector<PushMember> push_;
  uint32_t push_var_ = 0;
  std::vector<uint32_t> interface_;                      // Input builtins
  std::unordered_map<uint32_t, uint32_t> builtin_var_;   // spv::BuiltIn -> variable
  std::unordered_map<uint64_t, uint32_t> builtin_value_; // (builtin, dim) -> loaded component
  std::array<bool, 3> uses_group_{}, uses_global_{};
  std::array<uint32_t, 3> group_id_{}, global_id_{};
  bool buffer_int64_atomics_ = false, shared_int64_atomics_ = false;

  // Control flow.
  uint32_t function_ = 0, entry_label_ = 0, current_label_ = 0;
  bool open_ = true; // the current block has no terminator yet
  struct Loop {
    uint32_t merge, cont;
  };
  std::vector<Loop> loops_;
  std::unordered_map<ir::ExprId, Val> cache_; // per statement: expressions are pure

  // Checks.
  uint32_t control_var_ = 0, group_linear_ = 0, back_edges_var_ = 0;
  uint32_t fault_site_var_ = 0, fault_low_var_ = 0, fault_high_var_ = 0;
  std::vector<CheckSite> sites_;
  uint32_t lane_bits_ = 0, elided_ = 0;
  std::set<uint32_t> assigned_;                        // locals written other than by their let
  std::map<uint32_t, uint32_t> for_locals_;            // for-loop variable -> how many fors set it
  std::vector<uint32_t> active_for_;                   // variables of the fors being emitted
  std::map<uint32_t, uint32_t> lane_locals_;           // let l = local_id(d), never reassigned -> d
  std::unordered_map<uint32_t, uint32_t> control_ptr_; // control word -> prologue pointer
  // Facts from enclosing ifs and fors: the value with key `first` (value_key) is below
  // len(buffer parameter `second`).
  std::vector<std::pair<uint64_t, uint32_t>> facts_;
};

} // namespace halfway::codegen::spirv
