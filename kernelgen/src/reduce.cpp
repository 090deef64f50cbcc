#include "halfway/kernelgen/reduce.hpp"

#include "halfway/kernelgen/generate.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace halfway::kernelgen {

namespace {

using ir::Stmt;

// The statement numbered `n` in pre-order (for_each_stmt's order), found by counting down.
// Erases it (and what it holds) from its block.
bool erase_nth(ir::Body& block, size_t& n) {
  for (size_t i = 0; i < block.size(); ++i) {
    if (n == 0) {
      block.erase(block.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
    --n;
    if (erase_nth(block[i].body, n) || erase_nth(block[i].else_body, n))
      return true;
  }
  return false;
}

// Replaces the if numbered `n` by the statements of its then (`which` 0) or else block.
bool splice_nth(ir::Body& block, size_t& n, int which) {
  for (size_t i = 0; i < block.size(); ++i) {
    if (n == 0) {
      if (block[i].kind != ir::StmtKind::If)
        return false;
      ir::Body inner = std::move(which == 0 ? block[i].body : block[i].else_body);
      block.erase(block.begin() + static_cast<std::ptrdiff_t>(i));
      block.insert(block.begin() + static_cast<std::ptrdiff_t>(i),
                   std::make_move_iterator(inner.begin()), std::make_move_iterator(inner.end()));
      return true;
    }
    --n;
    if (splice_nth(block[i].body, n, which) || splice_nth(block[i].else_body, n, which))
      return true;
  }
  return false;
}

// Nodes the statements reach, each once, parents before their operands.
std::vector<ir::ExprId> reachable(const ir::Kernel& k) {
  std::vector<ir::ExprId> order;
  std::vector<bool> seen(k.exprs.size(), false);
  std::vector<ir::ExprId> stack;
  ir::for_each_stmt(k.body, [&](const Stmt& s) {
    for (ir::ExprId root : ir::stmt_exprs(s)) {
      stack.push_back(root);
      while (!stack.empty()) {
        ir::ExprId id = stack.back();
        stack.pop_back();
        if (id == ir::kNone || id >= k.exprs.size() || seen[id])
          continue;
        seen[id] = true;
        order.push_back(id);
        const ir::Expr& e = k.expr(id);
        for (int i = e.nargs - 1; i >= 0; --i)
          stack.push_back(e.args[i]);
      }
    }
  });
  return order;
}

// Locals a node reads.
void read_locals(const ir::Kernel& k, ir::ExprId id, std::set<uint32_t>& out) {
  const ir::Expr& e = k.expr(id);
  if (e.op == ir::Op::LocalGet)
    out.insert(e.ref);
  for (int i = 0; i < e.nargs; ++i)
    read_locals(k, e.args[i], out);
}

// False when some while loop's body no longer assigns any local its condition reads: the
// condition is then invariant and the loop either never runs or never ends. Deleting a loop's
// counter increment is the usual way a candidate would hang; the launch timeout bounds the rest.
bool loops_can_end(const ir::Kernel& k, const ir::Body& block) {
  for (const Stmt& s : block) {
    if (s.kind == ir::StmtKind::While) {
      std::set<uint32_t> cond;
      read_locals(k, s.a, cond);
      bool assigned = false;
      ir::for_each_stmt(s.body, [&](const Stmt& b) {
        assigned =
            assigned || ((b.kind == ir::StmtKind::Assign || b.kind == ir::StmtKind::Atomic) &&
                         cond.count(b.local));
      });
      if (!assigned)
        return false;
    }
    if (!loops_can_end(k, s.body) || !loops_can_end(k, s.else_body))
      return false;
  }
  return true;
}

class Reducer {
public:
  Reducer(const ir::Kernel& k, const Lanes& lanes, const StillFails& f, const ReduceOptions& o)
      : k_(k), lanes_(lanes), still_fails_(f), o_(o) {}

  Reduced run() {
    Reduced r;
    r.statements_before = count_statements(k_);
    bool progress = true;
    while (progress && attempts_ < o_.max_attempts) {
      progress = false;
      progress |= chunks();
      progress |= statements();
      progress |= ifs();
      progress |= grid();
      if (o_.expressions)
        progress |= expressions();
    }
    r.kernel = k_;
    r.lanes = lanes_;
    r.statements = count_statements(k_);
    r.attempts = attempts_;
    return r;
  }

private:
  // Keeps `candidate` when it verifies and still fails.
  bool attempt(ir::Kernel candidate, const Lanes& lanes) {
    if (attempts_ >= o_.max_attempts)
      return false;
    std::optional<ir::VerifiedKernel> v;
    try {
      v.emplace(ir::verify(candidate));
    } catch (const Error&) {
      return false;
    }
    if (!loops_can_end(candidate, candidate.body))
      return false;
    ++attempts_;
    if (!still_fails_(*v, lanes))
      return false;
    k_ = std::move(candidate);
    lanes_ = lanes;
    return true;
  }

  // Runs of top-level statements, halves first.
  bool chunks() {
    bool any = false;
    for (size_t size = k_.body.size() / 2; size >= 2; size /= 2)
      for (size_t end = k_.body.size(); end >= size;) {
        ir::Kernel c = k_;
        c.body.erase(c.body.begin() + static_cast<std::ptrdiff_t>(end - size),
                     c.body.begin() + static_cast<std::ptrdiff_t>(end));
        any |= attempt(std::move(c), lanes_);
        end = std::min(end - size, k_.body.size());
      }
    return any;
  }

  bool statements() {
    bool any = false;
    for (size_t n = count_statements(k_); n-- > 0;) {
      ir::Kernel c = k_;
      size_t i = n;
      if (erase_nth(c.body, i))
        any |= attempt(std::move(c), lanes_);
    }
    return any;
  }

  bool ifs() {
    bool any = false;
    for (size_t n = count_statements(k_); n-- > 0;)
      for (int which = 0; which < 2; ++which) {
        ir::Kernel c = k_;
        size_t i = n;
        if (splice_nth(c.body, i, which) && attempt(std::move(c), lanes_)) {
          any = true;
          break;
        }
      }
    return any;
  }

  // Along x, y and z in turn: one workgroup along the dimension, then halve the workgroup's
  // extent there (lanes following), so that a failure that needs only a row of lanes ends as
  // one.
  bool grid() {
    bool any = false;
    for (size_t d = 0; d < 3; ++d) {
      if (lanes_[d] > k_.workgroup[d]) {
        Lanes fewer = lanes_;
        fewer[d] = k_.workgroup[d];
        any |= attempt(k_, fewer);
      }
      while (k_.workgroup[d] > 1 && lanes_[d] == k_.workgroup[d]) {
        ir::Kernel c = k_;
        c.workgroup[d] /= 2;
        Lanes fewer = lanes_;
        fewer[d] = c.workgroup[d];
        if (!attempt(std::move(c), fewer))
          break;
        any = true;
      }
    }
    return any;
  }

  bool expressions() {
    bool any = false;
    std::vector<bool> done(k_.exprs.size(), false);
    for (bool changed = true; changed;) {
      changed = false;
      const std::vector<ir::ExprId> order = reachable(k_);
      // The generator's guards stay: an integer divisor or(d, 1) and a shift amount
      // and(s, width - 1). Replaced, they give a kernel with undefined behaviour whose difference
      // is no longer the one being reduced (their operands still shrink).
      std::set<ir::ExprId> guards;
      for (ir::ExprId id : order) {
        const ir::Expr& e = k_.expr(id);
        if (((e.op == ir::Op::Div || e.op == ir::Op::Rem) && ir::is_int(e.type)) ||
            e.op == ir::Op::Shl || e.op == ir::Op::Shr)
          guards.insert(e.args[1]);
      }
      for (ir::ExprId id : order) {
        if (id < done.size() && done[id])
          continue;
        if (id < done.size())
          done[id] = true;
        const ir::Expr e = k_.expr(id);
        if (e.nargs == 0 || guards.count(id))
          continue; // a leaf is as small as it gets; a guard stays
        std::vector<ir::Expr> replacements;
        // Operands first: they keep more of the computation that fails.
        for (int i = 0; i < e.nargs; ++i)
          if (k_.expr(e.args[i]).type == e.type)
            replacements.push_back(k_.expr(e.args[i]));
        ir::Expr zero;
        zero.op = ir::Op::Const;
        zero.type = e.type;
        replacements.push_back(zero);
        for (const ir::Expr& r : replacements) {
          ir::Kernel c = k_;
          c.exprs[id] = r;
          if (attempt(std::move(c), lanes_)) {
            any = changed = true;
            break;
          }
        }
        if (changed)
          break; // the reachable set changed: walk it again
      }
    }
    return any;
  }

  ir::Kernel k_;
  Lanes lanes_;
  const StillFails& still_fails_;
  ReduceOptions o_;
  uint64_t attempts_ = 0;
};

} // namespace

Reduced reduce(const ir::Kernel& kernel, const Lanes& lanes, const StillFails& still_fails,
               const ReduceOptions& options) {
  return Reducer(kernel, lanes, still_fails, options).run();
}

} // namespace halfway::kernelgen
