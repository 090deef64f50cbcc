#include "quirks.hpp"

#include "halfway/diff/compare.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/formats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>

namespace halfway::kernelgen::detail {

using ir::ExprId;
using ir::Op;
using ir::ScalarType;

ExprId add_node(ir::Kernel& k, Op op, ScalarType t, std::initializer_list<ExprId> args,
                uint64_t imm) {
  ir::Expr e;
  e.op = op;
  e.type = t;
  e.imm = imm;
  e.nargs = static_cast<uint8_t>(args.size());
  std::copy(args.begin(), args.end(), e.args.begin());
  return k.add(e);
}

namespace {

// `assumed`: a local counted as a constant (its own assignments are being checked); `depth`: the
// locals followed so far, bounded so that locals assigned from each other end the recursion.
bool constant_tree(const ir::Kernel& k, ExprId id, bool private_loads = true,
                   uint32_t assumed = ir::kNone, int depth = 0, ExprId assumed_value = ir::kNone);

std::optional<uint64_t> literal(const ir::Kernel& k, ExprId id);

bool contains(const ir::Kernel& k, ExprId root, ExprId target);

// The literal a read of a local sees in the driver's straight-line code, or nothing: the body's
// statements in order, each let or assignment of a literal setting the local's value (anything
// else clearing it), the arm a literal condition takes walked in place of its if, the locals
// that the arms of any other if assign, or a loop's body, unknown after it (and, for a loop, from
// its start).
// Campaign 20261207, kernel 55358: `let v0: bool = true; if v0 {} else { v0 = false; }` leaves v0
// true for every read after it, and select(v0, 0.0546875, ..) a literal. (The recursion through
// conditions and values ends: it only reads statements before the read.)
std::optional<uint64_t> reaching_literal(const ir::Kernel& k, ExprId read) {
  const uint32_t local = k.exprs[read].ref;
  std::optional<uint64_t> value;
  bool found = false;
  auto reads = [&](const ir::Stmt& s) {
    for (ExprId root : ir::stmt_exprs(s))
      if (root != ir::kNone && contains(k, root, read))
        return true;
    return false;
  };
  auto sets = [&](const ir::Body& block) {
    bool any = false;
    ir::for_each_stmt(block, [&](const ir::Stmt& t) { any = any || t.local == local; });
    return any;
  };
  std::function<void(const ir::Body&)> walk = [&](const ir::Body& block) {
    for (const ir::Stmt& s : block) {
      if (found)
        return;
      const bool is_loop = s.kind == ir::StmtKind::For || s.kind == ir::StmtKind::While;
      if (is_loop && sets(s.body))
        value.reset(); // loop-carried: unknown from the loop on
      if (reads(s)) {  // (a loop that sets the local reset the value where it began)
        found = true;
        return;
      }
      if (s.kind == ir::StmtKind::If) {
        if (const auto c = literal(k, s.a)) {
          walk(*c != 0 ? s.body : s.else_body);
          continue;
        }
        const auto before = value;
        walk(s.body);
        if (!found) {
          value = before;
          walk(s.else_body);
        }
        if (found)
          return;
        value = sets(s.body) || sets(s.else_body) ? std::nullopt : before;
        continue;
      }
      if (is_loop) {
        walk(s.body);
        if (found)
          return;
        if (sets(s.body)) // (the loop may run no iteration, or several)
          value.reset();
        continue;
      }
      if (s.local == local && (s.kind == ir::StmtKind::Let || s.kind == ir::StmtKind::Assign))
        value = literal(k, s.a);
    }
  };
  walk(k.body);
  return found ? value : std::nullopt;
}

// The bits of an integer expression the driver knows are zero (its range analysis), as a mask:
// those of a literal that are clear, those either operand of an `and` clears, and the ones a
// shift by a literal brings in (only what campaign findings showed).
uint64_t known_zero(const ir::Kernel& k, ExprId id) {
  const ir::Expr& e = k.exprs[id];
  const uint32_t width = ir::info(e.type).bits;
  const uint64_t outside = width >= 64 ? 0 : ~((uint64_t{1} << width) - 1);
  if (ir::is_float(e.type))
    return outside;
  if (const auto v = literal(k, id))
    return ~*v | outside;
  if (e.nargs != 2)
    return outside;
  const uint64_t a = known_zero(k, e.args[0]);
  const auto c = literal(k, e.args[1]);
  switch (e.op) {
  case Op::And:
    return a | known_zero(k, e.args[1]) | outside;
  case Op::Shl:
    return c && *c < width ? (a << *c) | ((uint64_t{1} << *c) - 1) | outside : outside;
  case Op::Shr: // logical for an unsigned type
    return c && *c < width && !ir::info(e.type).is_signed
               ? (a >> *c) | ~(~uint64_t{0} >> *c) | outside
               : outside;
  default:
    return outside;
  }
}

// A comparison of two values as a literal bool; nothing for another op.
template <class T> std::optional<uint64_t> compared(Op op, T x, T y) {
  switch (op) {
  case Op::Lt:
    return x < y;
  case Op::Le:
    return x <= y;
  case Op::Gt:
    return x > y;
  case Op::Ge:
    return x >= y;
  case Op::Eq:
    return x == y;
  case Op::Ne:
    return x != y;
  default:
    return std::nullopt;
  }
}

// The bits of the constant the driver folds an expression to (a literal index, a select's literal
// condition, a float constant), or nothing when it cannot tell. A remainder by the constant 1
// is the literal 0 to the driver, which folds it (campaign 20261205, kernel 7893: the generator
// indexes a dimension of size 1 as rem(v, 1), and pa[0][rem(global_id(0), 1)] was a store to
// pa[0][0] that left a load of pa[3][0] folded).
std::optional<uint64_t> literal(const ir::Kernel& k, ExprId id) {
  if (id == ir::kNone)
    return std::nullopt;
  const ir::Expr& e = k.exprs[id];
  if (e.op == Op::Const)
    return e.imm;
  // The workgroup size is one too: the module declares it (LocalSize).
  if (e.op == Op::GroupSize && e.imm < 3)
    return k.workgroup[e.imm];
  // (Campaign 20261205, kernel 44542: `let v2: bf16 = 0.0; ... mul(v2, x)` was folded as a
  // product by the constant +0.0: the driver propagates the local's value into every read.)
  if (e.op == Op::LocalGet)
    return reaching_literal(k, id);
  // A select of a literal condition is the arm it picks.
  if (e.op == Op::Select) {
    const auto c = literal(k, e.args[0]);
    return c ? literal(k, e.args[*c != 0 ? 1 : 2]) : std::nullopt;
  }
  // The sign and magnitude operations on float literals, which the driver folds on the bits;
  // copysign needs only its second operand's sign, which a copysign by a literal fixes (campaign
  // 20261207, kernel 11050: copysign(0.0:f16, copysign(io[i], 0.109375)) was the constant +0.0,
  // and io[i] times it +0; kernel 6342: select(c, abs(1.0), -0.0) a select of 1.0 and -0.0).
  if (ir::is_float(e.type) && (e.op == Op::Neg || e.op == Op::Abs || e.op == Op::Copysign ||
                               e.op == Op::Floor || e.op == Op::Ceil)) {
    const uint64_t sign = uint64_t{1} << (ir::info(e.type).bits - 1);
    const auto v = literal(k, e.args[0]);
    if (!v)
      return std::nullopt;
    if (e.op == Op::Floor || e.op == Op::Ceil) { // (kernel 11050: copysign(x, floor(0.109375)))
      const num::Format f = ir::format_of(e.type);
      return std::isnan(num::to_double(f, *v))
                 ? std::nullopt
                 : std::optional<uint64_t>(e.op == Op::Floor ? num::floor(f, *v)
                                                             : num::ceil(f, *v));
    }
    if (e.op != Op::Copysign)
      return e.op == Op::Neg ? *v ^ sign : *v & ~sign;
    // The sign of the second operand where it is known without its value.
    std::optional<uint64_t> s;
    bool flip = false;
    for (ExprId o = e.args[1]; !s;) {
      const ir::Expr& x = k.exprs[o];
      if (x.op == Op::Neg) {
        flip = !flip;
        o = x.args[0];
      } else if (x.op == Op::Copysign) {
        o = x.args[1];
      } else if (const auto bits = literal(k, o)) {
        s = *bits & sign;
      } else {
        return std::nullopt;
      }
    }
    return (*v & ~sign) | (flip ? *s ^ sign : *s);
  }
  // An element of a word whose bits there the driver knows are zero: +0.0 (campaign 20261207,
  // kernel 23177: unpack<bf16, 1>(and(len(io), group_size(0))), the upper half of a value at
  // most 1, was the constant +0.0 and a product with it folded to +0).
  if (e.op == Op::Unpack) {
    const uint64_t w = ir::info(e.aux).bits, lane = e.imm;
    const uint64_t element = ((uint64_t{1} << w) - 1) << (w * lane);
    return (known_zero(k, e.args[0]) & element) == element ? std::optional<uint64_t>(0)
                                                           : std::nullopt;
  }
  // A bitcast or an integer conversion of a literal, which the driver folds too (campaign
  // 20261206, kernel 9768: pa[rem(bitcast<u32>(-2147483648:i32), 4)][..] was a store to pa[0]).
  if (e.op == Op::Bitcast)
    return literal(k, e.args[0]);
  // A float conversion of a float literal, a number (kernel 11050:
  // narrow<f16>(bitcast<f32>(88:i32)) was the constant +0.0).
  if (e.op == Op::Convert && !e.saturate && ir::is_float(e.type) && !ir::is_fp8(e.type)) {
    const ScalarType from = k.exprs[e.args[0]].type;
    const auto v = ir::is_float(from) && !ir::is_fp8(from) ? literal(k, e.args[0]) : std::nullopt;
    if (!v || std::isnan(num::to_double(ir::format_of(from), *v)))
      return std::nullopt;
    return num::convert_bits(ir::format_of(from), *v, ir::format_of(e.type),
                             ir::rounding_of(e.rounding));
  }
  if (e.op == Op::Convert && !e.saturate && !ir::is_float(e.type)) {
    const ScalarType from = k.exprs[e.args[0]].type;
    const auto v = ir::is_float(from) ? std::nullopt : literal(k, e.args[0]);
    if (!v)
      return std::nullopt;
    const uint64_t widened = ir::info(from).is_signed
                                 ? static_cast<uint64_t>(ir::sign_extend(*v, ir::info(from).bits))
                                 : *v;
    return ir::truncate_bits(e.type, widened);
  }
  // Integer not, neg and abs of a literal (campaign 20261207, kernel 28185: an if's condition
  // lt(not(select(true, -717711736:i32, -1:i32)), min(3:i32, abs(18:i32))), a literal false).
  if (!ir::is_float(e.type) && e.nargs == 1 &&
      (e.op == Op::Not || e.op == Op::Neg || e.op == Op::Abs)) {
    const auto v = literal(k, e.args[0]);
    if (!v)
      return std::nullopt;
    if (e.type == ScalarType::Bool)
      return e.op == Op::Not ? std::optional<uint64_t>(*v ^ 1) : std::nullopt;
    const int64_t x = ir::sign_extend(*v, ir::info(e.type).bits);
    const uint64_t r = e.op == Op::Not                         ? ~*v
                       : e.op == Op::Neg                       ? 0 - *v
                       : (ir::info(e.type).is_signed && x < 0) ? 0 - *v
                                                               : *v;
    return ir::truncate_bits(e.type, r);
  }
  if ((ir::is_float(e.type) && e.op != Op::Min && e.op != Op::Max) || e.nargs != 2)
    return std::nullopt;
  if (e.op == Op::Rem && literal(k, e.args[1]) == uint64_t{1})
    return 0;
  // Integer arithmetic of literals, which the driver folds too (campaign 20261205, kernel 2364:
  // bitcast<f64>(add(0:u64, 2^63:u64)) is the constant -0.0).
  const auto a = literal(k, e.args[0]), b = literal(k, e.args[1]);
  if (!a || !b)
    return std::nullopt;
  // A float comparison of literals, which the driver folds (campaign 20261206, kernel 27641:
  // select(le(48.6:f64, 80.0:f64), 0.0, x) - pa[...] was 0.0 - pa[...] to it).
  const ScalarType operands = k.exprs[e.args[0]].type;
  if (ir::info(e.op).family == ir::OpFamily::Compare && ir::is_float(operands) &&
      !ir::is_fp8(operands)) {
    const num::Format f = ir::format_of(operands);
    return compared(e.op, num::to_double(f, *a), num::to_double(f, *b));
  }
  // An integer comparison, min or max of literals, signed or not as the operands' type says.
  if (!ir::is_float(operands) && operands != ScalarType::Bool &&
      (ir::info(e.op).family == ir::OpFamily::Compare || e.op == Op::Min || e.op == Op::Max)) {
    const uint32_t w = ir::info(operands).bits;
    const bool is_signed = ir::info(operands).is_signed;
    // Ordered as the type orders them: signed values offset by 2^63 compare as unsigned.
    const auto key = [&](uint64_t v) {
      return is_signed ? static_cast<uint64_t>(ir::sign_extend(v, w)) ^ (uint64_t{1} << 63)
                       : ir::truncate_bits(operands, v);
    };
    const uint64_t x = key(*a), y = key(*b);
    if (e.op == Op::Min || e.op == Op::Max)
      return (x <= y) == (e.op == Op::Min) ? *a : *b;
    return compared(e.op, x, y);
  }
  const uint32_t width = ir::info(e.type).bits;
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  switch (e.op) {
  case Op::Min:
  case Op::Max: { // of float literals too (kernel 27641: min(48.6:f64, 1.8e308:f64))
    if (!ir::is_float(e.type))
      return std::nullopt;
    const num::Format f = ir::format_of(e.type);
    const double x = num::to_double(f, *a), y = num::to_double(f, *b);
    if (std::isnan(x) != std::isnan(y)) // the number (kernel 6342: min(1.0, bitcast(-1:i32)))
      return std::isnan(x) ? b : a;
    if (std::isnan(x) || x == y)
      return x == y && *a == *b ? a : std::nullopt;
    return (x < y) == (e.op == Op::Min) ? *a : *b;
  }
  case Op::Add:
    return (*a + *b) & mask;
  case Op::Sub:
    return (*a - *b) & mask;
  case Op::And:
    return *a & *b;
  case Op::Or:
    return *a | *b;
  case Op::Xor:
    return *a ^ *b;
  case Op::Mul:
    return (*a * *b) & mask;
  case Op::Div:
  case Op::Rem: { // truncating, as the IR's (campaign 20261206, kernel 9768: rem(bitcast(..), 4))
    if (ir::is_float(e.type) || (*b & mask) == 0)
      return std::nullopt;
    if (!ir::info(e.type).is_signed)
      return e.op == Op::Div ? (*a & mask) / (*b & mask) : (*a & mask) % (*b & mask);
    const int64_t x = ir::sign_extend(*a, width), y = ir::sign_extend(*b, width);
    if (y == -1) // (INT_MIN / -1 wraps in the IR; x % -1 is 0)
      return e.op == Op::Div ? (0 - static_cast<uint64_t>(x)) & mask : 0;
    return static_cast<uint64_t>(e.op == Op::Div ? x / y : x % y) & mask;
  }
  default:
    return std::nullopt;
  }
}

// The statements in program order, each with the loops around it (a loop's own condition and
// bounds count as inside it: they are evaluated on every iteration).
struct Placed {
  const ir::Stmt* stmt;
  size_t order;
  std::vector<const ir::Stmt*> loops;
};

void place(const ir::Body& block, std::vector<const ir::Stmt*>& loops, std::vector<Placed>& out) {
  for (const ir::Stmt& s : block) {
    // A loop whose body ends in an unconditional break runs at most once, and is no loop to the
    // driver (campaign 20261207, kernel 75128: `for .. { pa[3] = sub(pa[3], pa[i]); break; }`
    // read pa[3] as the zero it starts with).
    const bool once = !s.body.empty() && s.body.back().kind == ir::StmtKind::Break;
    const bool loop = (s.kind == ir::StmtKind::For || s.kind == ir::StmtKind::While) && !once;
    if (loop)
      loops.push_back(&s);
    out.push_back({&s, out.size(), loops});
    place(s.body, loops, out);
    place(s.else_body, loops, out);
    if (loop)
      loops.pop_back();
  }
}

bool contains(const ir::Kernel& k, ExprId root, ExprId target) {
  if (root == target)
    return true;
  const ir::Expr& e = k.exprs[root];
  for (int i = 0; i < e.nargs; ++i)
    if (contains(k, e.args[i], target))
      return true;
  return false;
}

// Whether a store placed at `store` may run before a statement placed at `user` evaluates its
// expressions: it comes first in program order, or a loop holds both (a later iteration).
bool may_precede(const Placed& store, const Placed& user) {
  if (store.order < user.order)
    return true;
  for (const ir::Stmt* loop : store.loops)
    if (std::find(user.loops.begin(), user.loops.end(), loop) != user.loops.end())
      return true;
  return false;
}

// Whether lavapipe folds the private-array load `load_id` as the zero the array starts with: no
// store to the array could change the element it reads before it is read. A store does not when
// it writes a constant, when its indices and the load's are all literals naming another element
// (measured: a store of a variable to the same element, or any store at a computed index before
// the load, keeps the load; campaign kernel 3214: pa[6][0] read, pa[1][1] stored), or when it
// runs only after every read (later in program order, no loop around both: campaign 20261205,
// kernel 7893, a store at a computed index after the load, even inside a later loop). A load from
// an array never stored folds at any index (campaign kernel 15688: x * pa[rem(global_id(0),
// 1)][0][0]).
bool private_load_folded(const ir::Kernel& k, ExprId load_id) {
  const ir::Expr& load = k.exprs[load_id];
  std::vector<Placed> placed;
  std::vector<const ir::Stmt*> loops;
  place(k.body, loops, placed);
  std::vector<const Placed*> users;
  for (const Placed& p : placed)
    for (ExprId root : ir::stmt_exprs(*p.stmt))
      if (root != ir::kNone && contains(k, root, load_id)) {
        users.push_back(&p);
        break;
      }
  for (const Placed& p : placed) {
    const ir::Stmt& s = *p.stmt;
    if (s.kind != ir::StmtKind::Store || s.space != ir::Space::Private || s.mem != load.ref)
      continue;
    if (constant_tree(k, s.b, false)) // (a private load there: not constant, no recursion)
      continue;
    if (!users.empty() && std::none_of(users.begin(), users.end(),
                                       [&](const Placed* user) { return may_precede(p, *user); }))
      continue;
    const std::array<ExprId, 3> at = ir::store_indices(s);
    bool other = false;
    for (int i = 0; i < load.nargs; ++i) {
      const auto l = literal(k, load.args[i]), w = literal(k, at[i]);
      if (!l || !w)
        return false;
      other = other || *l != *w;
    }
    if (!other)
      return false;
  }
  return true;
}

// Whether the driver sees the local as a constant at every read: each assignment of it is a let
// or an assignment at the top of the kernel's body (no branch or loop around it, so that a read
// sees one of them, not a merge of several) of a constant tree, which may read the local itself
// (campaign 20261205, kernel 44542: `let v2: bf16 = neg(ceil(-0.0347)); ... v2 = max(v2, v2);`,
// then mul(v2, x) folded as a product by +0.0).
bool constant_local(const ir::Kernel& k, uint32_t local, bool private_loads, int depth) {
  if (depth > 8)
    return false;
  // The driver's straight-line code: the body's statements, with the arm a literal condition
  // takes in place of its if (the other arm is gone, with what it assigns: campaign 20261206,
  // kernel 15920, `if xor(true, or(true, ..)) { v2 = ..; }`; campaign 20261207, kernel 28185,
  // `if false {} else { v12 = 0.0; }`). Each assignment there must be constant, given the value
  // the local holds just before it; one anywhere else (a loop, a branch) makes it no constant.
  bool any = false, ok = true;
  ExprId current = ir::kNone; // the value the local holds, where known
  auto sets = [&](const ir::Body& block) {
    bool found = false;
    ir::for_each_stmt(block, [&](const ir::Stmt& t) { found = found || t.local == local; });
    return found;
  };
  std::function<void(const ir::Body&)> walk = [&](const ir::Body& block) {
    for (const ir::Stmt& s : block) {
      if (!ok)
        return;
      const std::optional<uint64_t> c =
          s.kind == ir::StmtKind::If ? literal(k, s.a) : std::optional<uint64_t>{};
      if (c) {
        walk(*c != 0 ? s.body : s.else_body);
        continue;
      }
      if (sets(s.body) || sets(s.else_body)) {
        ok = false;
        return;
      }
      if (s.local != local)
        continue;
      if ((s.kind != ir::StmtKind::Let && s.kind != ir::StmtKind::Assign) ||
          !constant_tree(k, s.a, private_loads, local, depth + 1, current)) {
        ok = false;
        return;
      }
      current = s.a;
      any = true;
    }
  };
  walk(k.body);
  return ok && any;
}

// Whether the expression is built of constants alone (so that the driver folds it). The
// workgroup size is one: the module declares it (LocalSize). So is a load from a private array
// that no store can have changed (private_load_folded): it holds the zero the array starts with,
// and lavapipe folds it as the constant it is.
bool constant_tree(const ir::Kernel& k, ExprId id, bool private_loads, uint32_t assumed, int depth,
                   ExprId assumed_value) {
  const ir::Expr& e = k.exprs[id];
  if (e.op == Op::Const || e.op == Op::GroupSize || literal(k, id))
    return true;
  if (e.op == Op::Load && e.space == ir::Space::Private)
    return private_loads && private_load_folded(k, id);
  // (A local read while its own assignments are checked counts as the constant it holds.)
  if (e.op == Op::LocalGet)
    return e.ref == assumed || constant_local(k, e.ref, private_loads, depth);
  // A select of a literal condition is the arm it picks (campaign 20261205, kernel 1544:
  // sub(select(false, x, 0.0), y) is 0.0 - y to the driver).
  if (e.op == Op::Select)
    if (const auto c = literal(k, e.args[0]))
      return constant_tree(k, e.args[*c != 0 ? 1 : 2], private_loads, assumed, depth,
                           assumed_value);
  if (ir::info(e.op).rule == ir::TypeRule::Leaf)
    return false;
  // A float product with a literal +0.0 is the constant +0.0 to the driver, whatever the other
  // operand (the fold of rewrite_zero_folds), also where the +0.0 is the value the local being
  // checked holds (campaign 20261207, kernel 36790: `let v0: f64 = 0.0; v0 = mul(v0, x[i]);`).
  if (e.op == Op::Mul && ir::is_float(e.type))
    for (int i = 0; i < 2; ++i) {
      const ExprId o = e.args[i];
      const bool held = k.exprs[o].op == Op::LocalGet && k.exprs[o].ref == assumed;
      if (held ? assumed_value != ir::kNone && literal(k, assumed_value) == uint64_t{0}
               : literal(k, o) == uint64_t{0})
        return true;
    }
  for (int i = 0; i < e.nargs; ++i)
    if (!constant_tree(k, e.args[i], private_loads, assumed, depth, assumed_value))
      return false;
  return true;
}

// The unsigned type of a float type's width, for its bits.
ScalarType bits_type(ScalarType t) {
  const uint32_t width = ir::info(t).bits;
  return width == 8    ? ScalarType::U8
         : width == 16 ? ScalarType::U16
         : width == 32 ? ScalarType::U32
                       : ScalarType::U64;
}

// Node `id` becomes select(cond, then, its old self).
void select_instead(ir::Kernel& k, ExprId id, ExprId cond, ExprId then) {
  const ir::Expr e = k.exprs[id];
  const ExprId original = k.add(e);
  ir::Expr& s = k.exprs[id];
  s = ir::Expr{};
  s.op = Op::Select;
  s.type = e.type;
  s.nargs = 3;
  s.args = {cond, then, original, ir::kNone};
  s.line = e.line;
}

// lavapipe folds float arithmetic with a constant +0.0 operand (or constants that fold to it, as
// floor(0.75)) as if signed zeros, infinities and NaNs did not exist, in spite of NoContraction
// and SignedZeroInfNanPreserve: 0.0 * x is +0 (-0 expected for negative x, NaN for an infinite
// or NaN x), 0.0 + x is x (+0 expected for x = -0). A product or sum by -0.0 is computed.
// A difference from +0.0 is folded to a negation: 0.0 - x is -x (+0 expected for x = +0; campaign
// kernel 17102). A product folded so is the constant +0.0 in turn, and folds the product or sum
// it feeds: (x * 0.0) * y is +0 and (x * 0.0) + y is y (campaign 20261205, kernel 8351: NaN
// expected for an infinite x). A product that is +0 only at run time (2.0 * x for x = +0) is not
// a constant and folds nothing. An fma is a product and a sum to these folds: fma(0.0, x, y) is
// y (NaN expected for an infinite x, +0 for x = -0 and y = -0; campaign 20261206, kernel 15920:
// fma(-inf, v2, -inf) with `let v2: f16 = 0.0` was -inf), fma(x, y, 0.0) is x * y (+0 expected
// for x * y = -0); fma(-0.0, x, y) is computed.
//
// A negated constant +0.0 is -(+0.0) to lavapipe, not the constant -0.0, where the negation
// feeds the operation directly (f32, f64 and bf16, which the module computes in float; an f16
// negation reaches the product through a conversion, measured computed): neg(0.0) * x is
// -(0.0 * x), -0 for every x (+0 expected for negative x, NaN for infinite x; campaign
// 20261206, kernel 9768: neg(0.0) * (0.0 - pa[..]) was -0), and x - neg(0.0) is x + 0.0, x (+0
// expected for x = -0). An even number of negations is computed (measured). The other forms
// give what IEEE gives anyway (x + neg(0.0) is x, neg(0.0) - x is -x) and are left alone.
//
// Rewritten here, each such node becomes select(that operand is +0.0 and, for a folded product,
// was folded, what lavapipe gives, the node), the reference deciding the condition.
bool rewrite_zero_folds(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  // For a product rewritten here: the condition under which lavapipe folds it to a constant.
  std::vector<ExprId> folds(n, ir::kNone);
  const std::vector<ir::Expr> original(k.exprs.begin(), k.exprs.end());
  auto negations = [&](ExprId& o) {
    uint32_t count = 0;
    for (; k.exprs[o].op == Op::Neg; o = k.exprs[o].args[0])
      ++count;
    return count;
  };
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    const bool fma = e.op == Op::Fma;
    if ((e.op != Op::Mul && e.op != Op::Add && e.op != Op::Sub && !fma) || !ir::is_float(e.type))
      continue;
    for (int i = 0; i < e.nargs; ++i) {
      ExprId operand = e.args[i];
      // A folded product is an operand only once rewritten, so before this node (operands come
      // first in the arena: their ids are smaller).
      // (A product of constants is a constant like any other: its value decides, campaign
      // 20261205, kernel 8351: mul(bitcast<f32>(group_size(0)), 0.0) times a NaN was +0.)
      const bool constant = constant_tree(k, operand);
      const bool folded_product = !constant && operand < id && folds[operand] != ir::kNone;
      if (!constant && !folded_product)
        continue;
      ExprId peeled = operand;
      const bool negated =
          constant && !fma && e.type != ScalarType::F16 && negations(peeled) % 2 == 1;
      const ExprId other = fma ? ir::kNone : e.args[1 - i];
      if (negated) {
        if (e.op == Op::Add || (e.op == Op::Sub && i == 0))
          continue; // what IEEE gives
        // A product of constants is folded exactly, and so is one by a folded product (a
        // constant too): the node computes it from its rewritten operands, and feeds the folds
        // after it when its value is +0.
        if (e.op == Op::Mul && literal(k, other))
          continue;
        if (e.op == Op::Mul && other < id && folds[other] != ir::kNone) {
          folds[id] = folds[other];
          changed = true;
          break;
        }
        operand = peeled;
      } else if (e.op == Op::Sub && i == 1) {
        continue;
      } else if (e.op == Op::Mul && constant && literal(k, other)) {
        // A product of a constant +0.0 (a literal, or a private load the driver folds) and a
        // literal is folded exactly, as with a negated zero above (campaign 20261219, kernel 338:
        // mul(0.0:bf16, -1.1754944e-38:bf16) and pa[k] times it were -0;
        // known-device-issues/mul-zero-literals.hk).
        continue;
      }
      // A product of two constants is computed exactly, also where one is a product that folded
      // (campaign 20261207, kernel 51556: 0.0 * (-x * 0.0) is 0.0 * -0.0, -0).
      const bool other_folds = e.op == Op::Mul && other < id && folds[other] != ir::kNone;
      if (folded_product && e.op == Op::Mul && constant_tree(k, other))
        continue;
      const ScalarType u = bits_type(e.type);
      ExprId is_zero =
          add_node(k, Op::Eq, ScalarType::Bool,
                   {add_node(k, Op::Bitcast, u, {operand}), add_node(k, Op::Const, u, {}, 0)});
      if (folded_product)
        is_zero = add_node(k, Op::And, ScalarType::Bool, {folds[operand], is_zero});
      if (constant && other_folds)
        is_zero = add_node(k, Op::And, ScalarType::Bool,
                           {is_zero, add_node(k, Op::Not, ScalarType::Bool, {folds[other]})});
      ExprId folded = ir::kNone;
      if (fma) {
        folded = i < 2 ? e.args[2] : add_node(k, Op::Mul, e.type, {e.args[0], e.args[1]});
      } else if (e.op == Op::Mul) {
        // A negation is taken out of a product first: -x * 0.0 is -(x * 0.0), -0 (kernel 15688),
        // but for an f16 negation, which reaches the product through a conversion: +0 (campaign
        // 20261207, kernel 11050: neg(io[i]) * copysign(0.0:f16, ..) was +0).
        // The driver moves negations out of products at every level, so those inside a product
        // operand count too (campaign 20261207, kernel 51556: 0.0 * (neg(v) * w) was -0).
        // (Read from the kernel as it was: the products before this node are selects by now.)
        std::function<uint64_t(ExprId)> sign_of = [&](ExprId o) -> uint64_t {
          const ir::Expr& x = o < n ? original[o] : k.exprs[o];
          if (x.op == Op::Neg)
            return 1 ^ sign_of(x.args[0]);
          if (x.op == Op::Mul && x.type == e.type)
            return sign_of(x.args[0]) ^ sign_of(x.args[1]);
          // max(-a, -b) is -min(a, b) to it, and the other way round (campaign 20261207, kernel
          // 66400: max(neg(0.0), neg(v)) * 0.0 was -0).
          auto read = [&](ExprId a) -> const ir::Expr& { return a < n ? original[a] : k.exprs[a]; };
          if ((x.op == Op::Max || x.op == Op::Min) && read(x.args[0]).op == Op::Neg &&
              read(x.args[1]).op == Op::Neg)
            return 1;
          return 0;
        };
        uint64_t sign = negated ? 1 : 0;
        if (e.type != ScalarType::F16)
          sign ^= sign_of(other);
        folded = add_node(k, Op::Const, e.type, {}, sign << (ir::info(e.type).bits - 1));
      } else if (e.op == Op::Add || negated) { // 0.0 + x, or x - neg(0.0): x
        folded = other;
      } else {
        folded = add_node(k, Op::Neg, e.type, {e.args[1]});
      }
      // Each operand that may fold the node is a condition of its own (campaign 20261207,
      // kernel 42773: in (x * 22.0) * 0.0 the inner product is a candidate that never folds, and
      // the literal 0.0 must still be tried).
      select_instead(k, id, is_zero, folded);
      if (e.op == Op::Mul)
        folds[id] = folds[id] == ir::kNone
                        ? is_zero
                        : add_node(k, Op::Or, ScalarType::Bool, {folds[id], is_zero});
      changed = true;
    }
  }
  return changed;
}

// lavapipe returns a NaN operand's own NaN where the interpreter returns the canonical positive
// one; the sign shows once copysign takes it or a bitcast exposes it, also when integer
// arithmetic follows (bitcast<i32>(exp2(-NaN)) - 85). Rewritten here with the sign flipped: each
// copysign(x, v) of a NaN v becomes its negation, and each bitcast of a NaN has its sign bit
// flipped.
bool rewrite_nan_sign(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    if (e.op == Op::Copysign) {
      const ExprId v = e.args[1];
      const ExprId copy = k.add(e);
      select_instead(k, id, add_node(k, Op::Ne, ScalarType::Bool, {v, v}),
                     add_node(k, Op::Neg, e.type, {copy}));
      changed = true;
    } else if (e.op == Op::Bitcast && ir::is_float(k.exprs[e.args[0]].type) &&
               !ir::is_fp8(k.exprs[e.args[0]].type) && ir::is_int(e.type)) {
      // (fp8 NaNs are the backend's own integer code, the same on every device.)
      const ExprId v = e.args[0];
      const ExprId copy = k.add(e);
      const ExprId sign =
          add_node(k, Op::Const, e.type, {}, uint64_t{1} << (ir::info(e.type).bits - 1));
      select_instead(k, id, add_node(k, Op::Ne, ScalarType::Bool, {v, v}),
                     add_node(k, Op::Xor, e.type, {copy, sign}));
      changed = true;
    }
  }
  return changed;
}

