#pragma once
// The state of one kernel's lowering, shared by the lower_*.cpp files: each file implements one
// concern (kernel structure, statements, expressions, floats, conversions, memory, integers).

#include "edge_guard.hpp"
#include "halfway/codegen/llvm/lower.hpp"
#include "halfway/ir/analysis/uniformity.hpp"
#include "halfway/numerics/math.hpp"
#include "lane_guard.hpp"
#include "partition.hpp"
#include "plan.hpp"

#include <array>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ValueMap.h>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace halfway::codegen::llvm::detail {

// A lowered value and how far its NaN bits may be from the interpreter's.
struct Val {
  ::llvm::Value* v = nullptr;
  NanState nan = NanState::Clean;
};

class Lowering {
public:
  Lowering(const ir::Kernel& k, const policy::Budget& budget, const LlvmOptions& options,
           const HostTarget& target, ::llvm::LLVMContext& ctx, ::llvm::Module& m);

  void emit(const std::string& entry_name);
  std::vector<CheckSite> take_sites() { return std::move(sites_); }
  uint64_t shared_bytes() const { return plan_.scratch_bytes; }

private:
  // ---- kernel structure (lower_kernel.cpp) -------------------------------------------------
  ::llvm::Function* emit_groups_function();
  void emit_entry(const std::string& name, ::llvm::Function* groups);
  void emit_group_prologue();
  std::array<::llvm::PHINode*, 4> group_phis(::llvm::Value* begin, ::llvm::Value* gx0,
                                             ::llvm::Value* gy0, ::llvm::Value* gz0,
                                             ::llvm::BasicBlock* setup);
  void emit_parts(const std::vector<Part>& parts, bool top_level);
  void emit_lanes(const Part& part, bool last);
  // Lanes in step (lower_lanes.cpp): which loop of a Lanes part runs `factor` lanes at once.
  struct JamPlan {
    unsigned factor = 1;
    const ir::Stmt* loop = nullptr;    // the for loop whose iterations run in step
    const ir::Stmt* wrapper = nullptr; // an if with a uniform condition around it, or null
    bool shared_var = false;           // bounds equal in every lane: one loop variable for all
    bool lockstep = false;             // split-k shape: one iteration of every lane at a time
    bool stores = false;               // the loop's body stores (or holds an if): an epilogue
    bool rows = false; // 2-D or 3-D workgroups: `factor` rows of lanes in step, x loop step 1
  };
  JamPlan plan_jam(const Part& part);
  struct JamStatements {
    std::vector<const ir::Stmt*> before, after, inner_before, inner_after;
  };
  JamStatements jam_statements(const Part& part, const JamPlan& jam);
  bool uniform_expr(ir::ExprId id, int depth);
  bool starts_at_lane(ir::ExprId id, int depth);
  void emit_lanes_lockstep(const Part& part, const JamPlan& jam);
  void emit_lanes_jammed(const Part& part, const JamPlan& jam);
  void emit_flat_groups(::llvm::Value* begin, ::llvm::Value* end, ::llvm::Value* gx0,
                        ::llvm::Value* gy0, ::llvm::Value* gz0, ::llvm::BasicBlock* setup,
                        ::llvm::BasicBlock* done);
  void emit_uniform_stmt(const Part& part);
  void emit_uniform_if(const Part& part);
  void emit_uniform_while(const Part& part);
  void emit_uniform_for(const Part& part);
  void emit_escape_dispatch();
  ::llvm::MDNode* lane_loop_metadata(const Part& part, bool widen = false, unsigned interleave = 0);
  // A distinct loop ID carrying one hint ("llvm.loop.unroll.disable", "llvm.loop.unroll.full").
  ::llvm::MDNode* loop_hint(const char* name);
  // (z * Y + y) * X + x: the linear lane of local ids.
  ::llvm::Value* linear_lane(const std::array<::llvm::Value*, 3>& id);
  void set_uniform_lane();
  void poll_cancel(); // cancellable code: at a loop's back edge

  // ---- statements (lower_stmt.cpp) ---------------------------------------------------------
  // Each returns false when control cannot reach the next statement (break, continue, return).
  bool lane_block(const ir::Body& block);
  bool lane_stmt(const ir::Stmt& s);
  void lane_if(const ir::Stmt& s);
  void lane_while(const ir::Stmt& s);
  void lane_for(const ir::Stmt& s);
  // The loop of `s` from the loop variable's current value (lane_for without the initialisation).
  void lane_for_rest(const ir::Stmt& s);
  void lane_escape(ir::StmtKind kind);
  void store_local(uint32_t local, Val v);
  ::llvm::Value* local_ptr(uint32_t local);
  ::llvm::Value* bool_condition(ir::ExprId e);

