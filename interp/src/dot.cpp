// Dot loops: `for i = a to b step c { [let v = index;] acc = add(acc, mul(x[..], y[..])); ... }`
// whose indices are affine in the counter (program.hpp, DotLoop): the inner loop of a tiled matmul
// and of the split-row GEMV, run as one fused pass over the batch's lanes per term and iteration
// instead of a dozen or more (the index arithmetic, two loads with their bounds check and read
// log, a multiply, an add, the copy into the local, the loop's compare and step).
//
// The fused path computes what the general path computes, bit for bit, and only runs when nothing
// in the loop can fail: every lane active with the same number of iterations, every index of
// every iteration within its dimension (checked for the whole loop before it starts, from each
// index's values at the first two iterations), every shared array read still clean with room in
// its read log. It then appends to the read logs exactly the entries the general path would
// have, in the same order, takes the same steps (polling where the general path polls), and
// leaves the counter, the lets, the accumulators and the body's registers as the general path
// leaves them. When any precondition fails, the general path runs the loop and reports the
// errors as before.
#include "access.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "slots.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace halfway::interp {

namespace {

// The loop's counter values are computed before it runs; past this many iterations the general
// path runs it (the values are kept in a vector of this size at most).
constexpr uint32_t kMaxDotIterations = Exec::kMaxDotIterations;
// Loops with fewer shared reads than this write their read-log entries out; longer ones defer
// them (SharedLog::Deferred), which bounds the deferred records to one per this many reads.
constexpr size_t kMinDeferredReads = Exec::kMinDeferredReads;

bool is_index_type(ir::ScalarType t) {
  return t == ir::ScalarType::U32 || t == ir::ScalarType::I32;
}

// The most statements and loads of one fused loop (Exec keeps scratch per load).
constexpr size_t kMaxDotStatements = 32;
constexpr size_t kMaxDotLoadsPerLoop = 32;

class Planner {
public:
  explicit Planner(Program& p) : p_(p), k_(*p.kernel) {}

  void walk(std::vector<CStmt>& stmts) {
    for (CStmt& c : stmts) {
      if (c.stmt->kind == ir::StmtKind::For)
        if (auto d = match(c)) {
          c.dot = static_cast<uint32_t>(p_.dots.size());
          p_.dot_loads = std::max(p_.dot_loads, static_cast<uint32_t>(d->loads.size()));
          p_.dots.push_back(std::move(*d));
        }
      walk(c.body);
      walk(c.else_body);
    }
  }

private:
  // What one loop's body assigns, while its statements are matched in order.
  struct Scope {
    uint32_t counter = 0;
    std::vector<uint8_t> assigned; // per local: the body assigns it
    std::vector<int8_t> let;       // per local: -1 not (yet) an index let; else whether it
                                   // depends on the counter
  };

  // A float add or mul the fast f32/f64 loops of eval_float.cpp evaluate.
  bool plain_float(ir::ExprId e, ir::Op op, ir::ScalarType t) const {
    const ir::Expr& x = k_.expr(e);
    return x.op == op && x.type == t && x.nargs == 2 && p_.nodes[e].site == nullptr &&
           !num::flushes(ir::format_of(t), p_.options.controls);
  }

  bool local_get(ir::ExprId e, uint32_t local) const {
    const ir::Expr& x = k_.expr(e);
    return x.op == ir::Op::LocalGet && x.ref == local;
  }

  // A shift amount the interpreter cannot reject: a constant below 32.
  bool small_shift(ir::ExprId e) const {
    const ir::Expr& x = k_.expr(e);
    return x.op == ir::Op::Const && x.imm < 32;
  }

