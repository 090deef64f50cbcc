// How a kernel uses each of its buffers, and fills that respect it. A u32 buffer that the kernel
// unpacks as fp8, f16 or bf16 and filled with uniform bits holds NaN and infinite codes (E5M2:
// 1 code in 32; f16: 1 in 32; a GEMV row of 4096 such weights is then NaN almost surely), and a
// NaN row matches any NaN row: the comparison proves nothing. An index buffer of random bits makes
// every lane fail its bounds check. Both get values that exercise the arithmetic instead.
#include "halfway/diff/compare.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/numerics/formats.hpp"
#include "halfway/support/error.hpp"
#include "random.hpp"

#include <algorithm>
#include <set>

namespace halfway::diff::inputs {

namespace {

// Which buffer parameters' loaded values reach an expression, directly or through locals.
class Flow {
public:
  explicit Flow(const ir::Kernel& k) : k_(k), local_params_(k.locals.size()) {
    // Locals take their sources from every assignment; iterate to a fixpoint (locals feed locals).
    for (bool changed = true; changed;) {
      changed = false;
      walk(k.body, [&](const ir::Stmt& s) {
        if ((s.kind == ir::StmtKind::Let || s.kind == ir::StmtKind::Assign) &&
            s.local < local_params_.size()) {
          std::set<uint32_t> from = params_in(s.a);
          size_t before = local_params_[s.local].size();
          local_params_[s.local].insert(from.begin(), from.end());
          changed = changed || local_params_[s.local].size() != before;
        }
      });
    }
  }

  std::set<uint32_t> params_in(ir::ExprId e) const {
    std::set<uint32_t> out;
    collect(e, out, 0);
    return out;
  }

  template <class F> static void walk(const ir::Body& body, const F& f) {
    for (const ir::Stmt& s : body) {
      f(s);
      walk(s.body, f);
      walk(s.else_body, f);
    }
  }

private:
  void collect(ir::ExprId e, std::set<uint32_t>& out, int depth) const {
    if (e == ir::kNone || e >= k_.exprs.size() || depth > 256)
      return;
    const ir::Expr& x = k_.expr(e);
    if (x.op == ir::Op::Load && x.space == ir::Space::Buffer)
      out.insert(x.ref);
    if (x.op == ir::Op::LocalGet && x.ref < local_params_.size())
      out.insert(local_params_[x.ref].begin(), local_params_[x.ref].end());
    for (uint8_t i = 0; i < x.nargs; ++i)
      collect(x.args[i], out, depth + 1);
  }

  const ir::Kernel& k_;
  std::vector<std::set<uint32_t>> local_params_;
};

// Finite, non-NaN codes of `f` for edges: zeros, the smallest and largest subnormals, the
// smallest normal, one, the largest finite value, with both signs.
std::vector<uint64_t> finite_edges(ir::ScalarType element, num::Format f) {
  std::vector<uint64_t> out;
  for (uint64_t v : special_bits(element))
    if (num::is_finite(f, v))
      out.push_back(v);
  return out;
}

} // namespace

BufferUse buffer_use(const ir::Kernel& k, uint32_t param) {
  BufferUse use;
  Flow flow(k);
  for (ir::ExprId e = 0; e < k.exprs.size(); ++e) {
    const ir::Expr& x = k.expr(e);
    if (x.op == ir::Op::Unpack && flow.params_in(x.args[0]).count(param))
      use.packed = x.aux;
    if (x.op == ir::Op::Load)
      for (int i = 0; i < x.nargs && i < 3; ++i)
        if (flow.params_in(x.args[i]).count(param))
          use.index_of.push_back({x.space, x.ref});
  }
  Flow::walk(k.body, [&](const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Store || s.kind == ir::StmtKind::Atomic)
      for (ir::ExprId i : ir::store_indices(s))
        if (i != ir::kNone && flow.params_in(i).count(param))
          use.index_of.push_back({s.space, s.mem});
  });
  return use;
}

void fill_packed(rt::HostBuffer& buffer, ir::ScalarType element, Kind kind, uint64_t seed) {
  const std::optional<num::Format> f = float_format(element);
  if (!f || buffer.type() != ir::ScalarType::U32)
    throw halfway::Error(halfway::ErrorKind::Usage,
                         "packed fills need a u32 buffer of f16, bf16 or fp8 elements");
  const unsigned width = ir::info(element).bits, per_word = 32 / width;
  const std::vector<uint64_t> edges = finite_edges(element, *f);
  detail::Random r(seed);
  size_t next_edge = 0;
  for (size_t i = 0; i < buffer.size(); ++i) {
    uint64_t word = 0;
    for (unsigned lane = 0; lane < per_word; ++lane) {
      uint64_t v;
      // Edges: every other element cycles through the finite edges. Ties: one in four, so that
      // most products still land near ties of the output. Random: none.
      bool edge = (kind == Kind::Edges && (i + lane) % 2 == 0) ||
                  (kind == Kind::Ties && (i + lane) % 4 == 0);
      if (kind == Kind::Zeros) {
        v = 0;
      } else if (edge && !edges.empty()) {
        v = edges[next_edge++ % edges.size()];
      } else {
        v = r.float_in_binade(*f, r.in(-4, 4), false);
      }
      word |= v << (lane * width);
    }
    buffer.set_bits(i, word);
  }
}

void fill_indices(rt::HostBuffer& buffer, uint64_t limit, uint64_t seed) {
  detail::Random r(seed);
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer.set_bits(i, limit ? r.bits() % limit : 0);
}

bool fill_for_use(const ir::Kernel& k, uint32_t param, rt::HostBuffer& buffer, Kind kind,
                  uint64_t seed, std::span<const uint64_t> lengths) {
  const BufferUse use = buffer_use(k, param);
  if (use.packed && buffer.type() == ir::ScalarType::U32 && kind != Kind::Iota) {
    fill_packed(buffer, *use.packed, kind, seed);
    return true;
  }
  if (!use.index_of.empty() && !float_format(buffer.type()) && kind != Kind::Zeros &&
      kind != Kind::Iota) {
    uint64_t limit = ~uint64_t{0};
    for (const auto& [space, ref] : use.index_of) {
      // An index into a rank-2 or rank-3 array: below its smallest dimension fits any of them.
      uint64_t len = ref < lengths.size() ? lengths[ref] : 0;
      if (space != ir::Space::Buffer) {
        const ir::SharedArray& a = k.array(space, ref);
        len = a.dim(0);
        for (uint32_t d = 1; d < a.rank(); ++d)
          len = std::min<uint64_t>(len, a.dim(d));
      }
      limit = std::min(limit, len);
    }
    if (ir::info(buffer.type()).bits < 64)
      limit = std::min(limit, uint64_t{1} << (ir::info(buffer.type()).bits -
                                              (ir::info(buffer.type()).is_signed ? 1 : 0)));
    fill_indices(buffer, limit, seed);
    return true;
  }
  return false;
}

} // namespace halfway::diff::inputs