// lavapipe holds f16 values in float registers: any f16 NaN that a pack or a bitcast exposes
// comes out as the canonical quiet NaN with its sign (0x7c01 and 0x7e01 give 0x7e00, 0xfc01
// gives 0xfe00; known-device-issues/f16-nan-payload.hk), also where integer code uses the word
// (an index). Rewritten here, each f16 operand v of a pack or a bitcast becomes
// select(v is NaN, bitcast<f16>(sign of v | 0x7e00), v).
bool rewrite_f16_nan_payload(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    const bool pack = e.op == Op::Pack && e.aux == ScalarType::F16;
    const bool cast = e.op == Op::Bitcast && k.exprs[e.args[0]].type == ScalarType::F16;
    if (!pack && !cast)
      continue;
    for (int i = 0; i < e.nargs; ++i) {
      const ExprId v = e.args[i];
      const ExprId bits = add_node(k, Op::Bitcast, ScalarType::U16, {v});
      const ExprId canonical =
          add_node(k, Op::Bitcast, ScalarType::F16,
                   {add_node(k, Op::Or, ScalarType::U16,
                             {add_node(k, Op::And, ScalarType::U16,
                                       {bits, add_node(k, Op::Const, ScalarType::U16, {}, 0x8000)}),
                              add_node(k, Op::Const, ScalarType::U16, {}, 0x7e00)})});
      const ExprId quiet = add_node(k, Op::Select, ScalarType::F16,
                                    {add_node(k, Op::Ne, ScalarType::Bool, {v, v}), canonical, v});
      k.exprs[id].args[i] = quiet;
    }
    changed = true;
  }
  return changed;
}

