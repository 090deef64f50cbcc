// Narrowing sites compiled for exact evaluation, the error-free path, single rounding and
// shadow records (exact.hpp).
#include "exact.hpp"

#include "access.hpp"
#include "exec.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "halfway/numerics/nearest.hpp"
#include "slots.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <set>

namespace halfway::interp {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// ---- building ---------------------------------------------------------------------------------

int build_tree(const Program& p, const std::set<ir::ExprId>& producers, ir::ExprId id,
               std::vector<ExactSite::TreeOp>& out) {
  ExactSite::TreeOp op;
  const ir::Expr& e = p.kernel->expr(id);
  if (!producers.count(id)) {
    op.leaf = true;
    op.reg = p.nodes[id].reg;
  } else {
    op.op = e.op;
    for (int i = 0; i < e.nargs; ++i)
      op.args[i] = build_tree(p, producers, e.args[i], out);
  }
  out.push_back(op);
  return static_cast<int>(out.size() - 1);
}

// The tree as a signed sum of leaves and products of two leaves; false when it is not one.
bool linear_terms(const std::vector<ExactSite::TreeOp>& tree, int i, bool negative,
                  std::vector<ExactSite::Term>& out) {
  const ExactSite::TreeOp& op = tree[i];
  auto single_leaf = [&](int j, ExactSite::Term& t) {
    std::vector<ExactSite::Term> sub;
    if (!linear_terms(tree, j, false, sub) || sub.size() != 1 || sub[0].b != ir::kNone)
      return false;
    t = sub[0];
    return true;
  };
  auto product = [&](int a, int b) {
    ExactSite::Term ta, tb;
    if (!single_leaf(a, ta) || !single_leaf(b, tb))
      return false;
    out.push_back({negative != (ta.negative != tb.negative), ta.a, tb.a});
    return true;
  };
  if (op.leaf) {
    out.push_back({negative, op.reg, ir::kNone});
    return true;
  }
  switch (op.op) {
  case ir::Op::Neg:
    return linear_terms(tree, op.args[0], !negative, out);
  case ir::Op::Add:
    return linear_terms(tree, op.args[0], negative, out) &&
           linear_terms(tree, op.args[1], negative, out);
  case ir::Op::Sub:
    return linear_terms(tree, op.args[0], negative, out) &&
           linear_terms(tree, op.args[1], !negative, out);
  case ir::Op::Mul:
    return product(op.args[0], op.args[1]);
  case ir::Op::Fma:
    if (!product(op.args[0], op.args[1]))
      return false;
    out.back().fma = true;
    return linear_terms(tree, op.args[2], negative, out);
  case ir::Op::Const:
  case ir::Op::LocalGet:
  case ir::Op::ParamGet:
  case ir::Op::GlobalId:
  case ir::Op::LocalId:
  case ir::Op::GroupId:
  case ir::Op::GroupSize:
  case ir::Op::NumGroups:
  case ir::Op::BufferLen:
  case ir::Op::Load:
  case ir::Op::Convert:
  case ir::Op::Bitcast:
  case ir::Op::Pack:
  case ir::Op::Unpack:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Abs:
  case ir::Op::Min:
  case ir::Op::Max:
  case ir::Op::Clamp:
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
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Not:
  case ir::Op::Shl:
  case ir::Op::Shr:
  case ir::Op::Select:
    return false;
  }
  ir::invalid_op(op.op);
}

} // namespace

double exact_leaf(Exec& x, const ExactSite& s, uint32_t reg, uint32_t lane) {
  if (s.plain_f32)
    return static_cast<double>(x.reg<float>(reg)[lane]); // exact
  uint64_t bits = get_slot(x.reg<std::byte>(reg), num::info(s.from).total_bits / 8, lane);
  bits = num::apply_flush(s.from, bits, x.options().controls);
  return num::to_double(s.from, bits);
}

