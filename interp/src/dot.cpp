// Dot loops: `for i = a to b step c { acc = add(acc, mul(x[..i..], y[..i..])) }`, the inner loop
// of a tiled matmul and of most reductions over a shared tile, run as one fused pass over the
// batch's lanes per iteration instead of a dozen (two loads with their bounds check and read log,
// a multiply, an add, the copy into the local, the loop's compare and step).
//
// The fused path computes what the general path computes, bit for bit, and only runs when nothing
// in the loop can fail: every lane active, the counter the same on every lane, every index of
// every iteration within its dimension (checked for the whole loop before it starts), every shared
// array read still clean with room in its read log. It then appends to the read logs exactly the
// entries the general path would have, in the same order, takes the same steps (polling where the
// general path polls), and leaves the counter, the accumulator and the body's registers as the
// general path leaves them. When any precondition fails, the general path runs the loop and
// reports the errors as before.
#include "access.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "slots.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

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

class Planner {
public:
  explicit Planner(Program& p) : p_(p), k_(*p.kernel) {}

  void walk(std::vector<CStmt>& stmts) {
    for (CStmt& c : stmts) {
      if (c.stmt->kind == ir::StmtKind::For)
        if (auto d = match(c)) {
          c.dot = static_cast<uint32_t>(p_.dots.size());
          p_.dots.push_back(*d);
        }
      walk(c.body);
      walk(c.else_body);
    }
  }

private:
  bool fixed(ir::ExprId e) const { return p_.cls[e] == NodeClass::Fixed; }

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

  std::optional<DotLoad> load(ir::ExprId e, ir::ScalarType t, uint32_t counter,
                              uint32_t acc) const {
    const ir::Expr& x = k_.expr(e);
    if (x.op != ir::Op::Load || x.type != t || x.space == ir::Space::Private)
      return std::nullopt;
    DotLoad d;
    d.node = e;
    d.space = x.space;
    d.mem = x.ref;
    d.rank = x.nargs;
    for (uint32_t i = 0; i < d.rank; ++i) {
      const ir::ExprId ix = x.args[i];
      const ir::Expr& v = k_.expr(ix);
      if (!is_index_type(v.type))
        return std::nullopt;
      d.type[i] = v.type;
      d.reg[i] = p_.nodes[e].arg[i];
      d.counter[i] = local_get(ix, counter);
      // Anything else must hold the same value through the whole loop: the loop assigns only acc.
      const bool invariant = (v.op == ir::Op::LocalGet && v.ref != acc) ||
                             p_.cls[ix] == NodeClass::Fixed || p_.cls[ix] == NodeClass::Lane;
      if (!d.counter[i] && !invariant)
        return std::nullopt;
    }
    return d;
  }