// The IR leaves the sign and payload of a NaN that an arithmetic op returns unspecified
// (specs/ir.md, "NaN results"); the interpreter returns the canonical +NaN. lavapipe computes on
// x86 SSE/AVX, which returns the first NaN operand made quiet (its sign and payload kept), and for
// an invalid operation (0 * inf, inf - inf) the default NaN with the sign set. Through a bitcast or
// a pack integer code then sees those bits (and(bitcast<u32>(mul(c, NaN)), 31) is the NaN's low
// payload bits; known-device-issues/nan-payload-propagated.hk). Rewritten here, each float node of
// the arithmetic, fma, math and integral families (the op table's families) becomes
// select(operand k is NaN, quiet(operand k), ..., select(the node is NaN, -NaN, the node)), the
// operands tested in the order `order` gives (x86 returns the first source operand, and the
// compiler may commute): one model per order. f16 NaNs keep their sign only: lavapipe loses f16
// payloads in its float registers (f16-nan-payload.hk). fp8 has no arithmetic. Conversions
// have their own model (rewrite_nan_conversion).
bool rewrite_nan_propagation(ir::Kernel& k, bool reversed) {
  bool changed = false;
  const size_t n = k.exprs.size();
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    const ir::OpFamily family = ir::info(e.op).family;
    if (!ir::is_float(e.type) || ir::is_fp8(e.type) ||
        (family != ir::OpFamily::Arith && family != ir::OpFamily::Fma &&
         family != ir::OpFamily::Math && family != ir::OpFamily::Integral))
      continue;
    const ScalarType u = bits_type(e.type);
    const num::FormatInfo& fi = num::info(*diff::float_format(e.type));
    const auto word = [&](uint64_t v) { return add_node(k, Op::Const, u, {}, v); };
    // bf16 lives in f32 registers: an op that rounds goes through the backend's bf16 rounding,
    // which makes a NaN canonical with its sign (codegen/spirv round_to_bf16); floor and ceil
    // keep the f32 NaN, whose upper half is the bf16 one made quiet.
    const bool keeps_sign_only =
        e.type == ScalarType::F16 || (e.type == ScalarType::BF16 && ir::info(e.op).rounds);
    const ExprId copy = k.add(e);
    ExprId value =
        add_node(k, Op::Select, e.type,
                 {add_node(k, Op::Ne, ScalarType::Bool, {copy, copy}),
                  add_node(k, Op::Const, e.type, {}, fi.sign_mask | fi.quiet_nan), copy});
    // A difference is a + (-b) to the driver, and the negation of a literal b is folded: a NaN
    // literal b comes back with its sign flipped (campaign 20261207, kernel 34719:
    // sub(0.021484375:f16, nan(0x7c01):f16) was 0xfe00; kernel 56303: sub(x0[0], nan(0x7f81):bf16)
    // was -NaN); a NaN b read at run time keeps its sign.
    const bool folded_sub = e.op == Op::Sub && literal(k, e.args[1]);
    for (int j = 0; j < e.nargs; ++j) {
      const ExprId a = e.args[reversed ? j : e.nargs - 1 - j];
      if (k.exprs[a].type != e.type)
        continue;
      ExprId bits = add_node(k, Op::Bitcast, u, {a});
      if (folded_sub && a == e.args[1])
        bits = add_node(k, Op::Xor, u, {bits, word(fi.sign_mask)});
      const ExprId quiet =
          keeps_sign_only
              ? add_node(k, Op::Or, u,
                         {add_node(k, Op::And, u, {bits, word(fi.sign_mask)}), word(fi.quiet_nan)})
              : add_node(k, Op::Or, u, {bits, word(fi.quiet_nan & ~fi.inf_bits)});
      value = add_node(k, Op::Select, e.type,
                       {add_node(k, Op::Ne, ScalarType::Bool, {a, a}),
                        add_node(k, Op::Bitcast, e.type, {quiet}), value});
    }
    k.exprs[id] = k.exprs[value];
    k.exprs[id].line = e.line;
    changed = true;
  }
  return changed;
}

