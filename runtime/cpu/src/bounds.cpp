#include "bounds.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

namespace halfway::rt::cpu_detail {

namespace {

struct Range {
  uint64_t lo = 0, hi = 0;
  bool known = false; // false: any value of the type
  bool empty = false; // no value: unreachable code

  static Range any() { return {}; }
  static Range none() { return {0, 0, true, true}; }
  static Range of(uint64_t lo, uint64_t hi) { return {lo, hi, true, false}; }
};

Range join(const Range& a, const Range& b) {
  if (a.empty)
    return b;
  if (b.empty)
    return a;
  if (!a.known || !b.known)
    return Range::any();
  return Range::of(std::min(a.lo, b.lo), std::max(a.hi, b.hi));
}

bool same(const Range& a, const Range& b) {
  return a.empty == b.empty && a.known == b.known && (!a.known || (a.lo == b.lo && a.hi == b.hi));
}

uint64_t type_max(ir::ScalarType t) {
  unsigned bits = ir::info(t).bits;
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

bool tracked(ir::ScalarType t) {
  const auto& i = ir::info(t);
  return !ir::is_float(t) && !i.is_signed && t != ir::ScalarType::Bool;
}

// A condition's narrowing key: a builtin (op, dimension) or a local.
using Key = std::pair<int, uint64_t>; // (-1, local) or (op, dimension)

class Analysis {
public:
  Analysis(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args)
      : k_(k), grid_(grid), args_(args), locals_(k.locals.size(), Range::none()),
        defs_(k.locals.size(), 0) {
    count_defs(k.body);
  }

  bool run() {
    // Fixpoint of the locals' ranges; after a few rounds a local still growing is unknown.
    for (int round = 0; round < 8; ++round) {
      std::vector<Range> before = locals_;
      checking_ = false;
      block(k_.body);
      bool changed = false;
      for (size_t l = 0; l < locals_.size(); ++l)
        if (!same(before[l], locals_[l])) {
          changed = true;
          if (round >= 4)
            locals_[l] = Range::any();
        }
      if (!changed)
        break;
      if (round == 7)
        return false;
    }
    checking_ = true;
    ok_ = true;
    block(k_.body);
    return ok_;
  }

private:
  void count_defs(const ir::Body& b) {
    for (const ir::Stmt& s : b) {
      if (s.local != ir::kNone && (s.kind == ir::StmtKind::Let || s.kind == ir::StmtKind::Assign ||
                                   s.kind == ir::StmtKind::For || s.kind == ir::StmtKind::Atomic))
        ++defs_[s.local];
      count_defs(s.body);
      count_defs(s.else_body);
    }
  }

  void assign(uint32_t local, const Range& r) {
    locals_[local] = join(locals_[local], tracked(k_.locals[local].type) ? r : Range::any());
  }

  // The length of dimension `d` (buffers and rank-1 arrays: their length).
  uint64_t length(ir::Space space, uint32_t ref, uint32_t d) const {
    return space == ir::Space::Buffer ? args_[ref].buffer->size() : k_.array(space, ref).dim(d);
  }

  void access(ir::Space space, uint32_t ref, const Range& index, uint32_t d = 0) {
    if (!checking_ || index.empty)
      return;
    if (!index.known || index.hi >= length(space, ref, d))
      ok_ = false;
  }

  // The narrowing of a condition that holds: true when the branch can run at all.
  bool narrow(ir::ExprId cond) {
    const ir::Expr& e = k_.expr(cond);
    if (e.op == ir::Op::And)
      return narrow(e.args[0]) && narrow(e.args[1]);
    if (e.op != ir::Op::Lt && e.op != ir::Op::Le && e.op != ir::Op::Gt && e.op != ir::Op::Ge)
      return true;
    bool below = e.op == ir::Op::Lt || e.op == ir::Op::Le;
    ir::ExprId x = below ? e.args[0] : e.args[1];
    ir::ExprId y = below ? e.args[1] : e.args[0];
    bool strict = e.op == ir::Op::Lt || e.op == ir::Op::Gt;
    if (!tracked(k_.expr(x).type))
      return true;
    std::optional<Key> key = key_of(x);
    if (!key)
      return true;
    Range bound = eval(y);
    if (bound.empty)
      return false;
    if (!bound.known)
      return true;
    Range cur = eval(x);
    if (cur.empty)
      return false;
    uint64_t hi = bound.hi;
    if (strict) {
      if (hi == 0)
        return false;
      hi -= 1;
    }
    Range r = cur.known ? cur : Range::of(0, type_max(k_.expr(x).type));
    if (r.lo > hi)
      return false;
    r.hi = std::min(r.hi, hi);
    narrowed_[*key] = r;
    return true;
  }

  std::optional<Key> key_of(ir::ExprId x) const {
    const ir::Expr& e = k_.expr(x);
    if (ir::is_builtin(e.op))
      return Key{static_cast<int>(e.op), e.imm};
    if (e.op == ir::Op::LocalGet && defs_[e.ref] == 1)
      return Key{-1, e.ref};
    return std::nullopt;
  }

  // Runs `f` with the conditions' narrowings in force; skips it when they cannot hold.
  template <class F> void under(std::initializer_list<ir::ExprId> conds, F f) {
    auto saved = narrowed_;
    bool reachable = true;
    for (ir::ExprId c : conds)
      reachable = reachable && narrow(c);
    if (reachable)
      f();
    narrowed_ = saved;
  }

  void block(const ir::Body& b) {
    for (const ir::Stmt& s : b)
      stmt(s);
  }

  void stmt(const ir::Stmt& s) {
    switch (s.kind) {
    case ir::StmtKind::Let:
    case ir::StmtKind::Assign:
      assign(s.local, eval(s.a));
      break;
    case ir::StmtKind::Store: {
      const std::array<ir::ExprId, 3> ix = ir::store_indices(s);
      for (uint32_t d = 0; d < 3; ++d)
        if (ix[d] != ir::kNone)
          access(s.space, s.mem, eval(ix[d]), d);
      eval(s.b);
      break;
    }
    case ir::StmtKind::Atomic:
      access(s.space, s.mem, eval(s.a));
      eval(s.b);
      if (s.c != ir::kNone)
        eval(s.c);
      if (s.local != ir::kNone)
        assign(s.local, Range::any());
      break;
    case ir::StmtKind::If:
      eval(s.a);
      under({s.a}, [&] { block(s.body); });
      block(s.else_body);
      break;
    case ir::StmtKind::While:
      eval(s.a);
      block(s.body);
      break;
    case ir::StmtKind::For: {
      Range init = eval(s.a), end = eval(s.b), step = eval(s.c);
      assign(s.local, init);
      // Every value the variable takes: the initial one, and below end + step once stepped.
      if (init.known && end.known && step.known && !init.empty && !end.empty && !step.empty &&
          tracked(k_.locals[s.local].type)) {
        uint64_t top = 0;
        if (end.hi == 0 || __builtin_add_overflow(end.hi - 1, step.hi, &top) ||
            top > type_max(k_.locals[s.local].type))
          assign(s.local, Range::any());
        else
          assign(s.local, Range::of(std::min(init.lo, end.lo), std::max(top, init.hi)));
      } else {
        assign(s.local, Range::any());
      }
      // In the body the variable is below the bound (when nothing else assigns it).
      if (defs_[s.local] == 1 && tracked(k_.locals[s.local].type) && end.known && !end.empty) {
        auto saved = narrowed_;
        Range cur = locals_[s.local];
        if (end.hi == 0)
          return;
        Range r = cur.known ? cur : Range::of(0, type_max(k_.locals[s.local].type));
        if (r.lo <= end.hi - 1) {
          r.hi = std::min(r.hi, end.hi - 1);
          narrowed_[Key{-1, s.local}] = r;
          block(s.body);
        }
        narrowed_ = saved;
      } else {
        block(s.body);
      }
      break;
    }
    default:
      break;
    }
  }

  Range eval(ir::ExprId id) {
    const ir::Expr& e = k_.expr(id);
    std::array<Range, 4> a;
    for (int i = 0; i < e.nargs && i < 4; ++i)
      if (e.args[i] != ir::kNone)
        a[i] = eval(e.args[i]);
    if (e.op == ir::Op::Load)
      for (uint32_t d = 0; d < e.nargs && d < 3; ++d)
        access(e.space, e.ref, a[d], d);
    for (int i = 0; i < e.nargs && i < 4; ++i)
      if (e.args[i] != ir::kNone && a[i].empty)
        return Range::none();
    if (!tracked(e.type))
      return Range::any();
    if (std::optional<Key> key = key_of(id); key) {
      auto it = narrowed_.find(*key);
      if (it != narrowed_.end())
        return it->second;
    }
    Range r = value(e, a);
    if (r.known && !r.empty && r.hi > type_max(e.type))
      return Range::any();
    return r;
  }

  Range value(const ir::Expr& e, const std::array<Range, 4>& a) {
    uint64_t max = type_max(e.type);
    auto all_known = [&](int n) {
      for (int i = 0; i < n; ++i)
        if (!a[i].known)
          return false;
      return true;
    };
    switch (e.op) {
    case ir::Op::Const:
      return Range::of(e.imm & max, e.imm & max);
    case ir::Op::ParamGet: {
      uint64_t v = args_[e.ref].scalar & max;
      return Range::of(v, v);
    }
    case ir::Op::LocalGet:
      return locals_[e.ref];
    case ir::Op::GlobalId: {
      uint64_t lanes = uint64_t{grid_.groups[e.imm]} * k_.workgroup[e.imm];
      if (lanes - 1 > max)
        return Range::any(); // wraps
      return Range::of(0, lanes - 1);
    }
    case ir::Op::LocalId:
      return Range::of(0, k_.workgroup[e.imm] - 1);
    case ir::Op::GroupId:
      return Range::of(0, grid_.groups[e.imm] - 1);
    case ir::Op::GroupSize:
      return Range::of(k_.workgroup[e.imm], k_.workgroup[e.imm]);
    case ir::Op::NumGroups:
      return Range::of(grid_.groups[e.imm], grid_.groups[e.imm]);
    case ir::Op::BufferLen: {
      uint64_t n = args_[e.ref].buffer->size();
      return Range::of(n, n);
    }
    case ir::Op::Add: {
      if (!all_known(2))
        return Range::any();
      uint64_t hi = 0;
      if (__builtin_add_overflow(a[0].hi, a[1].hi, &hi) || hi > max)
        return Range::any();
      return Range::of(a[0].lo + a[1].lo, hi);
    }
    case ir::Op::Sub:
      if (!all_known(2) || a[0].lo < a[1].hi)
        return Range::any();
      return Range::of(a[0].lo - a[1].hi, a[0].hi - a[1].lo);
    case ir::Op::Mul: {
      if (!all_known(2))
        return Range::any();
      uint64_t hi = 0;
      if (__builtin_mul_overflow(a[0].hi, a[1].hi, &hi) || hi > max)
        return Range::any();
      return Range::of(a[0].lo * a[1].lo, hi);
    }
    case ir::Op::Div: // x / 0 = 0
      if (!all_known(2))
        return Range::any();
      return Range::of(0, a[0].hi / std::max<uint64_t>(1, a[1].lo));
    case ir::Op::Rem: // x % 0 = x
      if (!a[0].known)
        return a[1].known && a[1].lo > 0 ? Range::of(0, a[1].hi - 1) : Range::any();
      if (!a[1].known || a[1].lo == 0)
        return Range::of(0, a[0].hi);
      return Range::of(0, std::min(a[0].hi, a[1].hi - 1));
    case ir::Op::Min:
      if (a[0].known && a[1].known)
        return Range::of(std::min(a[0].lo, a[1].lo), std::min(a[0].hi, a[1].hi));
      if (a[0].known)
        return Range::of(0, a[0].hi);
      if (a[1].known)
        return Range::of(0, a[1].hi);
      return Range::any();
    case ir::Op::Max:
      if (!all_known(2))
        return Range::any();
      return Range::of(std::max(a[0].lo, a[1].lo), std::max(a[0].hi, a[1].hi));
    case ir::Op::Clamp: // min(max(x, lo), hi)
      if (all_known(3))
        return Range::of(std::min(std::max(a[0].lo, a[1].lo), a[2].lo),
                         std::min(std::max(a[0].hi, a[1].hi), a[2].hi));
      if (a[2].known)
        return Range::of(0, a[2].hi);
      return Range::any();
    case ir::Op::And:
      if (a[0].known && a[1].known)
        return Range::of(0, std::min(a[0].hi, a[1].hi));
      if (a[0].known)
        return Range::of(0, a[0].hi);
      if (a[1].known)
        return Range::of(0, a[1].hi);
      return Range::any();
    case ir::Op::Shr: // logical for unsigned types; by the width or more: 0
      if (!all_known(2))
        return Range::any();
      if (a[1].lo >= 64)
        return Range::of(0, 0);
      return Range::of(0, a[0].hi >> a[1].lo);
    case ir::Op::Select:
      if (!a[1].known || !a[2].known)
        return Range::any();
      return join(a[1], a[2]);
    case ir::Op::Convert: {
      ir::ScalarType from = k_.expr(e.args[0]).type;
      if (!tracked(from) || !a[0].known || a[0].hi > max)
        return Range::any();
      return a[0];
    }
    case ir::Op::Load:
    case ir::Op::Bitcast:
    case ir::Op::Pack:
    case ir::Op::Unpack:
    case ir::Op::Neg:
    case ir::Op::Abs:
    case ir::Op::Fma:
    case ir::Op::Sqrt:
    case ir::Op::Rsqrt:
    case ir::Op::Exp:
    case ir::Op::Exp2:
    case ir::Op::Log:
    case ir::Op::Log2:
    case ir::Op::Sin:
    case ir::Op::Cos:
    case ir::Op::Tan:
    case ir::Op::Tanh:
    case ir::Op::Pow:
    case ir::Op::Erf:
    case ir::Op::Atan2:
    case ir::Op::Atan:
    case ir::Op::Floor:
    case ir::Op::Ceil:
    case ir::Op::Fract:
    case ir::Op::Copysign:
    case ir::Op::Eq:
    case ir::Op::Ne:
    case ir::Op::Lt:
    case ir::Op::Le:
    case ir::Op::Gt:
    case ir::Op::Ge:
    case ir::Op::Or:
    case ir::Op::Xor:
    case ir::Op::Not:
    case ir::Op::Shl:
      return Range::any();
    }
    ir::invalid_op(e.op);
  }

  const ir::Kernel& k_;
  const Grid& grid_;
  std::span<const Arg> args_;
  std::vector<Range> locals_;
  std::vector<uint32_t> defs_;
  std::map<Key, Range> narrowed_;
  bool checking_ = false;
  bool ok_ = true;
};

} // namespace

bool accesses_provably_in_bounds(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args) {
  return Analysis(k, grid, args).run();
}

namespace {

// One remembered proof: the kernel's structural hash and every fact the analysis reads.
struct Proof {
  uint64_t hash = 0;
  Grid grid;
  std::vector<uint64_t> facts; // per parameter: a buffer's length or a scalar's bits
  bool proven = false;
  bool used = false;

