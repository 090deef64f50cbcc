// The MPFR path of exact.hpp: every op of the producer tree at the precision that makes it exact.
#include "exact.hpp"
#include "exec.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/float_controls.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <mpfr.h>
#include <vector>

namespace halfway::interp {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// MPFR values of the tree's nodes and the product accumulator, reused across calls on a thread.
class Workspace {
public:
  Workspace() {
    for (mpfr_ptr v : {acc_, sum_, tmp_})
      mpfr_init2(v, 64);
  }
  ~Workspace() {
    for (auto& v : values_)
      mpfr_clear(v.v);
    for (mpfr_ptr v : {acc_, sum_, tmp_})
      mpfr_clear(v);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  mpfr_ptr at(size_t i) {
    while (values_.size() <= i) {
      values_.emplace_back();
      mpfr_init2(values_.back().v, 64);
    }
    return values_[i].v;
  }
  mpfr_ptr acc() { return acc_; }
  mpfr_ptr sum() { return sum_; }
  mpfr_ptr tmp() { return tmp_; }

private:
  struct Value {
    mpfr_t v;
  };
  std::vector<Value> values_;
  mpfr_t acc_, sum_, tmp_;
};

// r = a + b (or a - b) exactly. r must not be a or b.
void exact_add(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b, bool subtract) {
  mpfr_prec_t prec;
  if (mpfr_regular_p(a) && mpfr_regular_p(b)) {
    mpfr_exp_t high = std::max(mpfr_get_exp(a), mpfr_get_exp(b)) + 1;
    mpfr_exp_t low = std::min(mpfr_get_exp(a) - static_cast<mpfr_exp_t>(mpfr_min_prec(a)),
                              mpfr_get_exp(b) - static_cast<mpfr_exp_t>(mpfr_min_prec(b)));
    prec = static_cast<mpfr_prec_t>(high - low + 1);
  } else {
    prec = std::max(mpfr_get_prec(a), mpfr_get_prec(b));
  }
  mpfr_set_prec(r, std::max<mpfr_prec_t>(prec, MPFR_PREC_MIN));
  if (subtract)
    mpfr_sub(r, a, b, MPFR_RNDN);
  else
    mpfr_add(r, a, b, MPFR_RNDN);
}

void exact_mul(mpfr_ptr r, mpfr_srcptr a, mpfr_srcptr b) {
  mpfr_set_prec(r, mpfr_get_prec(a) + mpfr_get_prec(b));
  mpfr_mul(r, a, b, MPFR_RNDN);
}

// acc += |v|, exactly.
void accumulate(Workspace& w, mpfr_srcptr v) {
  mpfr_set_prec(w.tmp(), mpfr_get_prec(v));
  mpfr_abs(w.tmp(), v, MPFR_RNDN);
  exact_add(w.sum(), w.acc(), w.tmp(), false);
  mpfr_swap(w.sum(), w.acc());
}

// v rounded to odd into a double: truncated (DBL_MAX beyond the double range, a signed zero below
// it), the last bit forced when anything was cut off.
double odd_double(mpfr_srcptr v) {
  if (!mpfr_regular_p(v))
    return mpfr_get_d(v, MPFR_RNDN);
  double odd = mpfr_get_d(v, MPFR_RNDZ);
  if (mpfr_cmp_d(v, odd) != 0)
    odd = std::bit_cast<double>(std::bit_cast<uint64_t>(odd) | 1);
  return odd;
}

// v rounded to nearest-even into the source type (through round-to-odd, exact for every source
// narrower than double; directly for f64), flushed where the controls flush it, as a double.
double round_source(const ExactSite& s, mpfr_srcptr v, const num::FloatControls& c) {
  const double d = s.from == num::Format::F64 ? mpfr_get_d(v, MPFR_RNDN) : odd_double(v);
  return num::to_double(s.from, num::apply_flush(s.from, num::from_double(s.from, d), c));
}

// The root of the producer tree evaluated exactly, except that the nodes `rounds` marks are
// rounded into the source type; the result rounded once into the target.
uint64_t model_value(Workspace& w, Exec& x, const ExactSite& s, uint32_t lane,
                     const std::vector<uint8_t>& rounds) {
  const num::FloatControls& c = x.options().controls;
  for (size_t i = 0; i < s.tree.size(); ++i) {
    const ExactSite::TreeOp& op = s.tree[i];
    mpfr_ptr r = w.at(i + 1);
    auto arg = [&](int k) { return w.at(static_cast<size_t>(op.args[k]) + 1); };
    if (op.leaf) {
      mpfr_set_prec(r, 64);
      mpfr_set_d(r, exact_leaf(x, s, op.reg, lane), MPFR_RNDN); // exact
      continue;
    }
    switch (op.op) {
    case ir::Op::Neg:
      mpfr_set_prec(r, mpfr_get_prec(arg(0)));
      mpfr_neg(r, arg(0), MPFR_RNDN);
      break;
    case ir::Op::Add:
      exact_add(r, arg(0), arg(1), false);
      break;
    case ir::Op::Sub:
      exact_add(r, arg(0), arg(1), true);
      break;
    case ir::Op::Mul:
      exact_mul(r, arg(0), arg(1));
      break;
    case ir::Op::Fma:
      exact_mul(w.at(0), arg(0), arg(1));
      exact_add(r, w.at(0), arg(2), false);
      break;
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
      // A producer tree's inner nodes are the five ops above; every other op is a leaf.
      ir::invalid_op(op.op);
    }
    if (rounds[i] && !mpfr_nan_p(r)) {
      const double rounded = round_source(s, r, c);
      mpfr_set_prec(r, 64);
      mpfr_set_d(r, rounded, MPFR_RNDN); // exact: a value of the source type
    }
  }
  mpfr_srcptr v = w.at(s.tree.size());
  if (mpfr_nan_p(v))
    return num::from_double(s.to, kNan, s.rounding, s.overflow);
  return num::from_double(s.to, odd_double(v), s.rounding, s.overflow);
}

Workspace& workspace() {
  thread_local Workspace w;
  return w;
}

} // namespace

ModelResults model_results_mpfr(Exec& x, const ExactSite& s, uint32_t lane) {
  Workspace& w = workspace();
  return {model_value(w, x, s, lane, s.fused_f32_rounds),
          model_value(w, x, s, lane, s.fused_mul_rounds)};
}

ExactValue exact_value_mpfr(Exec& x, const ExactSite& s, uint32_t lane) {
  Workspace& w = workspace();
  mpfr_set_prec(w.acc(), 64);
  mpfr_set_zero(w.acc(), 1);
  // Slot i + 1 holds tree node i; slot 0 is scratch.
  for (size_t i = 0; i < s.tree.size(); ++i) {
    const ExactSite::TreeOp& op = s.tree[i];
    mpfr_ptr r = w.at(i + 1);
    auto arg = [&](int k) { return w.at(static_cast<size_t>(op.args[k]) + 1); };
    if (op.leaf) {
      mpfr_set_prec(r, 64);
      mpfr_set_d(r, exact_leaf(x, s, op.reg, lane), MPFR_RNDN); // exact
      continue;
    }
    switch (op.op) {
    case ir::Op::Neg:
      mpfr_set_prec(r, mpfr_get_prec(arg(0)));
      mpfr_neg(r, arg(0), MPFR_RNDN);
      break;
    case ir::Op::Add:
      exact_add(r, arg(0), arg(1), false);
      break;
    case ir::Op::Sub:
      exact_add(r, arg(0), arg(1), true);
      break;
    case ir::Op::Mul:
      exact_mul(r, arg(0), arg(1));
      accumulate(w, r);
      break;
    case ir::Op::Fma:
      exact_mul(w.at(0), arg(0), arg(1));
      accumulate(w, w.at(0));
      exact_add(r, w.at(0), arg(2), false);
      break;
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
      break;
    }
  }
  mpfr_srcptr v = w.at(s.tree.size());
  const double products = mpfr_get_d(w.acc(), MPFR_RNDN);
  if (mpfr_nan_p(v))
    return {kNan, 0, kNan, products};
  const double hi = mpfr_get_d(v, MPFR_RNDN);
  if (!mpfr_regular_p(v))
    return {hi, 0, hi, products};
  // Round to odd: truncate (DBL_MAX beyond the double range, a signed zero below it), and force
  // the last bit when anything was cut off.
  double odd = mpfr_get_d(v, MPFR_RNDZ);
  if (mpfr_cmp_d(v, odd) != 0)
    odd = std::bit_cast<double>(std::bit_cast<uint64_t>(odd) | 1);
  if (!std::isfinite(hi))
    return {hi, 0, odd, products};
  mpfr_set_prec(w.tmp(), 64);
  mpfr_set_d(w.tmp(), hi, MPFR_RNDN);
  exact_add(w.sum(), v, w.tmp(), true);
  const double lo = mpfr_get_d(w.sum(), MPFR_RNDN);
  return {hi, lo, odd, products};
}

} // namespace halfway::interp
