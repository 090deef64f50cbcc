// Narrowing sites compiled for exact evaluation, the error-free path, single rounding and
// shadow records (exact.hpp).
#include "exact.hpp"

#include "access.hpp"
#include "exec.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "slots.hpp"

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

// hi + lo (|lo| <= ulp(hi) / 2) rounded to odd: the last bit of hi is forced to 1 when lo != 0.
double round_to_odd(double hi, double lo) {
  if (lo == 0 || !std::isfinite(hi))
    return hi;
  uint64_t bits = std::bit_cast<uint64_t>(hi);
  if (bits & 1)
    return hi;
  // Step one ulp towards lo: up in magnitude when lo has hi's sign (hi != 0 when lo != 0).
  bits = (std::signbit(lo) == std::signbit(hi)) ? bits + 1 : bits - 1;
  return std::bit_cast<double>(bits);
}

ExactValue from_pair(double hi, double lo, double products) {
  if (std::isnan(hi))
    return {kNan, 0, kNan, products};
  if (!std::isfinite(hi))
    lo = 0;
  return {hi, lo, round_to_odd(hi, lo), products};
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

// A double rounded to nearest-even into the source type, flushed where the controls flush it.
double round_source(const ExactSite& s, double v, const num::FloatControls& c) {
  if (s.plain_f32) // nearest-even under the workers' MXCSR; a NaN's payload is dropped later
    return static_cast<double>(static_cast<float>(v));
  return num::to_double(s.from, num::apply_flush(s.from, num::from_double(s.from, v), c));
}

// The exact sum of two doubles rounded to odd (NaN for inf - inf).
double odd_sum(double a, double b) {
  const double sum = a + b;
  if (!std::isfinite(sum))
    return sum;
  const double bb = sum - a; // TwoSum (Knuth)
  const double err = (a - (sum - bb)) + (b - bb);
  return round_to_odd(sum, err);
}

} // namespace

namespace {

// The error-free path in one pass over the leaves: the exact value and, with `models`, the FusedF32
// and FusedMul results (Single is the exact value's one rounding, TwoStep the ordinary conversion).
struct LaneExact {
  ExactValue v;
  ModelResults m;
};

LaneExact fast_lane(Exec& x, const ExactSite& s, uint32_t lane, bool models) {
  const num::FloatControls& c = x.options().controls;
  // Each term exactly, and as FusedF32 and FusedMul see it: a product exact or rounded in the
  // source type. FusedF32 contracts the first product into the sum when there are two terms (the
  // other one feeds the fma rounded); FusedMul rounds every product that is not an fma's.
  double t[2] = {0, 0}, f32[2] = {0, 0}, mul[2] = {0, 0};
  double products = 0;
  bool contracted = false;
  for (size_t i = 0; i < s.terms.size(); ++i) {
    const ExactSite::Term& term = s.terms[i];
    double v = exact_leaf(x, s, term.a, lane);
    double v32 = v, vmul = v;
    if (term.b != ir::kNone) {
      v *= exact_leaf(x, s, term.b, lane); // exact: at most 48 significant bits
      products += std::fabs(v);
      if (models) {
        const double rounded = round_source(s, v, c);
        const bool contract = s.terms.size() == 2 && !contracted;
        contracted = contracted || contract;
        v32 = term.fma || contract ? v : rounded;
        vmul = term.fma ? v : rounded;
      }
    }
    t[i] = term.negative ? -v : v;
    f32[i] = term.negative ? -v32 : v32;
    mul[i] = term.negative ? -vmul : vmul;
  }
  LaneExact out;
  if (s.terms.size() == 1) {
    out.v = from_pair(t[0], 0, products);
  } else {
    const double sum = t[0] + t[1]; // TwoSum (Knuth): t0 + t1 == sum + err exactly
    const double bb = sum - t[0];
    const double err = (t[0] - (sum - bb)) + (t[1] - bb);
    out.v = from_pair(sum, err, products);
  }
  if (!models)
    return out;
  if (std::isnan(out.v.hi)) { // the models only differ on numbers
    out.m.fused_f32 = out.m.fused_mul = num::from_double(s.to, out.v.hi, s.rounding, s.overflow);
    return out;
  }
  const double source = round_source(s, odd_sum(f32[0], f32[1]), c);
  out.m.fused_f32 = num::from_double(s.to, source, s.rounding, s.overflow);
  out.m.fused_mul = num::from_double(s.to, odd_sum(mul[0], mul[1]), s.rounding, s.overflow);
  return out;
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

ExactValue exact_value(Exec& x, const ExactSite& s, uint32_t lane) {
  return s.terms.empty() ? exact_value_mpfr(x, s, lane) : fast_lane(x, s, lane, false).v;
}

void eval_site(Exec& x, const Node& n) {
  const ExactSite& s = *n.site;
  s.convert(x, n);
  const uint32_t to_bytes = num::info(s.to).total_bits / 8;
  const uint32_t from_bytes = num::info(s.from).total_bits / 8;
  void* result = x.reg<std::byte>(n.reg);
  const void* source = x.reg<std::byte>(s.producer_reg);
  const uint32_t wg_lanes = x.program().wg_lanes;
  for_active(x.mask(), [&](uint32_t lane) {
    ExactValue v;
    ModelResults m;
    if (s.terms.empty()) {
      v = exact_value_mpfr(x, s, lane);
      if (s.shadow)
        m = model_results_mpfr(x, s, lane);
    } else {
      const LaneExact e = fast_lane(x, s, lane, s.shadow);
      v = e.v;
      m = e.m;
    }
    const uint64_t two_step = get_slot(result, to_bytes, lane);
    const uint64_t single = num::from_double(s.to, v.odd, s.rounding, s.overflow);
    if (s.single)
      set_slot(result, to_bytes, lane, single);
    if (!s.shadow)
      return;
    ShadowRecord& r = x.shadow().emplace_back(); // built in place: no 112-byte copy per lane
    r.models[static_cast<size_t>(RoundingModel::TwoStep)] = static_cast<uint32_t>(two_step);
    r.models[static_cast<size_t>(RoundingModel::FusedF32)] = static_cast<uint32_t>(m.fused_f32);
    r.models[static_cast<size_t>(RoundingModel::Single)] = static_cast<uint32_t>(single);
    r.models[static_cast<size_t>(RoundingModel::FusedMul)] = static_cast<uint32_t>(m.fused_mul);
    r.site = n.id;
    r.workgroup = x.workgroup_of(lane);
    r.lane = x.local_of(lane);
    r.global_lane = r.workgroup * wg_lanes + r.lane;
    r.source_bits = get_slot(source, from_bytes, lane);
    r.result_bits = get_slot(result, to_bytes, lane);
    r.exact_hi = v.hi;
    r.exact_lo = v.lo;
    r.product_sum = v.product_sum;
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
