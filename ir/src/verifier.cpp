#include "halfway/ir/verifier.hpp"

#include "halfway/ir/analysis/uniformity.hpp"
#include "halfway/ir/hash.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace halfway::ir {

namespace {

std::string tname(ScalarType t) {
  return std::string(name(t));
}

class Verifier {
public:
  explicit Verifier(const Kernel& k)
      : k_(k), in_scope_(k.locals.size(), false), checked_(k.exprs.size(), 0) {}

  void run() {
    check_signature();
    block(k_.body, 0);
    check_barriers_uniform();
  }

private:
  // ---- errors -------------------------------------------------------------------------------
  [[noreturn]] void fail(const std::string& message, uint32_t line = 0) {
    ErrorContext c;
    c.kernel = k_.name;
    c.line = line;
    throw Error(ErrorKind::Verify, message, c);
  }
  [[noreturn]] void fail_expr(ExprId id, const std::string& message) {
    ErrorContext c;
    c.kernel = k_.name;
    c.node = id;
    c.node_text = print_expr(k_, id);
    c.line = k_.expr(id).line;
    throw Error(ErrorKind::Verify, message, c);
  }

  // ---- kernel signature ---------------------------------------------------------------------
  void check_signature() {
    if (k_.name.empty())
      fail("kernel has an empty name");
    // Names are printed by tools and logs: no control characters (C0, DEL, C1) and valid UTF-8.
    if (printable(k_.name) != k_.name)
      fail("kernel name contains a control character or malformed UTF-8");
    uint64_t lanes = 1;
    for (uint32_t d : k_.workgroup) {
      if (d == 0)
        fail("workgroup size has a zero dimension");
      lanes = std::min(lanes * d, uint64_t{1} << 33); // both factors <= 2^33: no overflow
    }
    if (lanes > kMaxWorkgroupLanes)
      fail("workgroup of " + (lanes >> 32 ? std::string("over 2^32") : std::to_string(lanes)) +
           " lanes exceeds " + std::to_string(kMaxWorkgroupLanes) + " (" +
           std::to_string(k_.workgroup[0]) + " x " + std::to_string(k_.workgroup[1]) + " x " +
           std::to_string(k_.workgroup[2]) + ")");
    std::set<std::string> names;
    auto unique = [&](const std::string& n, const char* what) {
      check_name(n, what);
      if (!names.insert(n).second)
        fail("duplicate name '" + n + "'");
    };
    for (const Param& p : k_.params) {
      unique(p.name, "parameter");
      if (p.type == ScalarType::Bool && p.is_buffer())
        fail("buffer '" + p.name + "' has element type bool; use u8 or u32");
    }
    uint64_t shared_total = 0;
    for (const SharedArray& s : k_.shared) {
      unique(s.name, "shared array");
      check_shape(s, "shared array");
      if (s.type == ScalarType::Bool)
        fail("shared array '" + s.name + "' has element type bool");
      // Each array is below 2^32 elements of at most 8 bytes, so neither sum can overflow.
      const uint64_t size = bytes(s.type);
      const uint64_t array = uint64_t{s.size} * size;
      shared_total = (shared_total + size - 1) / size * size + array;
      if (array > kMaxSharedBytes || shared_total > kMaxSharedBytes)
        fail("shared array '" + s.name + "' of " + std::to_string(s.size) + " " + tname(s.type) +
             " elements (" + std::to_string(array) +
             " bytes) takes the kernel's shared memory to " + std::to_string(shared_total) +
             " bytes, over the limit of " + std::to_string(kMaxSharedBytes) + " bytes");
    }
    uint64_t private_total = 0;
    for (const PrivateArray& p : k_.privates) {
      unique(p.name, "private array");
      check_shape(p, "private array");
      if (p.type == ScalarType::Bool)
        fail("private array '" + p.name + "' has element type bool");
      // Each array is below 2^32 elements of at most 8 bytes: the sum stays far below 2^64.
      private_total += uint64_t{p.size} * bytes(p.type);
      if (private_total > kMaxPrivateBytes)
        fail("private array '" + p.name + "' of " + std::to_string(p.size) + " " + tname(p.type) +
             " elements takes each lane's private memory to " + std::to_string(private_total) +
             " bytes, over the limit of " + std::to_string(kMaxPrivateBytes) + " bytes");
    }
    for (uint32_t i = 0; i < k_.locals.size(); ++i)
      check_name(k_.locals[i].name, "local");
  }