namespace {

// ---- values: the error-free path ---------------------------------------------------------------
//
// Every lane of a batch evaluates the site independently, in one loop over the batch whose
// per-lane work is inline and has no branches on the data: on tie-stressing inputs whether a sum
// is exact, or a last bit odd, is a coin toss, and a mispredicted branch per decision cost more
// than the arithmetic.

// hi + lo (|lo| <= ulp(hi) / 2) rounded to odd: the last bit of hi is forced to 1 when lo != 0
// (a step of one ulp towards lo from an even hi). hi itself when it is not finite.
inline double round_to_odd(double hi, double lo) {
  const uint64_t bits = std::bit_cast<uint64_t>(hi);
  const bool step = (lo != 0) & std::isfinite(hi) & ((bits & 1) == 0);
  // Up in magnitude when lo has hi's sign (hi != 0 when lo != 0), else down.
  const uint64_t toward = std::signbit(lo) == std::signbit(hi) ? 1 : ~uint64_t{0};
  return std::bit_cast<double>(bits + (step ? toward : 0));
}

// The exact sum of two doubles rounded to odd (NaN for inf - inf): TwoSum (Knuth), whose error
// term is exact when the sum is finite.
inline double odd_sum(double a, double b) {
  const double sum = a + b;
  const double bb = sum - a;
  const double err = (a - (sum - bb)) + (b - bb);
  return round_to_odd(sum, err);
}

// A double rounded to nearest-even into the source type, flushed where the controls flush it.
template <bool Plain>
inline double round_source(const ExactSite& s, double v, const num::FloatControls& c) {
  if constexpr (Plain) // nearest-even under the workers' MXCSR; a NaN's payload is dropped later
    return static_cast<double>(static_cast<float>(v));
  else
    return num::to_double(s.from, num::apply_flush(s.from, num::from_double(s.from, v), c));
}

// The site's terms as the lane loop reads them: leaf registers (f32 values when Plain, else the
// leaves' exact values, gathered into Exec::site_lanes first) and what each model does with the
// term's product.
template <bool Plain> struct TermLanes {
  using Leaf = std::conditional_t<Plain, const float*, const double*>;
  Leaf a = nullptr, b = nullptr; // b null: the term is the leaf a
  bool negative = false;
  bool f32_exact = false; // FusedF32 keeps the product exact (an fma's, or the contracted one)
  bool mul_exact = false; // FusedMul keeps it exact (an fma's)
};

// One lane's values: the exact value hi + lo and its rounding to odd, the sum of |products|, and
// with the models the FusedF32 value (rounded into the source type) and the FusedMul value
// (rounded to odd).
struct LaneExact {
  ExactValue v;
  double fused_f32 = 0, fused_mul = 0;
};

template <bool Plain, size_t N>
__attribute__((always_inline)) inline LaneExact
lane_exact(const ExactSite& s, const std::array<TermLanes<Plain>, N>& t, uint32_t lane, bool models,
           const num::FloatControls& c) {
  double exact[N], f32[N], mul[N];
  double products = 0;
  for (size_t k = 0; k < N; ++k) {
    double v = static_cast<double>(t[k].a[lane]);
    double v32 = v, vmul = v;
    if (t[k].b) {
      v *= static_cast<double>(t[k].b[lane]); // exact: at most 48 significant bits
      products += std::fabs(v);
      if (models) {
        const double rounded = round_source<Plain>(s, v, c);
        v32 = t[k].f32_exact ? v : rounded;
        vmul = t[k].mul_exact ? v : rounded;
      }
    }
    exact[k] = t[k].negative ? -v : v;
    f32[k] = t[k].negative ? -v32 : v32;
    mul[k] = t[k].negative ? -vmul : vmul;
  }
  double hi = exact[0], lo = 0, f32_sum = f32[0], mul_sum = mul[0];
  if constexpr (N == 2) {
    hi = exact[0] + exact[1]; // TwoSum (Knuth): exact[0] + exact[1] == hi + lo exactly
    const double bb = hi - exact[0];
    lo = (exact[0] - (hi - bb)) + (exact[1] - bb);
    f32_sum = odd_sum(f32[0], f32[1]);
    mul_sum = odd_sum(mul[0], mul[1]);
  }
  const bool nan = std::isnan(hi); // inf - inf, 0 * inf, a NaN leaf: the models agree on NaN
  hi = nan ? kNan : hi;
  lo = std::isfinite(hi) ? lo : 0;
  LaneExact out;
  out.v = {hi, lo, round_to_odd(hi, lo), products};
  if (models) {
    out.fused_f32 = nan ? kNan : round_source<Plain>(s, f32_sum, c);
    out.fused_mul = nan ? kNan : mul_sum;
  }
  return out;
}

// Which tree nodes the FusedF32 and FusedMul models round (shadow.hpp): FusedF32 every add, sub,
// mul and fma except the mul each add or sub contracts (its first operand that is a mul, through
// negations, else its second); FusedMul only the muls.
void model_rounding(ExactSite& s) {
  const size_t n = s.tree.size();
  s.fused_f32_rounds.assign(n, 0);
  s.fused_mul_rounds.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const ExactSite::TreeOp& op = s.tree[i];
    if (op.leaf)
      continue;
    s.fused_f32_rounds[i] = op.op == ir::Op::Add || op.op == ir::Op::Sub || op.op == ir::Op::Mul ||
                            op.op == ir::Op::Fma;
    s.fused_mul_rounds[i] = op.op == ir::Op::Mul;
  }
  for (size_t i = 0; i < n; ++i) {
    const ExactSite::TreeOp& op = s.tree[i];
    if (op.leaf || (op.op != ir::Op::Add && op.op != ir::Op::Sub))
      continue;
    for (int k = 0; k < 2; ++k) {
      int j = op.args[k];
      while (!s.tree[j].leaf && s.tree[j].op == ir::Op::Neg)
        j = s.tree[j].args[0];
      if (!s.tree[j].leaf && s.tree[j].op == ir::Op::Mul) {
        s.fused_f32_rounds[j] = 0;
        break;
      }
    }
  }
}

