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
#include "halfway/numerics/nearest_avx2.hpp"
#include "slots.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <set>
#include <type_traits>

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

#if defined(__AVX2__) && defined(__F16C__)
// ---- the dense path: four lanes at a time ------------------------------------------------------
//
// For a plain f32 site rounded to nearest into f16 or bf16 with every lane of the batch
// active (the differential checker's common case), lane_exact and the three narrowings of
// record_lanes on AVX2 vectors of four doubles, with the same results bit for bit. Lanes whose
// exact value or model sums are not finite (NaN leaves, inf - inf, overflowing products) are left
// to the scalar code, as are the last n % 4 lanes.
namespace dense {

using num::avx2::finite_mask;
using num::avx2::from_f32;
using num::avx2::narrow;
using num::avx2::round_f32;
using num::avx2::round_to_odd;
using num::avx2::two_sum;

struct Term {
  const float *a = nullptr, *b = nullptr;
  __m256d negative, f32_exact, mul_exact; // all-ones masks (negative: the sign bit)
};

// Lanes [0, n - n % 4) of a plain f32 site with N terms: the columns' entries (lane k at k), and
// in `special` the lanes the scalar code must redo. `two_step` and `source` are the result and
// producer registers.
template <num::Format To, size_t N>
void lanes(const std::array<TermLanes<true>, N>& t, uint32_t n, const void* two_step,
           const float* source, const ShadowColumns::Slots& out, std::vector<uint32_t>& special) {
  std::array<Term, N> terms;
  for (size_t k = 0; k < N; ++k) {
    terms[k].a = t[k].a;
    terms[k].b = t[k].b;
    terms[k].negative = _mm256_set1_pd(t[k].negative ? -0.0 : 0.0);
    const auto all = [](bool on) { return _mm256_castsi256_pd(_mm256_set1_epi64x(on ? -1 : 0)); };
    terms[k].f32_exact = all(t[k].f32_exact);
    terms[k].mul_exact = all(t[k].mul_exact);
  }
  const __m256d abs = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffff));
  // FusedF32 contracts every product here (a*b + c): its sum is the exact one, not summed again.
  bool f32_is_exact = true;
  for (const TermLanes<true>& term : t)
    f32_is_exact = f32_is_exact && (!term.b || term.f32_exact);
  uint32_t lane = 0;
  for (; lane + 4 <= n; lane += 4) {
    __m256d exact[N], f32[N], mul[N];
    __m256d products = _mm256_setzero_pd();
    for (size_t k = 0; k < N; ++k) {
      __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(terms[k].a + lane));
      __m256d v32 = v, vmul = v;
      if (terms[k].b) {
        v = _mm256_mul_pd(v, _mm256_cvtps_pd(_mm_loadu_ps(terms[k].b + lane))); // exact
        products = _mm256_add_pd(products, _mm256_and_pd(v, abs));
        const __m256d rounded = round_f32(v);
        v32 = _mm256_blendv_pd(rounded, v, terms[k].f32_exact);
        vmul = _mm256_blendv_pd(rounded, v, terms[k].mul_exact);
      }
      exact[k] = _mm256_xor_pd(v, terms[k].negative);
      f32[k] = _mm256_xor_pd(v32, terms[k].negative);
      mul[k] = _mm256_xor_pd(vmul, terms[k].negative);
    }
    __m256d hi = exact[0], lo = _mm256_setzero_pd(), f32_sum = f32[0], mul_sum = mul[0];
    if constexpr (N == 2) {
      two_sum(exact[0], exact[1], hi, lo);
      __m256d e;
      if (!f32_is_exact) {
        two_sum(f32[0], f32[1], f32_sum, e);
        f32_sum = round_to_odd(f32_sum, e);
      }
      two_sum(mul[0], mul[1], mul_sum, e);
      mul_sum = round_to_odd(mul_sum, e);
    }
    const __m256d odd = round_to_odd(hi, lo);
    if (f32_is_exact)
      f32_sum = odd;
    const int finite = _mm256_movemask_pd(
        _mm256_and_pd(finite_mask(hi), _mm256_and_pd(finite_mask(f32_sum), finite_mask(mul_sum))));
    const __m128i fused_f32 = from_f32<To>(_mm_castps_si128(_mm256_cvtpd_ps(f32_sum)));
    const __m128i fused_mul = narrow<To>(mul_sum);
    const __m128i single = narrow<To>(odd);
    const __m128i step = _mm_cvtepu16_epi32(_mm_loadl_epi64(
        reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(two_step) + lane)));
    const auto put = [&](uint32_t* column, __m128i v) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(column + lane), v);
    };
    put(out.models[static_cast<size_t>(RoundingModel::TwoStep)], step);
    put(out.models[static_cast<size_t>(RoundingModel::FusedF32)], fused_f32);
    put(out.models[static_cast<size_t>(RoundingModel::Single)], single);
    put(out.models[static_cast<size_t>(RoundingModel::FusedMul)], fused_mul);
    _mm256_storeu_pd(out.exact_hi + lane, hi);
    _mm256_storeu_pd(out.exact_lo + lane, lo);
    _mm256_storeu_pd(out.product_sum + lane, products);
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(out.source_bits + lane),
        _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(source + lane))));
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(out.lane + lane),
        _mm_add_epi32(_mm_set1_epi32(static_cast<int>(lane)), _mm_setr_epi32(0, 1, 2, 3)));
    if (finite != 0xf)
      for (uint32_t j = 0; j < 4; ++j)
        if (!(finite >> j & 1))
          special.push_back(lane + j);
  }
  for (; lane < n; ++lane)
    special.push_back(lane);
}

} // namespace dense
#endif