// lavapipe converts between float formats on x86 (cvtss2sd, cvtsd2ss, vcvtph2ps) and keeps a
// NaN's sign and payload, which the IR leaves unspecified for a conversion (specs/ir.md, "NaN
// results") and the interpreter makes the canonical NaN with its sign:
//  - widening f32 -> f64, f16 -> f32, f16 -> f64: made quiet, the fraction shifted up into the
//    wider fraction (0xffc12345 -> 0xfff82468a0000000, 0x7c01 -> 0x7fc02000);
//  - narrowing f64 -> f32: made quiet, the fraction's top 23 bits (0xfff8123456789abc ->
//    0xffc091a2);
//  - bf16 -> f32: the bf16 bits shifted up 16, not made quiet (bf16 lives in f32 registers), and
//    bf16 -> f64 is that f32 widened;
//  - narrowing to f16 or bf16: the canonical NaN with its sign, as the interpreter.
// And it folds narrow<S>(widen<W>(v)) of an S value v into v, so a signalling NaN goes through
// unchanged. Found by `halfway fuzz --seed 20261203` (kernel 2349: bitcast<i64>(widen<f64>(io))
// of the signalling NaN 0x7f800001 times -2; known-device-issues/nan-payload-conversion.hk).
// Rewritten here: each such pair becomes v, then each float-to-float conversion to f32 or f64
// becomes select(v is NaN, those bits, the conversion).
bool rewrite_nan_conversion(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  auto float_convert = [&](const ir::Expr& e) {
    return e.op == Op::Convert && ir::is_float(e.type) && !ir::is_fp8(e.type) &&
           ir::is_float(k.exprs[e.args[0]].type) && !ir::is_fp8(k.exprs[e.args[0]].type);
  };
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    if (!float_convert(e) || !float_convert(k.exprs[e.args[0]]))
      continue;
    const ir::Expr& inner = k.exprs[e.args[0]];
    const ExprId v = inner.args[0];
    if (k.exprs[v].type == e.type && ir::info(inner.type).bits > ir::info(e.type).bits) {
      k.exprs[id] = k.exprs[v];
      k.exprs[id].line = e.line;
      changed = true;
    }
  }
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    if (!float_convert(e) || (e.type != ScalarType::F32 && e.type != ScalarType::F64))
      continue;
    const ExprId v = e.args[0];
    ScalarType from = k.exprs[v].type;
    if (from == e.type)
      continue;
    const auto u64 = [&](uint64_t c) { return add_node(k, Op::Const, ScalarType::U64, {}, c); };
    const auto to_bits = [&](ExprId x, ScalarType t) { // an integer conversion, unless a no-op
      return k.exprs[x].type == t ? x : add_node(k, Op::Convert, t, {x});
    };
    ExprId b = to_bits(add_node(k, Op::Bitcast, bits_type(from), {v}), ScalarType::U64);
    if (from == ScalarType::BF16) {
      b = add_node(k, Op::Shl, ScalarType::U64, {b, u64(16)});
      from = ScalarType::F32;
    }
    ExprId nan = b; // bf16 -> f32: the shifted bits as they are
    if (from != e.type) {
      const num::FormatInfo& src = num::info(*diff::float_format(from));
      const num::FormatInfo& dst = num::info(*diff::float_format(e.type));
      const auto moved = [&](uint64_t mask, int shift) {
        const ExprId part = add_node(k, Op::And, ScalarType::U64, {b, u64(mask)});
        return shift >= 0 ? add_node(k, Op::Shl, ScalarType::U64, {part, u64(uint64_t(shift))})
                          : add_node(k, Op::Shr, ScalarType::U64, {part, u64(uint64_t(-shift))});
      };
      nan = add_node(
          k, Op::Or, ScalarType::U64,
          {add_node(k, Op::Or, ScalarType::U64,
                    {moved(src.sign_mask, dst.total_bits - src.total_bits), u64(dst.quiet_nan)}),
           moved(src.man_mask, dst.man_bits - src.man_bits)});
    }
    const ExprId bits = to_bits(nan, bits_type(e.type));
    select_instead(k, id, add_node(k, Op::Ne, ScalarType::Bool, {v, v}),
                   add_node(k, Op::Bitcast, e.type, {bits}));
    changed = true;
  }
  return changed;
}