// The terms' registers and model flags. FusedF32 contracts the first product into the sum when
// there are two terms (the other one feeds the fma rounded); FusedMul rounds every product that is
// not an fma's.
template <bool Plain, size_t N>
std::array<TermLanes<Plain>, N> term_lanes(Exec& x, const ExactSite& s) {
  std::array<TermLanes<Plain>, N> out;
  bool contracted = false;
  for (size_t k = 0; k < N; ++k) {
    const ExactSite::Term& term = s.terms[k];
    TermLanes<Plain>& t = out[k];
    t.negative = term.negative;
    const bool product = term.b != ir::kNone;
    const bool contract = product && N == 2 && !contracted;
    contracted = contracted || contract;
    t.f32_exact = term.fma || contract;
    t.mul_exact = term.fma;
    if constexpr (Plain) {
      t.a = x.reg<float>(term.a);
      t.b = product ? x.reg<float>(term.b) : nullptr;
    } else {
      // The leaves' exact values (flushed where the controls flush them) on the active lanes.
      double* a = x.site_lanes(static_cast<uint32_t>(2 * k));
      double* b = product ? x.site_lanes(static_cast<uint32_t>(2 * k + 1)) : nullptr;
      for_active(x.mask(), [&](uint32_t lane) {
        a[lane] = exact_leaf(x, s, term.a, lane);
        if (b)
          b[lane] = exact_leaf(x, s, term.b, lane);
      });
      t.a = a;
      t.b = b;
    }
  }
  return out;
}