  // One canonical spelling per shape (kernel.hpp): rank 1 with dims all 0, rank 2 and 3 with
  // every dimension listed and non-zero, and `size` their product, computed without overflow.
  void check_shape(const SharedArray& a, const char* what) {
    const std::string where = std::string(what) + " '" + a.name + "'";
    if (a.size == 0 && a.dims[0] == 0)
      fail(where + " has size 0");
    if (a.dims[0] == 0) {
      if (a.dims[1] != 0 || a.dims[2] != 0)
        fail(where + " lists an inner dimension without an outer one");
      return;
    }
    if (a.dims[1] == 0 && a.dims[2] != 0)
      fail(where + " has a dimension of size 0");
    if (a.dims[1] == 0)
      fail(where + " lists one dimension; a rank-1 array leaves dims empty and gives its size");
    uint64_t product = 1;
    for (uint32_t d = 0; d < a.rank(); ++d) {
      if (a.dims[d] == 0)
        fail(where + " has a dimension of size 0");
      product *= a.dims[d]; // each factor < 2^32, and the running product is checked below
      if (product > 0xffffffffull)
        fail(where + " has 2^32 elements or more (" + shape(a) + ")");
    }
    if (product != a.size)
      fail(where + " has size " + std::to_string(a.size) + ", not the product of its dimensions " +
           shape(a));
  }

  static std::string shape(const SharedArray& a) {
    std::string out;
    for (uint32_t d = 0; d < a.rank(); ++d)
      out += "[" + std::to_string(a.dim(d)) + "]";
    return out;
  }

  // Names must read back from the text form: identifiers, and not a literal's spelling.
  void check_name(const std::string& n, const char* what) {
    if (!is_identifier(n))
      fail(std::string(what) + " name '" + n + "' is not an identifier");
    for (const char* reserved : {"true", "false", "inf"})
      if (n == reserved)
        fail(std::string(what) + " name '" + n + "' is reserved for literals");
  }

  // ---- locals and scopes --------------------------------------------------------------------
  void declare(uint32_t local, uint32_t line) {
    if (local >= k_.locals.size())
      fail("statement declares undefined local #" + std::to_string(local), line);
    if (in_scope_[local])
      fail("local '" + k_.locals[local].name + "' is declared twice", line);
    const std::string& n = k_.locals[local].name;
    if (k_.find_param(n) != kNone)
      fail("local '" + n + "' shadows a parameter", line);
    for (const SharedArray& s : k_.shared)
      if (s.name == n)
        fail("local '" + n + "' shadows a shared array", line);
    for (const PrivateArray& p : k_.privates)
      if (p.name == n)
        fail("local '" + n + "' shadows a private array", line);
    if (names_in_scope_.count(n))
      fail("local '" + n + "' shadows another local in scope", line);
    in_scope_[local] = true;
    names_in_scope_.insert(n);
    scopes_.back().push_back(local);
  }

  void leave(uint32_t local) {
    in_scope_[local] = false;
    names_in_scope_.erase(k_.locals[local].name);
  }

  void use_local(uint32_t local, uint32_t line) {
    if (local >= k_.locals.size())
      fail("use of undefined local #" + std::to_string(local), line);
    if (!in_scope_[local])
      fail("use of undefined local '" + k_.locals[local].name + "'", line);
  }