// Whether two expressions compute the same value (same ops, types, immediates and operands).
bool same_tree(const ir::Kernel& k, ExprId a, ExprId b) {
  if (a == b)
    return true;
  const ir::Expr &x = k.exprs[a], &y = k.exprs[b];
  if (x.op != y.op || x.type != y.type || x.imm != y.imm || x.aux != y.aux || x.ref != y.ref ||
      x.nargs != y.nargs || x.space != y.space || x.rounding != y.rounding ||
      x.saturate != y.saturate)
    return false;
  for (int i = 0; i < x.nargs; ++i)
    if (!same_tree(k, x.args[i], y.args[i]))
      return false;
  return true;
}

// The operand of the ceil and floor ops `id` is made of (itself when it is neither).
ExprId round_peeled(const ir::Kernel& k, ExprId id) {
  while (k.exprs[id].op == Op::Ceil || k.exprs[id].op == Op::Floor)
    id = k.exprs[id].args[0];
  return id;
}

// lavapipe (Mesa's NIR) drops an fabs whose operand its range analysis deems not negative, and
// that analysis counts -0.0 (and a NaN's sign) as not negative: abs(-0.0) is -0.0, abs(x * -0.0)
// is -0.0 for x >= 0, abs(v * v) is -NaN for v = -NaN (known-device-issues/abs-not-negative.hk).
// Rewritten here, each abs(x) whose operand the analysis decides that way becomes x when the
// condition holds: x a constant expression with x >= 0, a product of two equal operands, a
// product with a constant expression equal to zero, or a select between two constant expressions
// both >= 0 (under ceil or floor or not).
//
// The same for integers: the analysis deems iabs(v) not negative, and so an arithmetic shift
// right of it, although abs(INT_MIN) is INT_MIN: abs(shr(abs(x), 29)) is -4 for x = INT_MIN
// (4 expected; campaign 20261207, kernel 39417; known-device-issues/abs-shift-int-min.hk).
// A division of it is computed (measured). Rewritten here, such an abs becomes its operand.
bool rewrite_abs_dropped(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    if (e.op == Op::Abs && ir::info(e.type).is_signed && !ir::is_float(e.type)) {
      const ir::Expr& x = k.exprs[e.args[0]];
      if (x.op == Op::Shr && k.exprs[x.args[0]].op == Op::Abs) {
        select_instead(k, id, add_node(k, Op::Const, ScalarType::Bool, {}, 1), e.args[0]);
        changed = true;
      }
      continue;
    }
    if (e.op != Op::Abs || !ir::is_float(e.type))
      continue;
    const ExprId x = e.args[0];
    const ir::Expr xe = k.exprs[x]; // a copy: add_node below grows k.exprs
    ExprId cond = ir::kNone;
    const ExprId zero = add_node(k, Op::Const, e.type, {}, 0);
    if (constant_tree(k, x)) {
      cond = add_node(k, Op::Ge, ScalarType::Bool, {x, zero});
    } else if (xe.op == Op::Mul && same_tree(k, xe.args[0], xe.args[1])) {
      cond = add_node(k, Op::Const, ScalarType::Bool, {}, 1);
    } else if (xe.op == Op::Mul) {
      for (int i = 0; i < 2 && cond == ir::kNone; ++i)
        if (constant_tree(k, xe.args[i]))
          cond = add_node(k, Op::Eq, ScalarType::Bool, {xe.args[i], zero});
    } else if (const ir::Expr se = k.exprs[round_peeled(k, x)]; se.op == Op::Select &&
                                                                constant_tree(k, se.args[1]) &&
                                                                constant_tree(k, se.args[2])) {
      // Either way a constant >= 0, which ceil and floor keep so (campaign kernel 15737:
      // ceil(select(c, 0.375, ceil(-2^-24))), where ceil(-2^-24) is -0.0).
      cond = add_node(k, Op::And, ScalarType::Bool,
                      {add_node(k, Op::Ge, ScalarType::Bool, {se.args[1], zero}),
                       add_node(k, Op::Ge, ScalarType::Bool, {se.args[2], zero})});
    }
    if (cond == ir::kNone)
      continue;
    select_instead(k, id, cond, x);
    changed = true;
  }
  return changed;
}