// Calls f with the site's terms (term_lanes) for its source and number of terms.
template <class F> void with_terms(Exec& x, const ExactSite& s, F&& f) {
  if (s.plain_f32) {
    if (s.terms.size() == 1)
      f(term_lanes<true, 1>(x, s));
    else
      f(term_lanes<true, 2>(x, s));
  } else {
    if (s.terms.size() == 1)
      f(term_lanes<false, 1>(x, s));
    else
      f(term_lanes<false, 2>(x, s));
  }
}

} // namespace

std::shared_ptr<ExactSite> make_exact_site(const Program& p, const ir::NarrowingSite& site) {
  auto s = std::make_shared<ExactSite>();
  const ir::Expr& c = p.kernel->expr(site.convert);
  s->site = site;
  s->from = ir::format_of(site.from);
  s->to = ir::format_of(site.to);
  s->rounding = ir::rounding_of(c.rounding);
  s->overflow = c.saturate ? num::Fp8Overflow::Saturate : num::Fp8Overflow::Nan;
  s->single = p.options.narrowing == NarrowingModel::SingleRounding && site.needs_barrier();
  s->shadow = p.options.shadow;
  s->plain_f32 = s->from == num::Format::F32 && !num::flushes(s->from, p.options.controls);
  s->producer_reg = p.nodes[site.producer].reg;
  std::set<ir::ExprId> producers(site.producers.begin(), site.producers.end());
  build_tree(p, producers, site.producer, s->tree);
  model_rounding(*s);
  std::vector<ExactSite::Term> terms;
  if (linear_terms(s->tree, static_cast<int>(s->tree.size() - 1), false, terms) &&
      terms.size() <= 2) {
    bool has_product = false;
    for (const auto& t : terms)
      has_product |= t.b != ir::kNone;
    // f64 products are not exact in double, and an f64 sum may overflow it.
    if (site.from != ir::ScalarType::F64 || (terms.size() == 1 && !has_product))
      s->terms = std::move(terms);
  }
  return s;
}

namespace {

// Rounding a double into the site's target: inline for nearest-even into f16, bf16 and f32 (the
// shadow narrows three values per lane), num::from_double otherwise.
template <num::Format To> struct NearestNarrow {
  __attribute__((always_inline)) uint64_t operator()(double v) const {
    if ((num::f64_bits(v) & 0x7ff0000000000000u) == 0x7ff0000000000000u)
      return num::from_double(To, v);
    return num::nearest::from_finite<To>(v);
  }
};
struct GenericNarrow {
  const ExactSite& s;
  uint64_t operator()(double v) const { return num::from_double(s.to, v, s.rounding, s.overflow); }
};

template <class F> void with_narrow(const ExactSite& s, F&& f) {
  if (s.rounding == num::Rounding::NearestEven) {
    switch (s.to) {
    case num::Format::F16:
      return f(NearestNarrow<num::Format::F16>{});
    case num::Format::BF16:
      return f(NearestNarrow<num::Format::BF16>{});
    case num::Format::F32:
      return f(NearestNarrow<num::Format::F32>{});
    case num::Format::F64:
    case num::Format::E4M3:
    case num::Format::E5M2:
      break;
    }
  }
  f(GenericNarrow{s});
}

// One shadow record per active lane (shadow.hpp). `values(lane)` gives the lane's exact value
// and its FusedF32 and FusedMul results, `narrow` rounds into the target. Before a
// single-rounding site's result replaces the two-step one in the register.
template <class Values, class Narrow>
void record_lanes(Exec& x, const Node& n, const ExactSite& s, Values&& values,
                  const Narrow& narrow) {
  const uint32_t to_bytes = num::info(s.to).total_bits / 8;
  const uint32_t from_bytes = num::info(s.from).total_bits / 8;
  const void* result = x.reg<std::byte>(n.reg);
  const void* source = x.reg<std::byte>(s.producer_reg);
  const uint32_t wg_lanes = x.program().wg_lanes;
  // The lane's workgroup and its first lane, advanced as the lanes increase (no division).
  uint64_t workgroup = x.first_workgroup();
  uint32_t group_start = 0;
  std::vector<ShadowRecord>& records = x.shadow();
  // Geometric growth: an exact reserve per evaluation would copy every record so far each time
  // (a site in a loop).
  if (const size_t need = records.size() + x.mask().count(); need > records.capacity())
    records.reserve(std::max(need, 2 * records.capacity()));
  // Inlined into for_active's loops: a call per lane, its captures reloaded, cost as much as the
  // record itself.
  for_active(
      x.mask(), [&](uint32_t lane) __attribute__((always_inline)) {
        while (lane - group_start >= wg_lanes) {
          group_start += wg_lanes;
          ++workgroup;
        }
        const auto [v, m] = values(lane);
        const uint64_t two_step = get_slot(result, to_bytes, lane);
        const uint64_t single = narrow(v.odd);
        ShadowRecord& r = records.emplace_back(); // built in place: no 112-byte copy per lane
        r.models[static_cast<size_t>(RoundingModel::TwoStep)] = static_cast<uint32_t>(two_step);
        r.models[static_cast<size_t>(RoundingModel::FusedF32)] = static_cast<uint32_t>(m.fused_f32);
        r.models[static_cast<size_t>(RoundingModel::Single)] = static_cast<uint32_t>(single);
        r.models[static_cast<size_t>(RoundingModel::FusedMul)] = static_cast<uint32_t>(m.fused_mul);
        r.site = n.id;
        r.workgroup = workgroup;
        r.lane = lane - group_start;
        r.global_lane = workgroup * wg_lanes + r.lane;
        r.source_bits = get_slot(source, from_bytes, lane);
        r.result_bits = s.single ? single : two_step; // what this run stores (eval_site)
        r.exact_hi = v.hi;
        r.exact_lo = v.lo;
        r.product_sum = v.product_sum;
      });
}

} // namespace