  // ---- expressions --------------------------------------------------------------------------
  ScalarType expr(ExprId id) {
    if (id == kNone || id >= k_.exprs.size())
      fail("reference to a missing expression node");
    if (checked_[id] == epoch_)
      return k_.expr(id).type;
    const Expr& e = k_.expr(id);
    const OpInfo& op = info(e.op);
    // A load takes one index per dimension of its array (checked in leaf()); the table's 1 is
    // the rank of buffers.
    if (op.arity >= 0 && e.nargs != op.arity && e.op != Op::Load)
      fail_expr(id, std::string(op.name) + " takes " + std::to_string(op.arity) + " operands");
    std::array<ScalarType, 4> a{};
    for (int i = 0; i < e.nargs; ++i)
      a[i] = expr(e.args[i]);
    auto same_operands = [&] {
      for (int i = 0; i < e.nargs; ++i)
        if (a[i] != e.type)
          fail_expr(id, std::string(op.name) + " mixes " + tname(a[i]) + " and " + tname(e.type) +
                            "; convert explicitly");
    };
    switch (op.rule) {
    case TypeRule::Leaf:
      leaf(id, e);
      break;
    case TypeRule::Numeric:
      if (!is_arithmetic(e.type))
        not_for(id, e);
      same_operands();
      break;
    case TypeRule::Float:
      if (!is_float(e.type) || is_fp8(e.type))
        not_for(id, e);
      same_operands();
      break;
    case TypeRule::Int:
      if (!is_int(e.type))
        not_for(id, e);
      same_operands();
      break;
    case TypeRule::Bitwise:
      if (!is_int(e.type) && e.type != ScalarType::Bool)
        not_for(id, e);
      same_operands();
      break;
    case TypeRule::Shift:
      if (!is_int(e.type))
        not_for(id, e);
      same_operands();
      break;
    case TypeRule::Compare:
      if (e.type != ScalarType::Bool)
        fail_expr(id, "comparison must have type bool");
      if (a[0] != a[1])
        fail_expr(id,
                  "comparison of " + tname(a[0]) + " with " + tname(a[1]) + "; convert explicitly");
      if (!is_arithmetic(a[0]) && !(a[0] == ScalarType::Bool && (e.op == Op::Eq || e.op == Op::Ne)))
        fail_expr(id, std::string(op.name) + " is not defined for " + tname(a[0]));
      break;
    case TypeRule::Select:
      if (a[0] != ScalarType::Bool)
        fail_expr(id, "select condition must be bool, not " + tname(a[0]));
      if (a[1] != e.type || a[2] != e.type)
        fail_expr(id, "select arms have types " + tname(a[1]) + " and " + tname(a[2]));
      break;
    case TypeRule::Convert:
      if (a[0] == ScalarType::Bool || e.type == ScalarType::Bool)
        fail_expr(id, "conversion to or from bool; use select or a comparison");
      if (a[0] == e.type)
        fail_expr(id, "conversion from " + tname(a[0]) + " to itself");
      if (e.saturate && e.type != ScalarType::E4M3)
        fail_expr(id, "saturating conversion is only defined for e4m3");
      break;
    case TypeRule::Bitcast:
      if (a[0] == ScalarType::Bool || e.type == ScalarType::Bool ||
          info(a[0]).bits != info(e.type).bits)
        fail_expr(id,
                  "bitcast from " + tname(a[0]) + " to " + tname(e.type) + " changes the width");
      break;
    case TypeRule::Pack: {
      uint32_t lanes = pack_lanes(id, e);
      if (e.nargs != lanes)
        fail_expr(id, "pack<" + tname(e.aux) + "> takes " + std::to_string(lanes) + " operands");
      if (e.type != ScalarType::U32)
        fail_expr(id, "pack produces u32");
      for (int i = 0; i < e.nargs; ++i)
        if (a[i] != e.aux)
          fail_expr(id, "pack<" + tname(e.aux) + "> operand has type " + tname(a[i]));
      break;
    }
    case TypeRule::Unpack:
      if (a[0] != ScalarType::U32)
        fail_expr(id, "unpack reads a u32, not " + tname(a[0]));
      if (e.imm >= pack_lanes(id, e))
        fail_expr(id, "unpack lane " + std::to_string(e.imm) + " is out of range");
      if (e.type != e.aux)
        fail_expr(id, "unpack<" + tname(e.aux) + "> has the wrong type");
      break;
    }
    checked_[id] = epoch_;
    return e.type;
  }