// lavapipe compares an i64 made by sign-extending an i32 (convert<i64> of an i32) as if it had
// been zero-extended: ge(convert<i64>(-5:i32), 0:i64) is true, lt(convert<i64>(x), 0) false for
// every x (known-device-issues/sext-compare.hk); the converted value itself, stored, is right.
// Rewritten here, each such operand of an ordered comparison becomes convert<i64>(bitcast<u32>(x)).
bool rewrite_sext_compare(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    if (e.op != Op::Lt && e.op != Op::Le && e.op != Op::Gt && e.op != Op::Ge)
      continue;
    for (int i = 0; i < 2; ++i) {
      // From any narrower signed integer: i8 and i16 too (campaign 20261207, kernel 79748:
      // ge(3:i64, convert<i64>(-128:i8)) was false).
      const ir::Expr& a = k.exprs[e.args[i]];
      const ScalarType from = a.op == Op::Convert ? k.exprs[a.args[0]].type : ScalarType::Bool;
      const ScalarType bits = from == ScalarType::I32   ? ScalarType::U32
                              : from == ScalarType::I16 ? ScalarType::U16
                              : from == ScalarType::I8  ? ScalarType::U8
                                                        : ScalarType::Bool;
      if (a.op != Op::Convert || a.type != ScalarType::I64 || bits == ScalarType::Bool)
        continue;
      const ExprId zext =
          add_node(k, Op::Convert, ScalarType::I64, {add_node(k, Op::Bitcast, bits, {a.args[0]})});
      k.exprs[id].args[i] = zext;
      changed = true;
    }
  }
  return changed;
}