  std::optional<DotLoop> match(const CStmt& c) const {
    const ir::Stmt& s = *c.stmt;
    if (!is_index_type(k_.locals[s.local].type) || !fixed(s.b) || !fixed(s.c) ||
        c.acc != ir::kNone || c.body.size() != 1)
      return std::nullopt;
    const CStmt& b = c.body[0];
    const ir::Stmt& a = *b.stmt;
    if (a.kind != ir::StmtKind::Assign || a.local == s.local || b.acc != ir::kNone)
      return std::nullopt;
    DotLoop d;
    d.acc = a.local;
    d.type = k_.locals[a.local].type;
    if (d.type != ir::ScalarType::F32 && d.type != ir::ScalarType::F64)
      return std::nullopt;
    if (!plain_float(a.a, ir::Op::Add, d.type))
      return std::nullopt;
    const ir::Expr& add = k_.expr(a.a);
    d.add = a.a;
    d.acc_first = local_get(add.args[0], d.acc);
    d.mul = d.acc_first ? add.args[1] : add.args[0];
    if (!local_get(d.acc_first ? add.args[0] : add.args[1], d.acc) ||
        !plain_float(d.mul, ir::Op::Mul, d.type))
      return std::nullopt;
    const ir::Expr& mul = k_.expr(d.mul);
    for (int i = 0; i < 2; ++i) {
      auto l = load(mul.args[i], d.type, s.local, d.acc);
      if (!l)
        return std::nullopt;
      d.load[i] = *l;
    }
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
template <Kind K, class T> struct Chunk {
  const T* row;
  T same;
  const uint32_t* e;
  Chunk(const T* a, const uint32_t* el, uint32_t c)
      : row(K == Kind::Gather ? a : a + el[c]), same(K == Kind::Uniform ? a[el[c]] : T{}),
        e(el + c) {}
  T operator[](uint32_t j) const {
    if constexpr (K == Kind::Uniform)
      return same;
    else if constexpr (K == Kind::Row)
      return row[j];
    else
      return row[e[j]];
  }
};

// One iteration on every lane: acc = add(acc, mul(x, y)) with x = X[ex[l]], y = Y[ey[l]] (X and
// Y already offset by the iteration's counter), 16 lanes at a time. Each operation rounds on its
// own (the library is built with -ffp-contract=off) and NaN results are made canonical, as
// eval_float.cpp's loops do.
template <class T, bool AccFirst, Kind KX, Kind KY>
void dot_pass(T* __restrict acc, const T* X, const uint32_t* ex, const T* Y, const uint32_t* ey,
              uint32_t n) {
  if constexpr (KX == Kind::Gather && KY == Kind::Gather) {
    for (uint32_t l = 0; l < n; ++l) {
      const T p = canonical(X[ex[l]] * Y[ey[l]]);
      acc[l] = canonical(AccFirst ? acc[l] + p : p + acc[l]);
    }
  } else {
    for (uint32_t c = 0; c < n; c += 16) {
      const Chunk<KX, T> x(X, ex, c);
      const Chunk<KY, T> y(Y, ey, c);
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
using DotPass = void (*)(T*, const T*, const uint32_t*, const T*, const uint32_t*, uint32_t);

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

// The counter values of a loop from `first` while below `bound`, stepping by `step` with
// for_stmt's semantics (compare in the counter's type, step wrapping); false when there are more
// than kMaxDotIterations. `last` is the value the counter ends with.
template <class S>
bool counter_values(uint32_t first, uint32_t bound, uint32_t step, std::vector<uint32_t>& out,
                    uint32_t& last) {
  uint32_t v = first;
  while (static_cast<S>(v) < static_cast<S>(bound)) {
    if (out.size() >= kMaxDotIterations)
      return false;
    out.push_back(v);
    v += step; // unsigned: wraps as for_stmt's step does
  }
  last = v;
  return true;
}

} // namespace

void plan_dot_loops(Program& p) {
  if (p.options.fused_loops)
    Planner(p).walk(p.body);
}

bool Exec::dot_loop(const CStmt& cs, const LaneMask& m) {
  if (iv_ || !m.all())
    return false;
  const DotLoop& d = p_.dots[cs.dot];
  const ir::Stmt& s = *cs.stmt;
  const uint32_t n = n_;

  // The counter: the same on every lane, its values for the whole loop.
  uint32_t* counter = reg<uint32_t>(p_.local_reg(s.local));
  for (uint32_t l = 1; l < n; ++l)
    if (counter[l] != counter[0])
      return false;
  const uint32_t bound = reg<uint32_t>(p_.nodes[s.b].reg)[0];
  const uint32_t step = reg<uint32_t>(p_.nodes[s.c].reg)[0];
  std::vector<uint32_t>& values = dot_values_;
  values.clear();
  uint32_t last = 0;
  const bool ok = p_.kernel->locals[s.local].type == ir::ScalarType::I32
                      ? counter_values<int32_t>(counter[0], bound, step, values, last)
                      : counter_values<uint32_t>(counter[0], bound, step, values, last);
  if (!ok)
    return false;
  const auto iterations = static_cast<uint32_t>(values.size());

  // Every element of every iteration within bounds: per lane the element without the counter's
  // part (`base`), and the counter's stride; the counter's values are checked once for the loop.
  const bool same = d.load[1].node == d.load[0].node; // x * x: one load per iteration
  const int loads = same ? 1 : 2;
  std::array<Target, 2> target;
  std::array<uint32_t, 2> stride{};
  for (int i = 0; i < loads; ++i) {
    const DotLoad& ld = d.load[i];
    target[i] = target_of(*this, ld.space, ld.mem);
    const ir::SharedArray* a = ld.space == ir::Space::Shared ? &p_.kernel->shared[ld.mem] : nullptr;
    uint32_t* __restrict base = dot_base_[i].data();
    std::fill_n(base, n, 0u);
    uint64_t s_after = 1; // the stride of dimension r: the product of the dimensions after it
    uint32_t bad = 0;
    for (uint32_t r = ld.rank; r-- > 0;) {
      const uint64_t dim = a ? uint64_t{a->dim(r)} : target[i].length;
      // A negative i32 is at least 2^31 as u32, so one unsigned compare checks both bounds.
      const uint64_t limit =
          ld.type[r] == ir::ScalarType::I32 ? std::min<uint64_t>(dim, uint64_t{1} << 31) : dim;
      if (ld.counter[r]) {
        for (uint32_t v : values)
          bad |= uint64_t{v} >= limit;
        stride[i] += static_cast<uint32_t>(s_after);
      } else {
        const uint32_t* idx = reg<uint32_t>(ld.reg[r]);
        const auto sr = static_cast<uint32_t>(s_after);
        for (uint32_t l = 0; l < n; ++l) {
          bad |= uint64_t{idx[l]} >= limit;
          base[l] += idx[l] * sr; // wraps only where bad
        }
      }
      s_after *= dim;
    }
    if (bad)
      return false;
  }

  // Reads of shared arrays: only while the array is clean, with room for every read of the loop
  // in its log (two loads of one array share it).
  const size_t reads = size_t{iterations} * n;
  for (int i = 0; i < loads; ++i) {
    if (d.load[i].space != ir::Space::Shared)
      continue;
    const SharedLog& log = logs_[d.load[i].mem];
    const bool shares =
        loads == 2 && d.load[0].space == d.load[1].space && d.load[0].mem == d.load[1].mem;
    if (log.dirty == epoch_ ||
        log.size + log.generated + (shares ? 2 : 1) * reads > kMaxLoggedReads)
      return false;
  }

  // Nothing can fail from here on. The read log gets the general path's entries in its order (per
  // iteration, x's reads then y's, each in lane order): written out for short loops, deferred to
  // the replay (SharedLog::Deferred) for longer ones, where writing them would cost more than the
  // loop's arithmetic.
  for (int i = 0; i < loads; ++i) {
    const DotLoad& ld = d.load[i];
    if (ld.space != ir::Space::Shared ||
        (i == 1 && d.load[0].space == ir::Space::Shared && d.load[0].mem == ld.mem))
      continue;                   // a second load of the same array is logged with the first
    std::array<int, 2> on{i, -1}; // this array's loads
    uint32_t k = 1;
    if (i == 0 && loads == 2 && d.load[1].space == ir::Space::Shared && d.load[1].mem == ld.mem)
      on[k++] = 1;
    SharedLog& log = logs_[ld.mem];
    if (reads * k < kMinDeferredReads) {
      log.allocate();
      for (uint32_t v : values)
        for (uint32_t q = 0; q < k; ++q) {
          const uint32_t* base = dot_base_[on[q]].data();
          const uint32_t off = v * stride[on[q]];
          for (uint32_t l = 0; l < n; ++l) {
            log.index[log.size + l] = base[l] + off;
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
    for (uint32_t q = 0; q < k; ++q)
      std::copy_n(dot_base_[on[q]].data(), n, def.bases.data() + size_t{q} * n);
    for (uint32_t j = 0; j < iterations; ++j)
      for (uint32_t q = 0; q < k; ++q)
        def.offsets[size_t{j} * k + q] = values[j] * stride[on[q]];
    log.generated += reads * k;
  }

  const int y = same ? 0 : 1;
  const uint32_t* bx = dot_base_[0].data();
  const uint32_t* by = dot_base_[y].data();
  const Kind kx = kind_of(bx, n), ky = kind_of(by, n);
  auto run = [&]<class T>() {
    T* acc = reg<T>(p_.local_reg(d.acc));
    const T* X = reinterpret_cast<const T*>(target[0].base);
    const T* Y = reinterpret_cast<const T*>(target[y].base);
    const DotPass<T> pass = d.acc_first ? pass_of<T, true>(kx, ky) : pass_of<T, false>(kx, ky);
    for (uint32_t v : values) {
      // The general path's steps: the loop's check of the iteration and the body's statement.
      tick();
      tick();
      const uint32_t ox = v * stride[0], oy = v * stride[y];
      pass(acc, X + ox, bx, Y + oy, by, n);
    }
    tick(); // the check that ends the loop
    if (iterations == 0)
      return;
    // The body's registers as the last iteration left them.
    const uint32_t ox = values.back() * stride[0], oy = values.back() * stride[y];
    T* rx = reg<T>(p_.nodes[d.load[0].node].reg);
    T* ry = reg<T>(p_.nodes[d.load[y].node].reg);
    T* rm = reg<T>(p_.nodes[d.mul].reg);
    T* ra = reg<T>(p_.nodes[d.add].reg);
    for (uint32_t l = 0; l < n; ++l) {
      rx[l] = X[bx[l] + ox];
      ry[l] = Y[by[l] + oy];
      rm[l] = canonical(rx[l] * ry[l]);
      ra[l] = acc[l];
    }
  };
  if (d.type == ir::ScalarType::F32)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  std::fill_n(counter, n, last);
  ++fused_;
  return true;
}

} // namespace halfway::interp