  // ---- expressions (lower_expr.cpp) --------------------------------------------------------
  Val expr(ir::ExprId id);
  Val expr_uncached(ir::ExprId id);
  Val constant(const ir::Expr& e);
  Val builtin(const ir::Expr& e);
  Val float_op(ir::ExprId id, const ir::Expr& e);
  Val compare(const ir::Expr& e);
  Val math_call(const ir::Expr& e);
  Val pack(const ir::Expr& e);
  Val unpack(const ir::Expr& e);
  Val bitcast(const ir::Expr& e);
  Val select(const ir::Expr& e);
  ::llvm::FastMathFlags flags_for(ir::ExprId id) const;
  ::llvm::Value* with_flags(::llvm::Value* v, ir::ExprId id);
  void begin_statement() { cache_.clear(); }

  // ---- floats (lower_float.cpp) ------------------------------------------------------------
  ::llvm::Type* value_type(ir::ScalarType t);
  ::llvm::Type* bits_type(ir::ScalarType t); // the integer type of a float's bit pattern
  ::llvm::Value* is_nan(::llvm::Value* v, ir::ScalarType t);
  ::llvm::Value* quiet_nan(ir::ScalarType t);
  // The interpreter's bits for v: fixes NaNs according to v.nan.
  ::llvm::Value* canonical(Val v, ir::ScalarType t);
  // f16 and bf16 values to f32 (exact), f32 and f64 unchanged.
  ::llvm::Value* to_compute(::llvm::Value* v, ir::ScalarType t);
  // An f32 result back to f16/bf16 with one nearest-even rounding (NaNs: any NaN).
  ::llvm::Value* from_compute(::llvm::Value* f32, ir::ScalarType t);
  ::llvm::Value* bf16_to_f32(::llvm::Value* bits);
  ::llvm::Value* f32_to_bf16_rne(::llvm::Value* f); // f's NaNs must be canonical first
  ::llvm::Value* round_to_odd_f32(::llvm::Value* d);
  ::llvm::Value* round_to_odd_sum(::llvm::Value* s, ::llvm::Value* e);
  std::pair<::llvm::Value*, ::llvm::Value*> two_sum(::llvm::Value* a, ::llvm::Value* b);
  ::llvm::Value* order_key(::llvm::Value* bits);
  ::llvm::Value* is_nan_bits(::llvm::Value* bits, ir::ScalarType t);
  ::llvm::Value* compare_f16(::llvm::CmpInst::Predicate p, ::llvm::Value* a, ::llvm::Value* b);
  ::llvm::Value* min_max(bool is_max, ::llvm::Value* a, ::llvm::Value* b, ir::ScalarType t);
  ::llvm::Value* fract(::llvm::Value* x, ir::ScalarType t);
  ::llvm::Value* fma_exact(::llvm::Value* a, ::llvm::Value* b, ::llvm::Value* c, ir::ScalarType t);
  Val exact_single_rounding(const ir::Expr& convert, const MulAdd& m);

  // ---- elementary functions inline (lower_math.cpp) ----------------------------------------
  // exp/exp2 of f32, f16, bf16 as vectorisable IR (num::fast), or nullopt for other ops.
  std::optional<Val> fast_math(const ir::Expr& e);
  ::llvm::GlobalVariable* exp2_table();
  std::pair<::llvm::Function*, std::string> math_fallback(num::MathFn fn, ir::ScalarType t);

  // ---- conversions (lower_convert.cpp) -----------------------------------------------------
  Val convert(ir::ExprId id, const ir::Expr& e);
  ::llvm::Value* float_to_float(Val v, ir::ScalarType from, ir::ScalarType to, ir::RoundingMode r,
                                bool saturate, NanState& out);
  ::llvm::Value* narrow_float(::llvm::Value* v, ir::ScalarType from, ir::ScalarType to,
                              ir::RoundingMode r);
  ::llvm::Value* directed_adjust(::llvm::Value* result, ::llvm::Value* src, ir::ScalarType to,
                                 ir::ScalarType src_type, ir::RoundingMode r);
  // `signed_payload`: a NaN may keep its payload when it has the code's sign (only where
  // fp8_widening_keeps_nan_sign holds; the caller then marks the value SignedPayload).
  ::llvm::Value* fp8_to_f32(::llvm::Value* bits, ir::ScalarType t, bool signed_payload = false);
  ::llvm::Value* call_convert(::llvm::Value* bits64, ir::ScalarType from, ir::ScalarType to,
                              ir::RoundingMode r, bool saturate);
  ::llvm::Value* int_to_float(::llvm::Value* v, ir::ScalarType from, ir::ScalarType to,
                              ir::RoundingMode r, bool saturate);
  ::llvm::Value* float_to_int(Val v, ir::ScalarType from, ir::ScalarType to);
  ::llvm::Value* to_bits64(::llvm::Value* v, ir::ScalarType t);
  ::llvm::Value* from_bits64(::llvm::Value* bits, ir::ScalarType t);