void eval_site(Exec& x, const Node& n) {
  const ExactSite& s = *n.site;
  s.convert(x, n);
  const uint32_t to_bytes = num::info(s.to).total_bits / 8;
  void* result = x.reg<std::byte>(n.reg);
  if (s.terms.empty()) { // MPFR, lane by lane
    const GenericNarrow narrow{s};
    if (s.shadow)
      record_lanes(
          x, n, s,
          [&](uint32_t lane) {
            return std::pair{exact_value_mpfr(x, s, lane), model_results_mpfr(x, s, lane)};
          },
          narrow);
    if (s.single)
      for_active(x.mask(), [&](uint32_t lane) {
        set_slot(result, to_bytes, lane, narrow(exact_value_mpfr(x, s, lane).odd));
      });
    return;
  }
  const num::FloatControls& c = x.options().controls;
  with_terms(x, s, [&](const auto& terms) {
    with_narrow(s, [&](const auto& narrow) {
      if (s.shadow)
        record_lanes(
            x, n, s,
            [&](uint32_t lane) {
              const LaneExact e = lane_exact(s, terms, lane, true, c);
              return std::pair{e.v, ModelResults{narrow(e.fused_f32), narrow(e.fused_mul)}};
            },
            narrow);
      if (s.single)
        for_active(x.mask(), [&](uint32_t lane) {
          set_slot(result, to_bytes, lane, narrow(lane_exact(s, terms, lane, false, c).v.odd));
        });
    });
  });
}

void attach_destinations(Exec& x, const CStmt& cs, size_t first) {
  const ir::Stmt& s = *cs.stmt;
  auto& records = x.shadow();
  const uint32_t wg_lanes = x.program().wg_lanes;
  for (size_t i = first; i < records.size(); ++i) {
    ShadowRecord& r = records[i];
    if (r.site != s.b)
      continue;
    const auto lane =
        static_cast<uint32_t>((r.workgroup - x.first_workgroup()) * wg_lanes + r.lane);
    r.destination = Destination{s.space, s.mem, stored_element(x, s, lane)};
  }
}

} // namespace halfway::interp