  uint32_t pack_lanes(ExprId id, const Expr& e) {
    if (e.aux == ScalarType::F16 || e.aux == ScalarType::BF16)
      return 2;
    if (is_fp8(e.aux))
      return 4;
    fail_expr(id, "pack and unpack take f16, bf16, e4m3 or e5m2, not " + tname(e.aux));
  }

  [[noreturn]] void not_for(ExprId id, const Expr& e) {
    std::string msg = std::string(name(e.op)) + " is not defined for " + tname(e.type);
    if (is_fp8(e.type))
      msg += ": fp8 is a storage format; widen to f32 first";
    fail_expr(id, msg);
  }

  void leaf(ExprId id, const Expr& e) {
    switch (e.op) {
    case Op::Const:
      if (e.type == ScalarType::Bool && e.imm > 1)
        fail_expr(id, "bool constant must be 0 or 1");
      if (truncate_width(e.type, e.imm) != e.imm)
        fail_expr(id, "constant has bits outside its type");
      return;
    case Op::LocalGet:
      use_local(e.ref, e.line);
      if (e.type != k_.locals[e.ref].type)
        fail_expr(id, "local read with the wrong type");
      return;
    case Op::ParamGet:
      if (e.ref >= k_.params.size() || k_.params[e.ref].is_buffer())
        fail_expr(id, "reference to a missing scalar parameter");
      if (e.type != k_.params[e.ref].type)
        fail_expr(id, "parameter read with the wrong type");
      return;
    case Op::BufferLen:
      if (e.ref >= k_.params.size() || !k_.params[e.ref].is_buffer())
        fail_expr(id, "len() of something that is not a buffer");
      if (e.type != ScalarType::U32)
        fail_expr(id, "len() has type u32");
      return;
    case Op::Load: {
      check_memory(e.space, e.ref, e.line);
      const uint32_t rank = e.space == Space::Buffer ? 1 : k_.array(e.space, e.ref).rank();
      if (e.nargs != rank)
        fail_expr(id, "load from '" + k_.memory_name(e.space, e.ref) + "' takes " +
                          std::to_string(rank) + (rank == 1 ? " index" : " indices") + ", not " +
                          std::to_string(e.nargs));
      for (int i = 0; i < e.nargs; ++i) {
        ScalarType it = k_.expr(e.args[i]).type;
        if (!is_int(it))
          fail_expr(id, "index has type " + tname(it) + "; indices are integers");
      }
      if (e.type != k_.element_type(e.space, e.ref))
        fail_expr(id, "load with the wrong type");
      if (e.space == Space::Buffer && k_.params[e.ref].access == Access::Write)
        fail_expr(id, "load from write-only buffer '" + k_.params[e.ref].name + "'");
      return;
    }
    case Op::GlobalId:
    case Op::LocalId:
    case Op::GroupId:
    case Op::GroupSize:
    case Op::NumGroups:
    case Op::Convert:
    case Op::Bitcast:
    case Op::Pack:
    case Op::Unpack:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Rem:
    case Op::Neg:
    case Op::Abs:
    case Op::Min:
    case Op::Max:
    case Op::Clamp:
    case Op::Fma:
    case Op::Sqrt:
    case Op::Rsqrt:
    case Op::Exp:
    case Op::Exp2:
    case Op::Log:
    case Op::Log2:
    case Op::Sin:
    case Op::Cos:
    case Op::Tan:
    case Op::Tanh:
    case Op::Pow:
    case Op::Erf:
    case Op::Atan2:
    case Op::Atan:
    case Op::Floor:
    case Op::Ceil:
    case Op::Fract:
    case Op::Copysign:
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
    case Op::And:
    case Op::Or:
    case Op::Xor:
    case Op::Not:
    case Op::Shl:
    case Op::Shr:
    case Op::Select:
      if (is_builtin(e.op)) {
        if (e.imm > 2)
          fail_expr(id, "builtin dimension must be 0, 1 or 2");
        if (e.type != ScalarType::U32)
          fail_expr(id, "builtins have type u32");
        return;
      }
      fail_expr(id, "unknown leaf op");
    }
  }

  static uint64_t truncate_width(ScalarType t, uint64_t v) {
    uint32_t w = t == ScalarType::Bool ? 1 : info(t).bits;
    return w >= 64 ? v : (v & ((1ull << w) - 1));
  }