  // ---- memory (lower_memory.cpp) -----------------------------------------------------------
  ::llvm::Value* element_ptr(ir::Space space, uint32_t ref, ::llvm::Value* idx, bool idx_signed,
                             bool explicit_index, ir::ExprId node, uint32_t line,
                             const char* access);
  ::llvm::Value* index64(ir::ExprId index);
  // The offset of an access: index64 under Explicit and None checks; under Guarded a zero-extended
  // 32-bit value for indices of 32 bits or fewer (sub-32-bit signed ones sign-extended to 32
  // first), so that a negative index lands in the guard too. `split_offset` (buffer loads and
  // stores): `x + c` with a small constant c as zext(x) + c.
  ::llvm::Value* access_index(ir::ExprId index, bool split_offset);
  // An element of a private array or of a rank-2 or rank-3 shared array: every index is
  // compared with its dimension (constants) in Explicit and Guarded code.
  ::llvm::Value* array_element_ptr(ir::Space space, uint32_t ref,
                                   const std::array<::llvm::Value*, 3>& idx,
                                   const std::array<bool, 3>& idx_signed, ir::ExprId node,
                                   uint32_t line, const char* access);
  static bool by_element(const ir::Kernel& k, ir::Space space, uint32_t ref);
  Val load(const ir::Expr& e, ir::ExprId id);
  void store(const ir::Stmt& s);
  void atomic(const ir::Stmt& s);
  uint32_t add_site(ErrorKind kind, ir::ExprId node, uint32_t line, std::string buffer,
                    std::string what, bool index_signed);
  // When `fail` is true: records `site` for this lane and leaves the lane's part (the workgroup
  // fails after the lane loop), or fails at once in uniform code. Checked mode only.
  void check(::llvm::Value* fail, uint32_t site, ::llvm::Value* index, ::llvm::Value* length);
  ::llvm::Function* error_recorder();

  // ---- integers (lower_int.cpp) ------------------------------------------------------------
  Val int_op(ir::ExprId id, const ir::Expr& e);
  ::llvm::Value* div_rem(ir::ExprId id, const ir::Expr& e, ::llvm::Value* a, ::llvm::Value* b);
  ::llvm::Value* shift(ir::ExprId id, const ir::Expr& e, ::llvm::Value* a, ::llvm::Value* b);