  // Whether index expression e depends on the counter (nullopt: not an index expression of the
  // shape DotLoop describes). Its value is then A + B * counter modulo 2^32 on each lane.
  std::optional<bool> index_expr(ir::ExprId e, const Scope& sc) const {
    const ir::Expr& x = k_.expr(e);
    if (!is_index_type(x.type))
      return std::nullopt;
    if (p_.cls[e] == NodeClass::Fixed || p_.cls[e] == NodeClass::Lane)
      return false;
    if (x.op == ir::Op::LocalGet) {
      if (x.ref == sc.counter)
        return true;
      if (!sc.assigned[x.ref])
        return false;
      if (sc.let[x.ref] < 0) // read before the body assigns it: the previous iteration's value
        return std::nullopt;
      return sc.let[x.ref] == 1;
    }
    std::array<bool, 2> dep{};
    for (int i = 0; i < x.nargs && i < 2; ++i) {
      auto d = index_expr(x.args[i], sc);
      if (!d)
        return std::nullopt;
      dep[i] = *d;
    }
    switch (x.op) {
    case ir::Op::Add:
    case ir::Op::Sub:
      return dep[0] || dep[1];
    case ir::Op::Neg:
    case ir::Op::Not:
      return dep[0];
    case ir::Op::Mul:
      if (dep[0] && dep[1])
        return std::nullopt;
      return dep[0] || dep[1];
    case ir::Op::Shl:
      if (!small_shift(x.args[1]))
        return std::nullopt;
      return dep[0];
    case ir::Op::Shr:
      if (!small_shift(x.args[1]) || dep[0])
        return std::nullopt;
      return false;
    case ir::Op::And:
    case ir::Op::Or:
    case ir::Op::Xor:
    case ir::Op::Min:
    case ir::Op::Max:
      if (dep[0] || dep[1])
        return std::nullopt;
      return false;
    default:
      return std::nullopt;
    }
  }

  std::optional<DotLoad> load(ir::ExprId e, ir::ScalarType t, const Scope& sc) const {
    const ir::Expr& x = k_.expr(e);
    if (x.op != ir::Op::Load || x.type != t || x.space == ir::Space::Private)
      return std::nullopt;
    DotLoad d;
    d.node = e;
    d.space = x.space;
    d.mem = x.ref;
    d.rank = x.nargs;
    for (uint32_t i = 0; i < d.rank; ++i) {
      const auto dep = index_expr(x.args[i], sc);
      if (!dep)
        return std::nullopt;
      d.type[i] = k_.expr(x.args[i]).type;
      d.reg[i] = p_.nodes[e].arg[i];
      d.how[i] = !*dep                              ? DotLoad::Index::Invariant
                 : local_get(x.args[i], sc.counter) ? DotLoad::Index::Counter
                                                    : DotLoad::Index::Affine;
    }
    return d;
  }

  // Matches body statement b as a term of d (appending its loads), with its accumulator.
  bool term(const CStmt& b, DotLoop& d, const Scope& sc) const {
    const ir::Stmt& a = *b.stmt;
    DotTerm t;
    t.acc = a.local;
    if (!plain_float(a.a, ir::Op::Add, d.type))
      return false;
    const ir::Expr& add = k_.expr(a.a);
    t.add = a.a;
    t.acc_first = local_get(add.args[0], t.acc);
    t.mul = t.acc_first ? add.args[1] : add.args[0];
    if (!local_get(t.acc_first ? add.args[0] : add.args[1], t.acc) ||
        !plain_float(t.mul, ir::Op::Mul, d.type))
      return false;
    const ir::Expr& mul = k_.expr(t.mul);
    std::array<uint32_t, 2> at{};
    for (int i = 0; i < 2; ++i) {
      if (i == 1 && mul.args[1] == mul.args[0]) { // v * v: one load
        at[1] = at[0];
        break;
      }
      auto l = load(mul.args[i], d.type, sc);
      if (!l)
        return false;
      at[i] = static_cast<uint32_t>(d.loads.size());
      d.loads.push_back(*l);
    }
    t.x = at[0];
    t.y = at[1];
    for (uint32_t n : b.eval)
      if (n != t.add && n != t.mul && n != d.loads[t.x].node && n != d.loads[t.y].node)
        t.index_nodes.push_back(n);
    d.body_term.push_back(static_cast<uint32_t>(d.terms.size()));
    d.terms.push_back(std::move(t));
    return true;
  }