  void check_memory(Space space, uint32_t ref, uint32_t line) {
    if (space == Space::Buffer) {
      if (ref >= k_.params.size() || !k_.params[ref].is_buffer())
        fail("access to a missing buffer", line);
    } else if (space == Space::Shared && ref >= k_.shared.size()) {
      fail("access to a missing shared array", line);
    } else if (space == Space::Private && ref >= k_.privates.size()) {
      fail("access to a missing private array", line);
    } else if (space != Space::Buffer && space != Space::Shared && space != Space::Private) {
      fail("access to an unknown memory space", line);
    }
  }

  // A value bound to a slot of type `target`: equal types only; a narrower float gets its own
  // message, since that is the mistake the verifier exists to catch.
  void bind(ScalarType target, ExprId value, const std::string& where, uint32_t line) {
    ScalarType v = expr(value);
    if (v == target)
      return;
    if (is_narrowing(v, target))
      fail("implicit narrowing from " + tname(v) + " to " + tname(target) + " in " + where +
               "; write narrow<" + tname(target) + ">(...) to round explicitly",
           line);
    fail("type mismatch in " + where + ": " + tname(v) + " value, " + tname(target) + " expected",
         line);
  }

  // ---- statements ---------------------------------------------------------------------------
  void block(const Body& stmts, int loop_depth) {
    scopes_.emplace_back();
    for (const Stmt& s : stmts)
      stmt(s, loop_depth);
    for (uint32_t l : scopes_.back())
      leave(l);
    scopes_.pop_back();
    ++epoch_; // expressions may read locals that just left scope: check them again
  }

  void stmt(const Stmt& s, int loop_depth) {
    if (s.d != kNone && s.kind != StmtKind::Store)
      fail("only a store takes a third index", s.line);
    switch (s.kind) {
    case StmtKind::Let:
      if (s.local >= k_.locals.size())
        fail("let of an undefined local", s.line);
      bind(k_.locals[s.local].type, s.a, "let " + k_.locals[s.local].name, s.line);
      declare(s.local, s.line);
      return;
    case StmtKind::Assign:
      use_local(s.local, s.line);
      bind(k_.locals[s.local].type, s.a, "assignment to " + k_.locals[s.local].name, s.line);
      return;
    case StmtKind::Store: {
      check_memory(s.space, s.mem, s.line);
      const std::string& n = k_.memory_name(s.space, s.mem);
      if (s.space == Space::Buffer && k_.params[s.mem].access == Access::Read)
        fail("store to read-only buffer '" + n + "'", s.line);
      const uint32_t rank = s.space == Space::Buffer ? 1 : k_.array(s.space, s.mem).rank();
      const std::array<ExprId, 3> ix = store_indices(s);
      for (uint32_t d = 0; d < 3; ++d) {
        if ((d < rank) != (ix[d] != kNone))
          fail("store to '" + n + "' takes " + std::to_string(rank) +
                   (rank == 1 ? " index" : " indices"),
               s.line);
        if (d < rank)
          index(ix[d], n, s.line);
      }
      bind(k_.element_type(s.space, s.mem), s.b, "store to " + n, s.line);
      return;
    }
    case StmtKind::Atomic: {
      check_memory(s.space, s.mem, s.line);
      const std::string& n = k_.memory_name(s.space, s.mem);
      ScalarType t = k_.element_type(s.space, s.mem);
      // A private array is the lane's own: an atomic on it would be a plain update, spelled so.
      if (s.space == Space::Private)
        fail(std::string(name(s.atomic)) + " on private array '" + n +
                 "'; a private array is the lane's own, update it with a store",
             s.line);
      if (s.space == Space::Shared && k_.shared[s.mem].rank() != 1)
        fail(std::string(name(s.atomic)) + " on shared array '" + n + "' of rank " +
                 std::to_string(k_.shared[s.mem].rank()) + "; atomics take rank-1 arrays",
             s.line);
      if (s.d != kNone)
        fail("atomic with a third index", s.line);
      if (s.space == Space::Buffer && k_.params[s.mem].access != Access::ReadWrite)
        fail(std::string(name(s.atomic)) + " on buffer '" + n + "', which is not read_write",
             s.line);
      if (!is_int(t) || info(t).bits < 32)
        fail(std::string(name(s.atomic)) + " on " + tname(t) +
                 " elements; atomics take i32, u32, i64 or u64",
             s.line);
      index(s.a, n, s.line);
      bind(t, s.b, std::string(name(s.atomic)) + " on " + n, s.line);
      if ((s.atomic == AtomicOp::CompareExchange) != (s.c != kNone))
        fail("atomic_cmpxchg takes a comparand and other atomics do not", s.line);
      if (s.c != kNone)
        bind(t, s.c, "atomic_cmpxchg comparand", s.line);
      if (s.local != kNone) {
        if (s.local >= k_.locals.size())
          fail("atomic result in an undefined local", s.line);
        if (k_.locals[s.local].type != t)
          fail("atomic result local has the wrong type", s.line);
        declare(s.local, s.line);
      }
      return;
    }
    case StmtKind::If:
      condition(s.a, "if", s.line);
      block(s.body, loop_depth);
      block(s.else_body, loop_depth);
      return;
    case StmtKind::While:
      condition(s.a, "while", s.line);
      block(s.body, loop_depth + 1);
      return;
    case StmtKind::For: {
      if (s.local >= k_.locals.size())
        fail("for over an undefined local", s.line);
      ScalarType t = k_.locals[s.local].type;
      if (!is_int(t))
        fail("for loop variable '" + k_.locals[s.local].name + "' must be an integer", s.line);
      bind(t, s.a, "for loop start", s.line);
      bind(t, s.b, "for loop end", s.line);
      bind(t, s.c, "for loop step", s.line);
      scopes_.emplace_back();
      declare(s.local, s.line);
      block(s.body, loop_depth + 1);
      leave(s.local);
      scopes_.pop_back();
      return;
    }
    case StmtKind::Break:
    case StmtKind::Continue:
      if (loop_depth == 0)
        fail(std::string(s.kind == StmtKind::Break ? "break" : "continue") + " outside a loop",
             s.line);
      return;
    case StmtKind::Barrier:
    case StmtKind::Return:
      return;
    }
  }