// lavapipe returns -NaN for atan2(-0.0, x) with x < 0 or x a positive f32 subnormal when the -0.0
// is a constant (-pi or -0 expected; a -0.0 read from a buffer gives -pi):
// known-device-issues/atan2-minus-zero.hk, campaign kernel 18919. Rewritten here, each such atan2
// becomes select(that -0.0 and that x, -NaN, the node), the NaN with lavapipe's bits (x86's
// default NaN, rounded to the format by the backend).
bool rewrite_atan2_minus_zero(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    if (e.op != Op::Atan2 || !constant_tree(k, e.args[0]))
      continue;
    const uint64_t nan = e.type == ScalarType::F32    ? 0xffc00000
                         : e.type == ScalarType::F16  ? 0xfe00
                         : e.type == ScalarType::BF16 ? 0xffc0
                                                      : 0;
    if (!nan)
      continue;
    const ScalarType u = bits_type(e.type);
    const uint64_t sign = uint64_t{1} << (ir::info(e.type).bits - 1);
    const ExprId zero = add_node(k, Op::Const, e.type, {}, 0);
    ExprId x_cond = add_node(k, Op::Lt, ScalarType::Bool, {e.args[1], zero});
    if (e.type != ScalarType::F16) { // a subnormal of f32's range counts as negative too
      const ExprId subnormal = add_node(
          k, Op::And, ScalarType::Bool,
          {add_node(k, Op::Gt, ScalarType::Bool, {e.args[1], zero}),
           add_node(k, Op::Lt, ScalarType::Bool,
                    {e.args[1], add_node(k, Op::Const, e.type, {},
                                         e.type == ScalarType::F32 ? 0x00800000 : 0x0080)})});
      x_cond = add_node(k, Op::Or, ScalarType::Bool, {x_cond, subnormal});
    }
    const ExprId cond = add_node(
        k, Op::And, ScalarType::Bool,
        {add_node(k, Op::Eq, ScalarType::Bool,
                  {add_node(k, Op::Bitcast, u, {e.args[0]}), add_node(k, Op::Const, u, {}, sign)}),
         x_cond});
    select_instead(k, id, cond, add_node(k, Op::Const, e.type, {}, nan));
    changed = true;
  }
  return changed;
}