  std::optional<DotLoop> match(const CStmt& c) const {
    const ir::Stmt& s = *c.stmt;
    if (!is_index_type(k_.locals[s.local].type) || c.acc != ir::kNone || c.body.empty() ||
        c.body.size() > kMaxDotStatements)
      return std::nullopt;
    Scope sc;
    sc.counter = s.local;
    sc.assigned.assign(k_.locals.size(), 0);
    sc.let.assign(k_.locals.size(), -1);
    for (const CStmt& b : c.body) {
      const ir::Stmt& a = *b.stmt;
      if ((a.kind != ir::StmtKind::Assign && a.kind != ir::StmtKind::Let) || a.local == s.local ||
          b.acc != ir::kNone)
        return std::nullopt;
      sc.assigned[a.local] = 1;
    }
    // The bound and the step hold through the loop: fixed nodes or locals the body does not
    // assign (the run checks that they are the same on every lane).
    for (ir::ExprId e : {s.b, s.c}) {
      const ir::Expr& x = k_.expr(e);
      const bool local = x.op == ir::Op::LocalGet && x.ref != s.local && !sc.assigned[x.ref];
      if (p_.cls[e] != NodeClass::Fixed && !local)
        return std::nullopt;
    }
    DotLoop d;
    bool typed = false;
    std::vector<uint8_t> is_acc(k_.locals.size(), 0);
    for (const CStmt& b : c.body) {
      const ir::Stmt& a = *b.stmt;
      const ir::ScalarType t = k_.locals[a.local].type;
      if (is_index_type(t)) {
        // An index let: assigned once, never an accumulator.
        if (sc.let[a.local] >= 0 || is_acc[a.local])
          return std::nullopt;
        auto dep = index_expr(a.a, sc);
        if (!dep)
          return std::nullopt;
        sc.let[a.local] = *dep ? 1 : 0;
        d.body_term.push_back(ir::kNone);
        continue;
      }
      if (t != ir::ScalarType::F32 && t != ir::ScalarType::F64)
        return std::nullopt;
      if (!typed) {
        d.type = t;
        typed = true;
      }
      if (t != d.type || !term(b, d, sc))
        return std::nullopt;
      is_acc[a.local] = 1;
      if (d.loads.size() > kMaxDotLoadsPerLoop)
        return std::nullopt;
    }
    if (d.terms.empty())
      return std::nullopt;
    for (const DotLoad& l : d.loads)
      for (uint32_t r = 0; r < l.rank; ++r)
        d.affine |= l.how[r] == DotLoad::Index::Affine;
    return d;
  }