// One shadow entry per active lane (shadow.hpp ShadowLanes, shadow_columns.hpp). `values(lane)`
// gives the lane's exact value and its FusedF32 and FusedMul results, `narrow` rounds into the
// target. `dense(slots, special)`, when every lane is active, may fill the entries of lanes
// 0, 1, ... itself: it returns false when it cannot, else true with the lanes it left to the
// scalar code in `special`. Before a single-rounding site's result replaces the two-step one in
// the register.
template <class Values, class Narrow, class Dense>
void record_lanes(Exec& x, const Node& n, const ExactSite& s, Values&& values, const Narrow& narrow,
                  Dense&& dense) {
  const uint32_t to_bytes = num::info(s.to).total_bits / 8;
  const uint32_t from_bytes = num::info(s.from).total_bits / 8;
  const void* result = x.reg<std::byte>(n.reg);
  const void* source = x.reg<std::byte>(s.producer_reg);
  const ShadowColumns::Slots out = x.shadow().append(n.id, s.single, x.mask().count());
  auto entry = [&](size_t k, uint32_t lane) __attribute__((always_inline)) {
    const auto [v, m] = values(lane);
    out.lane[k] = lane;
    out.source_bits[k] = get_slot(source, from_bytes, lane);
    out.models[static_cast<size_t>(RoundingModel::TwoStep)][k] =
        static_cast<uint32_t>(get_slot(result, to_bytes, lane));
    out.models[static_cast<size_t>(RoundingModel::FusedF32)][k] =
        static_cast<uint32_t>(m.fused_f32);
    out.models[static_cast<size_t>(RoundingModel::Single)][k] =
        static_cast<uint32_t>(narrow(v.odd));
    out.models[static_cast<size_t>(RoundingModel::FusedMul)][k] =
        static_cast<uint32_t>(m.fused_mul);
    out.exact_hi[k] = v.hi;
    out.exact_lo[k] = v.lo;
    out.product_sum[k] = v.product_sum;
  };
  if (x.mask().all()) {
    std::vector<uint32_t>& special = x.special_lanes();
    special.clear();
    if (dense(out, special)) {
      for (const uint32_t lane : special)
        entry(lane, lane);
      return;
    }
  }
  size_t k = 0;
  // Inlined into for_active's loops: a call per lane, its captures reloaded, cost as much as the
  // entry itself.
  for_active(
      x.mask(), [&](uint32_t lane) __attribute__((always_inline)) { entry(k++, lane); });
}

// No dense path.
struct NoDense {
  bool operator()(const ShadowColumns::Slots&, std::vector<uint32_t>&) const { return false; }
};

// The dense path (namespace dense) for a plain f32 site with these terms, where this build has it
// and the target is rounded to nearest into f16 or bf16 (an f32 target has an f64 source).
template <class Terms, class Narrow> struct DenseLanes {
  Exec& x;
  const Node& n;
  const ExactSite& s;
  const Terms& terms;
  bool operator()(const ShadowColumns::Slots& out, std::vector<uint32_t>& special) const {
#if defined(__AVX2__) && defined(__F16C__)
    if constexpr (std::is_same_v<typename Terms::value_type, TermLanes<true>>) {
      const uint32_t lanes = x.mask().size();
      const void* step = x.reg<std::byte>(n.reg);
      const float* source = x.reg<float>(s.producer_reg);
      if constexpr (std::is_same_v<Narrow, NearestNarrow<num::Format::F16>>)
        dense::lanes<num::Format::F16>(terms, lanes, step, source, out, special);
      else if constexpr (std::is_same_v<Narrow, NearestNarrow<num::Format::BF16>>)
        dense::lanes<num::Format::BF16>(terms, lanes, step, source, out, special);
      else
        return false;
      return true;
    }
#endif
    (void)out;
    (void)special;
    return false;
  }
};

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
          narrow, NoDense{});
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
            narrow,
            DenseLanes<std::decay_t<decltype(terms)>, std::decay_t<decltype(narrow)>>{x, n, s,
                                                                                      terms});
      if (s.single)
        for_active(x.mask(), [&](uint32_t lane) {
          set_slot(result, to_bytes, lane, narrow(lane_exact(s, terms, lane, false, c).v.odd));
        });
    });
  });
}

void attach_destinations(Exec& x, const CStmt& cs, size_t first) {
  const ir::Stmt& s = *cs.stmt;
  ShadowColumns& columns = x.shadow();
  for (size_t e = first; e < columns.evaluations(); ++e) {
    if (columns.site(e) != s.b)
      continue;
    const uint32_t* lanes = columns.lanes(e);
    uint64_t* index = columns.store(e, s.space, s.mem);
    const size_t count = columns.count(e);
    // A rank-1 store with a 32-bit index (`y[i] = ...`), the usual case: read straight from the
    // index register, not through element_at's per-lane lookups (as element_at, a signed index
    // is sign-extended).
    const std::array<ir::ExprId, 3> ix = ir::store_indices(s);
    if (ix[1] == ir::kNone && ir::bytes(x.program().nodes[ix[0]].type) == 4) {
      const Node& node = x.program().nodes[ix[0]];
      if (ir::info(node.type).is_signed) {
        const int32_t* r = x.reg<int32_t>(node.reg);
        for (size_t k = 0; k < count; ++k)
          index[k] = static_cast<uint64_t>(static_cast<int64_t>(r[lanes[k]]));
      } else {
        const uint32_t* r = x.reg<uint32_t>(node.reg);
        for (size_t k = 0; k < count; ++k)
          index[k] = r[lanes[k]];
      }
      continue;
    }
    for (size_t k = 0; k < count; ++k)
      index[k] = stored_element(x, s, lanes[k]);
  }
}

} // namespace halfway::interp