// lavapipe returns +pi/2 for atan2(v, +0.0) and +0 for atan2(v, +inf) with v a NaN of either
// sign when x is a constant (NaN expected; an x read from a buffer gives NaN; -0.0, -inf and
// other constants give NaN), in f32, f16 and bf16, presumably from folding v / x as an infinity
// or a zero of v's sign: known-device-issues/atan2-nan-constant.hk, campaign 20261205, kernel
// 50775 (atan2(io[i], ceil(mul(floor(-3.39e38:bf16), -5.0))), that x +inf, with io NaN; reduced,
// atan2(io[i], 0.0:bf16)). Rewritten here, each atan2 of a constant x becomes select(v is NaN and
// x is +0.0, pi/2 in the type, select(v is NaN and x is +inf, +0, the node)), the reference
// deciding x's value.
bool rewrite_atan2_nan_constant(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    if (e.op != Op::Atan2 || !constant_tree(k, e.args[1]))
      continue;
    const uint64_t half_pi = e.type == ScalarType::F32    ? 0x3fc90fdb
                             : e.type == ScalarType::F16  ? 0x3e48
                             : e.type == ScalarType::BF16 ? 0x3fc9
                                                          : 0;
    if (!half_pi)
      continue;
    const ScalarType u = bits_type(e.type);
    const ExprId v = e.args[0];
    const ExprId x_bits = add_node(k, Op::Bitcast, u, {e.args[1]});
    const ExprId nan = add_node(k, Op::Ne, ScalarType::Bool, {v, v});
    auto x_is = [&](uint64_t bits) {
      return add_node(k, Op::And, ScalarType::Bool,
                      {nan, add_node(k, Op::Eq, ScalarType::Bool,
                                     {x_bits, add_node(k, Op::Const, u, {}, bits)})});
    };
    select_instead(k, id, x_is(num::info(ir::format_of(e.type)).exp_mask),
                   add_node(k, Op::Const, e.type, {}, 0));
    select_instead(k, id, x_is(0), add_node(k, Op::Const, e.type, {}, half_pi));
    changed = true;
  }
  return changed;
}

// lavapipe (Mesa's NIR) rewrites a select between the constants 1.0 and 0.0 (either way round,
// either sign) into a conversion of the condition, matching the constants by value: -0.0 is
// taken for +0.0, and the zero it returns has the sign of the 1.0 (select(c, -0.0, 1.0) is +0
// where c holds, select(c, -1.0, 0.0) is -0 where it does not). OpSelect moves bits and the
// module preserves signed zeros, so Vulkan does not allow it. Found by `halfway fuzz --seed
// 20261205` (kernel 2364: bitcast<u64>(select(c, bitcast<f64>(2^63), 1.0)) was 0, not 2^63;
// known-device-issues/select-signed-zero.hk). Rewritten here, each such select's zero arm takes
// the sign of the other arm.
bool rewrite_select_signed_zero(ir::Kernel& k) {
  bool changed = false;
  const size_t n = k.exprs.size();
  for (ExprId id = 0; id < n; ++id) {
    const ir::Expr e = k.exprs[id];
    if (e.op != Op::Select || !ir::is_float(e.type))
      continue;
    // A constant arm: a literal, its bits reinterpreted (bitcast<f64>(2^63:u64)), its sign set.
    const auto a_bits = literal(k, e.args[1]), b_bits = literal(k, e.args[2]);
    if (!a_bits || !b_bits)
      continue;
    const num::Format f = ir::format_of(e.type);
    const uint64_t sign = uint64_t{1} << (ir::info(e.type).bits - 1);
    const uint64_t one = num::from_double(f, 1.0);
    const uint64_t a = *a_bits, b = *b_bits;
    for (int zero = 1; zero <= 2; ++zero) {
      const uint64_t z = zero == 1 ? a : b, other = zero == 1 ? b : a;
      if ((z & ~sign) != 0 || (other & ~sign) != one || (z & sign) == (other & sign))
        continue;
      k.exprs[id].args[static_cast<size_t>(zero)] =
          add_node(k, Op::Const, e.type, {}, other & sign);
      changed = true;
    }
  }
  return changed;
}

} // namespace

std::vector<QuirkModel> quirk_models(const ir::Kernel& kernel, const std::string& device) {
  std::vector<QuirkModel> out;
  if (device.rfind("vulkan", 0) != 0)
    return out;
  QuirkModel zero{"known device issue: arithmetic with a constant +0.0 folded (mul, add, sub, fma)",
                  kernel};
  if (rewrite_zero_folds(zero.kernel))
    out.push_back(std::move(zero));
  QuirkModel select{"known device issue: a select between 1.0 and 0.0 constants gives the 1.0's "
                    "sign to the zero",
                    kernel};
  if (rewrite_select_signed_zero(select.kernel))
    out.push_back(std::move(select));
  QuirkModel abs{"known device issue: abs of a value deemed not negative dropped (-0.0, -NaN, "
                 "a shift of abs(INT_MIN))",
                 kernel};
  if (rewrite_abs_dropped(abs.kernel))
    out.push_back(std::move(abs));
  QuirkModel atan2{"known device issue: atan2 of a constant -0.0 and a negative x is -NaN", kernel};
  if (rewrite_atan2_minus_zero(atan2.kernel))
    out.push_back(std::move(atan2));
  QuirkModel atan2_nan{"known device issue: atan2 of a NaN and a constant +0.0 or +inf is pi/2 "
                       "or +0",
                       kernel};
  if (rewrite_atan2_nan_constant(atan2_nan.kernel))
    out.push_back(std::move(atan2_nan));
  QuirkModel sext{"known device issue: a sign-extended i32 compared as zero-extended", kernel};
  if (rewrite_sext_compare(sext.kernel))
    out.push_back(std::move(sext));
  QuirkModel payload{"known device issue: f16 NaN payload lost (pack, bitcast)", kernel};
  if (rewrite_f16_nan_payload(payload.kernel))
    out.push_back(std::move(payload));
  QuirkModel converted{"known device issue: a NaN's payload kept through a float conversion "
                       "(widen, narrow)",
                       kernel};
  if (rewrite_nan_conversion(converted.kernel))
    out.push_back(std::move(converted));
  QuirkModel nan{"known device issue: NaN sign observed (copysign, bitcast)", kernel};
  if (rewrite_nan_sign(nan.kernel))
    out.push_back(std::move(nan));
  for (bool reversed : {false, true}) {
    QuirkModel propagated{"known device issue: a NaN operand's sign and payload propagated "
                          "(arithmetic, math)",
                          kernel};
    if (rewrite_nan_propagation(propagated.kernel, reversed))
      out.push_back(std::move(propagated));
  }
  // lavapipe does all of these at once: an element may need two (a folded 0.0 * x in one half of
  // a packed word, a propagated NaN in the other). The folds come first (the compiler makes them
  // before anything runs); the sign-flip model above is left out, propagation replaces it.
  if (out.size() > 1)
    for (bool reversed : {false, true}) {
      QuirkModel all{"known device issue: several at once (constant +0.0 folded, abs dropped, "
                     "sign extension compared, atan2 of -0.0 or of a NaN and +0.0 or +inf, NaN "
                     "propagated, NaN payload converted, f16 NaN payload lost, select of 1.0 "
                     "and 0.0)",
                     kernel};
      rewrite_select_signed_zero(all.kernel);
      rewrite_abs_dropped(all.kernel); // it reads the products the folds rewrite
      rewrite_zero_folds(all.kernel);
      rewrite_sext_compare(all.kernel);
      rewrite_atan2_minus_zero(all.kernel);
      rewrite_atan2_nan_constant(all.kernel);
      rewrite_nan_conversion(all.kernel);
      rewrite_nan_propagation(all.kernel, reversed);
      rewrite_f16_nan_payload(all.kernel);
      out.push_back(std::move(all));
    }
  return out;
}

} // namespace halfway::kernelgen::detail