  Program& p_;
  const ir::Kernel& k_;
};

// How the lanes' elements of one load lie: anywhere (a gather), or, in every 16 lanes from a
// multiple of 16, consecutive or all the same (a matmul's tiles, 16 lanes to a row).
enum class Kind : uint8_t { Gather, Row, Uniform };

Kind kind_of(const uint32_t* base, uint32_t n) {
  if (n % 16 != 0)
    return Kind::Gather;
  uint32_t row = 0, uniform = 0;
  for (uint32_t c = 0; c < n; c += 16)
    for (uint32_t j = 0; j < 16; ++j) {
      row |= base[c + j] ^ (base[c] + j);
      uniform |= base[c + j] ^ base[c];
    }
  return row == 0 ? Kind::Row : uniform == 0 ? Kind::Uniform : Kind::Gather;
}

// The 16 elements of the lanes c..c+15 (Row: from a + e[c], Uniform: a[e[c]] on all of them);
// the row pointer makes the consecutive reads plain vector loads.
// The 16 elements of the lanes c..c+15, each lane's element el[lane] + o (Row: from a + el[c] + o,
// Uniform: a[el[c] + o] on all of them); the row pointer makes the consecutive reads plain vector
// loads. Elements are 32-bit and wrap: e + o is the element whenever the element is in bounds.
template <Kind K, class T> struct Chunk {
  const T* row;
  T same;
  const uint32_t* e;
  uint32_t o;
  Chunk(const T* a, const uint32_t* el, uint32_t offset, uint32_t c)
      : row(K == Kind::Gather ? a : a + static_cast<uint32_t>(el[c] + offset)),
        same(K == Kind::Uniform ? a[static_cast<uint32_t>(el[c] + offset)] : T{}), e(el + c),
        o(offset) {}
  T operator[](uint32_t j) const {
    if constexpr (K == Kind::Uniform)
      return same;
    else if constexpr (K == Kind::Row)
      return row[j];
    else
      return row[static_cast<uint32_t>(e[j] + o)];
  }
};

// One iteration on every lane: acc = add(acc, mul(x, y)) with x = X[ex[l] + ox], y = Y[ey[l] +
// oy] (the offsets are the iteration's), 16 lanes at a time. Each operation rounds on its own
// (the library is built with -ffp-contract=off) and NaN results are made canonical, as
// eval_float.cpp's loops do.
template <class T, bool AccFirst, Kind KX, Kind KY>
void dot_pass(T* __restrict acc, const T* X, const uint32_t* ex, uint32_t ox, const T* Y,
              const uint32_t* ey, uint32_t oy, uint32_t n) {
  if constexpr (KX == Kind::Gather && KY == Kind::Gather) {
    for (uint32_t l = 0; l < n; ++l) {
      const T p =
          canonical(X[static_cast<uint32_t>(ex[l] + ox)] * Y[static_cast<uint32_t>(ey[l] + oy)]);
      acc[l] = canonical(AccFirst ? acc[l] + p : p + acc[l]);
    }
  } else {
    for (uint32_t c = 0; c < n; c += 16) {
      const Chunk<KX, T> x(X, ex, ox, c);
      const Chunk<KY, T> y(Y, ey, oy, c);
      T* __restrict a = acc + c;
      // Vectorised as a loop: unrolled first, it is left scalar.
#pragma GCC unroll 1
      for (uint32_t j = 0; j < 16; ++j) {
        const T p = canonical(x[j] * y[j]);
        a[j] = canonical(AccFirst ? a[j] + p : p + a[j]);
      }
    }
  }
}

template <class T>
using DotPass = void (*)(T*, const T*, const uint32_t*, uint32_t, const T*, const uint32_t*,
                         uint32_t, uint32_t);

template <class T, bool AccFirst, Kind KX> DotPass<T> pass_of(Kind ky) {
  switch (ky) {
  case Kind::Gather:
    return dot_pass<T, AccFirst, KX, Kind::Gather>;
  case Kind::Row:
    return dot_pass<T, AccFirst, KX, Kind::Row>;
  case Kind::Uniform:
    return dot_pass<T, AccFirst, KX, Kind::Uniform>;
  }
  return nullptr;
}

template <class T, bool AccFirst> DotPass<T> pass_of(Kind kx, Kind ky) {
  switch (kx) {
  case Kind::Gather:
    return pass_of<T, AccFirst, Kind::Gather>(ky);
  case Kind::Row:
    return pass_of<T, AccFirst, Kind::Row>(ky);
  case Kind::Uniform:
    return pass_of<T, AccFirst, Kind::Uniform>(ky);
  }
  return nullptr;
}

// The iterations of a loop whose counter starts at `first`: while below `bound` in the counter's
// type, stepping by `step` with for_stmt's semantics (the step wraps); nullopt past `limit`.
template <class S>
std::optional<uint32_t> iterations_from(uint32_t first, uint32_t bound, uint32_t step,
                                        uint32_t limit) {
  uint32_t v = first, count = 0;
  while (static_cast<S>(v) < static_cast<S>(bound)) {
    if (count == limit)
      return std::nullopt;
    ++count;
    v += step; // unsigned: wraps as for_stmt's step does
  }
  return count;
}

// Whether a loop whose counter starts at `first` runs exactly `iterations` times. In closed form
// when the counter climbs without leaving its type's range (the compare is then true up to some
// iteration and false from there on); step by step otherwise.
template <class S> bool runs(uint32_t first, uint32_t bound, uint32_t step, uint32_t iterations) {
  const int64_t v = static_cast<S>(first), b = static_cast<S>(bound), st = static_cast<S>(step);
  const int64_t end = v + int64_t{iterations} * st;
  if (st > 0 && end <= int64_t{std::numeric_limits<S>::max()})
    return end >= b && (iterations == 0 || end - st < b);
  return iterations_from<S>(first, bound, step, iterations) == iterations;
}

// Whether p + j * q (mod 2^32) lies below `limit` (at most 2^32) for every j < iterations >= 1.
// q below 2^31 is read as an increasing sequence, q from 2^31 on as a decreasing one; either way
// every term is in range exactly when both ends are and the sequence does not wrap on the way.
bool within(uint32_t p, uint32_t q, uint32_t iterations, uint64_t limit) {
  const uint64_t last = iterations - 1;
  const bool up = uint64_t{p} + last * q < limit;
  const bool down = p < limit && last * (uint64_t{1} << 32) - last * q <= p;
  return q < (1u << 31) ? up : down; // both computed: the lanes' loop stays branch-free
}

} // namespace

void plan_dot_loops(Program& p) {
  if (p.options.fused_loops)
    Planner(p).walk(p.body);
}