  void index(ExprId e, const std::string& mem, uint32_t line) {
    ScalarType t = expr(e);
    if (!is_int(t))
      fail("index into '" + mem + "' has type " + tname(t) + "; indices are integers", line);
  }

  void condition(ExprId e, const char* what, uint32_t line) {
    ScalarType t = expr(e);
    if (t != ScalarType::Bool)
      fail(std::string(what) + " condition has type " + tname(t) + ", not bool", line);
  }

  // ---- uniform control flow for barriers ----------------------------------------------------
  // A barrier must be reached by every lane of the workgroup or none (specs/ir.md, "Uniformity";
  // the rules are the uniformity analysis's, which the CPU code generator reads too).
  void check_barriers_uniform() {
    if (const Stmt* s = UniformityAnalysis(k_).divergent_barrier())
      fail("barrier in non-uniform control flow: it depends on lane ids, so "
           "only part of the workgroup may reach it",
           s->line);
  }

  const Kernel& k_;
  std::vector<bool> in_scope_;
  std::unordered_set<std::string> names_in_scope_; // names of the locals in scope (they differ)
  std::vector<std::vector<uint32_t>> scopes_;
  // The nodes checked since the last scope ended: checked_[id] == epoch_ (4 bytes per node).
  std::vector<uint32_t> checked_;
  uint32_t epoch_ = 1;
};

} // namespace

VerifiedKernel verify(Kernel kernel) {
  Verifier(kernel).run();
  uint64_t h = structural_hash(kernel);
  return VerifiedKernel(std::make_shared<const Kernel>(std::move(kernel)), h);
}

VerifiedKernel verify(std::shared_ptr<const Kernel> kernel) {
  Verifier(*kernel).run();
  uint64_t h = structural_hash(*kernel);
  return VerifiedKernel(std::move(kernel), h);
}

} // namespace halfway::ir