  // ---- helpers -----------------------------------------------------------------------------
  ::llvm::BasicBlock* block(const char* name);
  ::llvm::Value* i32(uint64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  ::llvm::Value* i64(uint64_t v) { return b_.getInt64(v); }
  ::llvm::AllocaInst* entry_alloca(::llvm::Type* t, const char* name);
  ::llvm::FunctionCallee runtime_function(const char* name, ::llvm::FunctionType* type);

  const ir::Kernel& k_;
  const policy::Budget& budget_;
  const LlvmOptions& options_;
  const HostTarget& target_;
  ::llvm::LLVMContext& ctx_;
  ::llvm::Module& m_;
  ::llvm::IRBuilder<> b_;
  const LoweringPlan plan_;
  std::vector<CheckSite> sites_;

  // Function-level values of the groups function.
  ::llvm::Function* fn_ = nullptr;
  ::llvm::BasicBlock* alloca_block_ = nullptr;
  ::llvm::BasicBlock* error_exit_ = nullptr;
  ::llvm::Value* error_record_ = nullptr; // ErrorRecord*
  ::llvm::Value* cancel_word_ = nullptr;  // const volatile uint32_t*
  ::llvm::BasicBlock* cancel_exit_ = nullptr;
  ::llvm::Value* shared_base_ = nullptr;
  std::vector<::llvm::Value*> buffer_ptr_, buffer_len_, scalar_;
  std::array<::llvm::Value*, 3> num_groups_{};
  std::vector<::llvm::Value*> local_slot_;
  ::llvm::AllocaInst* escape_slot_ = nullptr;
  ::llvm::AllocaInst* failed_slot_ = nullptr; // checked mode: a lane of this workgroup failed
  ::llvm::Function* recorder_ = nullptr;

  // Flat mode (LoweringPlan::flat): the current row.
  ::llvm::Value* flat_begin_ = nullptr; // i64 t range of the current row
  ::llvm::Value* flat_end_ = nullptr;
  ::llvm::Value* flat_row_group_ = nullptr; // linear id of the row's first group, and its x
  ::llvm::Value* flat_row_gx_ = nullptr;
  ::llvm::Value* flat_gid0_ = nullptr; // per lane: global_id(0), group_id(0)
  ::llvm::Value* flat_group_x_ = nullptr;

  // Per workgroup.
  std::array<::llvm::Value*, 3> group_id_{}, group_base_{};
  ::llvm::Value* group_linear_ = nullptr;
  ::llvm::BasicBlock* group_done_ = nullptr;

  // The lane being generated: its linear index and local ids (lane 0 in uniform code).
  ::llvm::Value* lane_ = nullptr;
  std::array<::llvm::Value*, 3> lid_{};
  // The Lanes part being generated, null in uniform code. emit_lanes owns it for exactly the
  // part's duration; the statements inside read it and report back through it.
  struct LanePart {
    ::llvm::BasicBlock* done = nullptr; // end of the current lane's part
    bool return_sets_flag = false;      // a return must tell the code after the lane loop
    // What the part's code turned out to hold, read when its lane loop closes.
    bool escapes = false;       // it set the escape flag somewhere
    bool narrows_f16 = false;   // it converts between f32 and f16 (lane_loop_metadata's width)
    bool rounds_to_f16 = false; // ... and rounds to f16, not only widens (fp8 decoding)
    bool may_fail = false;      // it holds checked code
    // Lockstep lanes (emit_lanes_lockstep): the part's LaneScalar locals live in per-lane
    // arrays while it runs, since three lane loops share them.
    bool lane_scalars_per_lane = false;
  };
  LanePart* lane_part_ = nullptr;
  // `rounds`: an f32 -> f16 rounding (a narrowing, f16 arithmetic), not only a widening.
  void note_narrows_f16(bool rounds = true) {
    if (lane_part_) {
      lane_part_->narrows_f16 = true;
      lane_part_->rounds_to_f16 = lane_part_->rounds_to_f16 || rounds;
    }
  }

  struct LoopTargets {
    ::llvm::BasicBlock* brk;
    ::llvm::BasicBlock* cont;
  };
  std::vector<LoopTargets> lane_loops_;    // loops inside the current Lanes part
  std::vector<LoopTargets> uniform_loops_; // loops containing barriers, innermost last

  struct FlagScope {
    const std::vector<ir::ExprId>* ops;
    ::llvm::FastMathFlags flags;
  };
  // A 16-bit float value as its bits (i16), and back to the type's value (bf16 is i16 already).
  ::llvm::Value* bits16(::llvm::Value* v) { return b_.CreateBitCast(v, b_.getInt16Ty()); }
  ::llvm::Value* from_bits16(::llvm::Value* v, ir::ScalarType t) {
    return b_.CreateBitCast(v, value_type(t));
  }
  std::vector<FlagScope> flag_scopes_;
  std::unordered_map<ir::ExprId, Val> cache_; // per statement, only without flag scopes
  // f16 results (instructions) whose value widened to f32 is already computed, bit for bit the
  // same as their fpext: to_compute returns it instead of converting again (min_max).
  ::llvm::ValueMap<const ::llvm::Value*, ::llvm::WeakVH> widened_;
  // Edge guards the x loop being generated takes as true (edge_guard.hpp): lane_if emits their
  // bodies only.
  std::unordered_set<const ir::Stmt*> assumed_true_;
  // While the edge test is generated: the part's lets it recomputes.
  const PartLets* edge_lets_ = nullptr;
  // A let or assignment of a local no one observes loads volatile (LoweringPlan::observable).
  bool probe_loads_ = false;
};

// Escape codes in escape_slot_.
inline constexpr uint32_t kEscapeNone = 0, kEscapeBreak = 1, kEscapeContinue = 2, kEscapeReturn = 3;

} // namespace halfway::codegen::llvm::detail