// Evaluates the index expressions of one iteration of dot loop `d` with the counter as it stands:
// each index let (assigned to its local) and each term's index nodes, in body order. With `out`,
// copies every load's index registers there (load i, dimension r at (i * 3 + r) * lanes). Nothing
// evaluated can fail (DotLoop).
void Exec::dot_indices(const CStmt& cs, const DotLoop& d, const LaneMask& m, uint32_t* out) {
  for (size_t b = 0; b < cs.body.size(); ++b) {
    const CStmt& bs = cs.body[b];
    if (d.body_term[b] == ir::kNone) {
      eval(bs.eval, m);
      assign(bs.stmt->local, p_.nodes[bs.stmt->a].reg, m);
      continue;
    }
    const DotTerm& t = d.terms[d.body_term[b]];
    eval(t.index_nodes, m);
    if (!out)
      continue;
    for (uint32_t i : {t.x, t.y}) {
      const DotLoad& ld = d.loads[i];
      for (uint32_t r = 0; r < ld.rank; ++r)
        std::memcpy(out + (size_t{i} * 3 + r) * n_, reg<uint32_t>(ld.reg[r]),
                    size_t{n_} * sizeof(uint32_t));
    }
  }
}

bool Exec::dot_loop(const CStmt& cs, const LaneMask& m) {
  if (iv_ || !m.all())
    return false;
  const DotLoop& d = p_.dots[cs.dot];
  const ir::Stmt& s = *cs.stmt;
  const uint32_t n = n_;

  // The counter: the same number of iterations on every lane (at most kMaxDotIterations).
  uint32_t* counter = reg<uint32_t>(p_.local_reg(s.local));
  const uint32_t* bounds = reg<uint32_t>(p_.nodes[s.b].reg);
  const uint32_t* steps = reg<uint32_t>(p_.nodes[s.c].reg);
  const uint32_t bound = bounds[0], step = steps[0];
  for (uint32_t l = 1; l < n; ++l)
    if (bounds[l] != bound || steps[l] != step)
      return false;
  const bool is_signed = p_.kernel->locals[s.local].type == ir::ScalarType::I32;
  auto count = [&](uint32_t first, uint32_t limit) {
    return is_signed ? iterations_from<int32_t>(first, bound, step, limit)
                     : iterations_from<uint32_t>(first, bound, step, limit);
  };
  const std::optional<uint32_t> counted = count(counter[0], kMaxDotIterations);
  if (!counted)
    return false;
  const uint32_t iterations = *counted;
  bool uniform_start = true;
  for (uint32_t l = 1; l < n; ++l) {
    if (counter[l] == counter[0])
      continue;
    uniform_start = false;
    if (!(is_signed ? runs<int32_t>(counter[l], bound, step, iterations)
                    : runs<uint32_t>(counter[l], bound, step, iterations)))
      return false;
  }
  if (iterations == 0) {
    tick(); // the check that ends the loop
    ++fused_;
    return true;
  }

  // Each Affine index's values at the first two iterations: index r of load i is p + j * q at
  // iteration j on each lane (the expressions are affine in the counter modulo 2^32).
  std::vector<uint32_t>& start = dot_start_;
  start.assign(counter, counter + n);
  const size_t loads = d.loads.size();
  uint32_t* p = dot_index_.data();
  uint32_t* q = p + loads * 3 * n;
  if (d.affine) {
    dot_indices(cs, d, m, p);
    if (iterations > 1) {
      for (uint32_t l = 0; l < n; ++l)
        counter[l] = start[l] + step;
      dot_indices(cs, d, m, q);
      for (size_t i = 0; i < loads; ++i) {
        const size_t first = i * 3 * n, last = first + size_t{d.loads[i].rank} * n;
        for (size_t k = first; k < last; ++k)
          q[k] -= p[k];
      }
    }
  }

  // Every index of every iteration within its dimension, and each load's element as e + j * de:
  // e per lane (dot_base_), de the same on every lane (otherwise the general path runs the loop).
  std::array<Target, kMaxDotLoadsPerLoop> target;
  std::vector<uint32_t>& delta = dot_delta_;
  delta.assign(loads, 0);
  uint32_t* __restrict de = dot_scratch_.data();
  bool bad = false;
  using How = DotLoad::Index;
  for (size_t i = 0; i < loads && !bad; ++i) {
    const DotLoad& ld = d.loads[i];
    target[i] = target_of(*this, ld.space, ld.mem);
    const ir::SharedArray* a = ld.space == ir::Space::Shared ? &p_.kernel->shared[ld.mem] : nullptr;
    uint32_t* __restrict e = dot_base_.data() + i * n;
    std::fill_n(e, n, 0u);
    bool affine = false;
    uint32_t de0 = 0;     // the Counter and Invariant indices' part of de, the same on every lane
    uint64_t s_after = 1; // the stride of dimension r: the product of the dimensions after it
    for (uint32_t r = ld.rank; r-- > 0;) {
      const uint64_t dim = a ? uint64_t{a->dim(r)} : target[i].length;
      // A negative i32 is at least 2^31 as u32, so one unsigned compare checks both bounds.
      const uint64_t limit =
          ld.type[r] == ir::ScalarType::I32 ? std::min<uint64_t>(dim, uint64_t{1} << 31) : dim;
      const auto sr = static_cast<uint32_t>(s_after);
      s_after *= dim;
      const uint32_t* pr = ld.how[r] == How::Invariant ? reg<uint32_t>(ld.reg[r])
                           : ld.how[r] == How::Counter ? start.data()
                                                       : p + (i * 3 + r) * n;
      for (uint32_t l = 0; l < n; ++l)
        e[l] += pr[l] * sr; // wraps only where bad
      if (ld.how[r] == How::Invariant || iterations == 1) {
        // Below a limit of 2^32 every index is: otherwise a 32-bit compare (that vectorises).
        const auto limit32 = static_cast<uint32_t>(std::min<uint64_t>(limit, UINT32_MAX));
        uint32_t over = 0;
        for (uint32_t l = 0; l < n; ++l)
          over |= pr[l] >= limit32;
        bad |= limit <= UINT32_MAX && over;
        continue;
      }
      if (ld.how[r] == How::Counter) {
        de0 += step * sr;
        if (uniform_start) {
          bad |= !within(start[0], step, iterations, limit);
          continue;
        }
        for (uint32_t l = 0; l < n; ++l)
          bad |= !within(pr[l], step, iterations, limit);
        continue;
      }
      const uint32_t* qr = q + (i * 3 + r) * n;
      if (!affine)
        std::fill_n(de, n, 0u);
      affine = true;
      for (uint32_t l = 0; l < n; ++l) {
        bad |= !within(pr[l], qr[l], iterations, limit);
        de[l] += qr[l] * sr;
      }
    }
    delta[i] = de0;
    if (affine) {
      for (uint32_t l = 1; l < n; ++l)
        bad |= de[l] != de[0];
      delta[i] += de[0];
    }
  }

  // Reads of shared arrays: only while the array is clean, with room for every read of the loop
  // in its log.
  const size_t reads = size_t{iterations} * n;
  for (size_t i = 0; i < loads && !bad; ++i) {
    if (d.loads[i].space != ir::Space::Shared)
      continue;
    size_t k = 0; // the loads of this array per iteration
    for (const DotLoad& other : d.loads)
      k += other.space == ir::Space::Shared && other.mem == d.loads[i].mem;
    const SharedLog& log = logs_[d.loads[i].mem];
    bad |= log.dirty == epoch_ || log.size + log.generated + k * reads > kMaxLoggedReads;
  }
  if (bad) {
    std::copy_n(start.data(), n, counter);
    return false;
  }

  // Nothing can fail from here on. The read log gets the general path's entries in its order (per
  // iteration, the loads in body order, each in lane order): written out for short loops, deferred
  // to the replay (SharedLog::Deferred) for longer ones, where writing them would cost more than
  // the loop's arithmetic.
  std::vector<uint32_t>& on = dot_scratch_loads_;
  for (size_t i = 0; i < loads; ++i) {
    const DotLoad& ld = d.loads[i];
    if (ld.space != ir::Space::Shared)
      continue;
    bool first = true; // the array's first load: it logs them all
    for (size_t o = 0; o < i; ++o)
      first &= !(d.loads[o].space == ir::Space::Shared && d.loads[o].mem == ld.mem);
    if (!first)
      continue;
    on.clear();
    for (size_t o = i; o < loads; ++o)
      if (d.loads[o].space == ir::Space::Shared && d.loads[o].mem == ld.mem)
        on.push_back(static_cast<uint32_t>(o));
    const auto k = static_cast<uint32_t>(on.size());
    SharedLog& log = logs_[ld.mem];
    if (reads * k < kMinDeferredReads) {
      log.allocate();
      for (uint32_t j = 0; j < iterations; ++j)
        for (uint32_t o : on) {
          const uint32_t* e = dot_base_.data() + size_t{o} * n;
          const uint32_t off = j * delta[o];
          for (uint32_t l = 0; l < n; ++l) {
            log.index[log.size + l] = e[l] + off;
            log.lane[log.size + l] = l;
          }
          log.size += n;
        }
      continue;
    }
    if (log.deferred_used == log.deferred.size())
      log.deferred.emplace_back();
    SharedLog::Deferred& def = log.deferred[log.deferred_used++];
    def.at = log.size;
    def.lanes = n;
    def.loads = k;
    def.bases.resize(size_t{k} * n);
    def.offsets.resize(size_t{k} * iterations);
    for (uint32_t c = 0; c < k; ++c)
      std::copy_n(dot_base_.data() + size_t{on[c]} * n, n, def.bases.data() + size_t{c} * n);
    for (uint32_t j = 0; j < iterations; ++j)
      for (uint32_t c = 0; c < k; ++c)
        def.offsets[size_t{j} * k + c] = j * delta[on[c]];
    log.generated += reads * k;
  }

  // The passes: per iteration, each term in body order over every lane, its loads' elements
  // e + j * de. The general path's steps are taken where it takes them: the loop's check of the
  // iteration, then one per body statement.
  const auto statements = static_cast<uint32_t>(cs.body.size());
  auto run = [&]<class T>() {
    struct Pass {
      T* acc;
      const T *x, *y;
      const uint32_t *ex, *ey;
      uint32_t dx, dy;
      DotPass<T> pass;
    };
    std::array<Kind, kMaxDotLoadsPerLoop> kind;
    for (size_t i = 0; i < loads; ++i)
      kind[i] = kind_of(dot_base_.data() + i * n, n);
    std::vector<Pass> passes;
    passes.reserve(d.terms.size());
    for (const DotTerm& t : d.terms) {
      const Kind kx = kind[t.x], ky = kind[t.y];
      passes.push_back({reg<T>(p_.local_reg(t.acc)), reinterpret_cast<const T*>(target[t.x].base),
                        reinterpret_cast<const T*>(target[t.y].base),
                        dot_base_.data() + size_t{t.x} * n, dot_base_.data() + size_t{t.y} * n,
                        delta[t.x], delta[t.y],
                        t.acc_first ? pass_of<T, true>(kx, ky) : pass_of<T, false>(kx, ky)});
    }
    for (uint32_t j = 0; j + 1 < iterations; ++j) {
      for (uint32_t k = 0; k <= statements; ++k)
        tick();
      // A constant added to every lane's element keeps a row a row.
      for (const Pass& ps : passes)
        ps.pass(ps.acc, ps.x, ps.ex, j * ps.dx, ps.y, ps.ey, j * ps.dy, n);
    }
    // The last iteration also leaves the body's registers as the general path leaves them: the
    // index expressions and lets evaluated with the counter at its last value, then each term's
    // loads, product and sum.
    for (uint32_t k = 0; k <= statements; ++k)
      tick();
    const uint32_t j = iterations - 1;
    for (uint32_t l = 0; l < n; ++l)
      counter[l] = start[l] + j * step;
    dot_indices(cs, d, m, nullptr);
    for (size_t t = 0; t < d.terms.size(); ++t) {
      const DotTerm& term = d.terms[t];
      const Pass& ps = passes[t];
      T* rx = reg<T>(p_.nodes[d.loads[term.x].node].reg);
      T* ry = reg<T>(p_.nodes[d.loads[term.y].node].reg);
      T* rm = reg<T>(p_.nodes[term.mul].reg);
      T* ra = reg<T>(p_.nodes[term.add].reg);
      const uint32_t ox = j * ps.dx, oy = j * ps.dy;
      for (uint32_t l = 0; l < n; ++l) {
        rx[l] = ps.x[static_cast<uint32_t>(ps.ex[l] + ox)];
        ry[l] = ps.y[static_cast<uint32_t>(ps.ey[l] + oy)];
        rm[l] = canonical(rx[l] * ry[l]);
        ra[l] = canonical(term.acc_first ? ps.acc[l] + rm[l] : rm[l] + ps.acc[l]);
        ps.acc[l] = ra[l];
      }
    }
    tick(); // the check that ends the loop
  };
  if (d.type == ir::ScalarType::F32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  for (uint32_t l = 0; l < n; ++l)
    counter[l] = start[l] + iterations * step;
  ++fused_;
  return true;
}

} // namespace halfway::interp