  bool matches(uint64_t h, const Grid& g, std::span<const Arg> args) const {
    if (!used || hash != h || grid.groups != g.groups || facts.size() != args.size())
      return false;
    for (size_t i = 0; i < args.size(); ++i)
      if (facts[i] != fact(args[i]))
        return false;
    return true;
  }
  static uint64_t fact(const Arg& a) { return a.buffer ? a.buffer->size() : a.scalar; }
};

} // namespace

bool provably_in_bounds_cached(const ir::VerifiedKernel& kernel, const Grid& grid,
                               std::span<const Arg> args) {
  // Per thread, so that a lookup takes no lock; a few entries, replaced in turn.
  constexpr size_t kEntries = 4;
  struct Cache {
    std::array<Proof, kEntries> entries;
    size_t next = 0;
  };
  thread_local Cache cache;
  const uint64_t h = kernel.hash();
  for (const Proof& p : cache.entries)
    if (p.matches(h, grid, args))
      return p.proven;
  Proof& p = cache.entries[cache.next];
  cache.next = (cache.next + 1) % kEntries;
  p.used = false; // until it is complete: the analysis may throw (bad_alloc)
  p.proven = accesses_provably_in_bounds(kernel.kernel(), grid, args);
  p.hash = h;
  p.grid = grid;
  p.facts.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    p.facts[i] = Proof::fact(args[i]);
  p.used = true;
  return p.proven;
}

} // namespace halfway::rt::cpu_detail
