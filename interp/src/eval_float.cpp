// Float arithmetic and math nodes.
//
// f32 and f64 +, -, *, /, fma, sqrt, min, max and clamp run as plain loops over every lane of the
// batch (inactive lanes compute garbage nobody reads) on the host's IEEE instructions, with NaN
// results made canonical. f16 and bf16 +, -, *, / and sqrt widen the batch exactly to f32, run
// the f32 loop and round the results once back (numerics' bulk f16 conversions use F16C where the
// build has it): the same values numerics computes, since these ops are correctly rounded through
// f32 (Figueroa, arith.hpp). Their min, max and clamp return an operand (or the canonical NaN),
// and compare the bits instead.
// Everything else, and every op of a format the float controls flush, goes through numerics one
// active lane at a time.
#include "exec.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/arith.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/fast_math.hpp"
#include "halfway/numerics/float_controls.hpp"
#include "halfway/numerics/math.hpp"
#include "halfway/numerics/nearest.hpp"
#include "slots.hpp"

#include <bit>
#include <cmath>
#include <type_traits>

namespace halfway::interp {

namespace {

// The ops of the dense paths on one lane; lanes() makes their NaN results canonical. Unary and
// binary ops ignore the operands they do not have.
struct Add {
  template <class T> static T f(T a, T b, T) { return a + b; }
};
struct Sub {
  template <class T> static T f(T a, T b, T) { return a - b; }
};
struct Mul {
  template <class T> static T f(T a, T b, T) { return a * b; }
};
struct Div {
  template <class T> static T f(T a, T b, T) { return a / b; }
};
struct Fma {
  template <class T> static T f(T a, T b, T c) { return std::fma(a, b, c); }
};
struct Sqrt {
  template <class T> static T f(T a, T, T) { return std::sqrt(a); }
};

// minNum and maxNum as numerics defines them (arith.hpp): a NaN operand is ignored, two give the
// canonical NaN, -0 < +0. Equal operands are the same bits except for zeros of opposite signs,
// where the or (min) or the and (max) of the bits picks -0 or +0. Branch-free, so that it
// vectorises.
template <class T, bool Max> T min_max(T a, T b) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const U ua = std::bit_cast<U>(a), ub = std::bit_cast<U>(b);
  const T equal = std::bit_cast<T>(Max ? ua & ub : ua | ub);
  const T ordered = (Max ? a > b : a < b) ? a : (Max ? b > a : b < a) ? b : equal;
  return a != a ? b : b != b ? a : ordered; // two NaNs: b, made canonical by lanes()
}
struct Min {
  template <class T> static T f(T a, T b, T) { return min_max<T, false>(a, b); }
};
struct Max {
  template <class T> static T f(T a, T b, T) { return min_max<T, true>(a, b); }
};
// min(max(x, lo), hi), as numerics' clamp.
struct Clamp {
  template <class T> static T f(T a, T lo, T hi) {
    return min_max<T, false>(canonical(min_max<T, true>(a, lo)), hi);
  }
};

template <class Op, class T>
void lanes(const T* a, const T* b, const T* c, T* __restrict r, uint32_t w) {
  for (uint32_t i = 0; i < w; ++i)
    r[i] = canonical(Op::f(a[i], b[i], c[i]));
}

// An f32 or f64 op over every lane of the batch.
template <class Op, class T> void dense(Exec& x, const Node& n) {
  const T* a = x.reg<T>(n.arg[0]);
  const T* b = n.nargs > 1 ? x.reg<T>(n.arg[1]) : a;
  const T* c = n.nargs > 2 ? x.reg<T>(n.arg[2]) : a;
  lanes<Op>(a, b, c, x.reg<T>(n.reg), x.width());
}

// Sign-bit operations, exact on every format and never flushed: U is the storage type.
template <class U> constexpr U sign_of() {
  return static_cast<U>(U{1} << (sizeof(U) * 8 - 1));
}
template <class U> void neg(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = a[i] ^ sign_of<U>();
}
template <class U> void abs(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = a[i] & static_cast<U>(~sign_of<U>());
}
template <class U> void copysign(Exec& x, const Node& n) {
  const U* a = x.reg<U>(n.arg[0]);
  const U* b = x.reg<U>(n.arg[1]);
  U* __restrict r = x.reg<U>(n.reg);
  for (uint32_t i = 0, w = x.width(); i < w; ++i)
    r[i] = (a[i] & static_cast<U>(~sign_of<U>())) | (b[i] & sign_of<U>());
}

// ---- f16 and bf16 through f32 ------------------------------------------------------------------

// Exact widening of a batch of f16 (F16C where available) or bf16 (the bits shifted up) lanes.
template <ir::ScalarType T> void widen(const uint16_t* in, float* out, uint32_t n) {
  if constexpr (T == ir::ScalarType::F16) {
    num::f16_to_f32_array(in, out, n);
  } else {
    for (uint32_t i = 0; i < n; ++i)
      out[i] = std::bit_cast<float>(uint32_t{in[i]} << 16);
  }
}

// Rounds f32 lanes once to f16 or bf16 (nearest even; a NaN gives the target's quiet NaN with the
// same sign, as numerics' conversions do).
template <ir::ScalarType T> void narrow(const float* in, uint16_t* out, uint32_t n) {
  if constexpr (T == ir::ScalarType::F16) {
    num::f32_to_f16_array(in, out, n);
  } else {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t b = std::bit_cast<uint32_t>(in[i]);
      const uint32_t rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16; // no carry past inf
      const uint32_t nan = ((b >> 16) & 0x8000u) | 0x7fc0u;
      out[i] = static_cast<uint16_t>(in[i] != in[i] ? nan : rounded);
    }
  }
}

// The f32 loop of Op on the exactly widened operands, then one rounding per lane: numerics'
// result, as the comment at the top says. The f32 results are canonical, so NaNs narrow to the
// canonical f16 or bf16 NaN.
// A constant operand was widened once per launch (Exec::fixed_wide), and an operand that repeats
// an earlier one (x * x) is widened once.
template <ir::ScalarType T, class Op> void via_f32(Exec& x, const Node& n) {
  const uint32_t w = x.width();
  const float* in[3] = {};
  for (uint32_t k = 0; k < n.nargs && k < 3; ++k) {
    if (const float* fixed = x.fixed_wide(n.arg[k])) {
      in[k] = fixed;
    } else if (k > 0 && n.arg[k] == n.arg[k - 1]) {
      in[k] = in[k - 1];
    } else {
      widen<T>(x.reg<uint16_t>(n.arg[k]), x.wide(k), w);
      in[k] = x.wide(k);
    }
  }
  lanes<Op>(in[0], n.nargs > 1 ? in[1] : in[0], n.nargs > 2 ? in[2] : in[0], x.wide(3), w);
  narrow<T>(x.wide(3), x.reg<uint16_t>(n.reg), w);
}

// min, max and clamp of f16 and bf16 on the bits: the result is one operand exactly (widening is
// exact and so is narrowing it back) or, for two NaNs, the canonical NaN, so the widening and the
// rounding of via_f32 (two F16C conversions per lane) are not needed. Operands compare as
// integers ordered like their values, -0 below +0 (min_max's semantics); equal keys are equal
// bits. Branch-free, so that it vectorises.
template <ir::ScalarType T, bool Max> inline uint16_t bits_min_max(uint16_t a, uint16_t b) {
  constexpr uint16_t kExp = T == ir::ScalarType::F16 ? 0x7c00 : 0x7f80;
  constexpr uint16_t kNan = T == ir::ScalarType::F16 ? 0x7e00 : 0x7fc0; // canonical
  auto key = [](uint16_t u) {
    const int32_t m = u & 0x7fff;
    return (u & 0x8000) ? -m - 1 : m;
  };
  const bool a_nan = (a & 0x7fff) > kExp, b_nan = (b & 0x7fff) > kExp;
  const int32_t ka = key(a), kb = key(b);
  const uint16_t ordered = (Max ? ka >= kb : ka <= kb) ? a : b;
  return a_nan ? (b_nan ? kNan : b) : b_nan ? a : ordered;
}

template <ir::ScalarType T, ir::Op O> void bits_lanes(Exec& x, const Node& n) {
  const uint16_t* a = x.reg<uint16_t>(n.arg[0]);
  const uint16_t* b = x.reg<uint16_t>(n.arg[1]);
  uint16_t* __restrict r = x.reg<uint16_t>(n.reg);
  const uint32_t w = x.width();
  if constexpr (O == ir::Op::Clamp) {
    const uint16_t* hi = x.reg<uint16_t>(n.arg[2]);
    for (uint32_t i = 0; i < w; ++i)
      r[i] = bits_min_max<T, false>(bits_min_max<T, true>(a[i], b[i]), hi[i]);
  } else {
    for (uint32_t i = 0; i < w; ++i)
      r[i] = bits_min_max<T, O == ir::Op::Max>(a[i], b[i]);
  }
}

// The f16/bf16 evaluator of min, max or clamp; nullptr for f32 and f64 (dense_of decides).
template <ir::Op O, class T> EvalFn bits_of() {
  if constexpr (std::is_floating_point_v<T>)
    return nullptr;
  else
    return bits_lanes<T::value, O>;
}

// ---- exp and exp2 over the batch ----------------------------------------------------------------

// The fast path of numerics/fast_math.hpp on every lane of the batch, without branches so that
// the loop vectorises: the evaluation in double, then its rounding test. A lane the test does not
// decide (near a rounding boundary of the format: about 2^-24 of f32 inputs) is marked with a
// pattern no result has (a NaN that is not the canonical one) and then gets num::math's result,
// which decides it the general way. Bit for bit num::math: the decided lanes are correctly rounded
// by the test's proof, NaN, the ranges beyond fast::range and the undecided lanes are its own.
template <num::MathFn Fn, ir::ScalarType T> void exp_batch(Exec& x, const Node& n) {
  using U = std::conditional_t<T == ir::ScalarType::F32, uint32_t, uint16_t>;
  constexpr num::Format f = T == ir::ScalarType::F32   ? num::Format::F32
                            : T == ir::ScalarType::F16 ? num::Format::F16
                                                       : num::Format::BF16;
  constexpr num::fast::Range range = num::fast::range(Fn);
  constexpr U kUndecided = static_cast<U>(~U{0});
  constexpr U kNan = static_cast<U>(num::quiet_nan(f)),
              kInf = static_cast<U>(num::info(f).inf_bits);
  static_assert(kUndecided != kNan);
  const uint32_t w = x.width();
  const float* in = nullptr;
  if constexpr (T == ir::ScalarType::F32) {
    in = x.reg<float>(n.arg[0]);
  } else {
    widen<T>(x.reg<uint16_t>(n.arg[0]), x.wide(0), w);
    in = x.wide(0);
  }
  const double* table = num::fast::exp2_table().data();
  U* __restrict out = x.reg<U>(n.reg);
  auto narrow_one = [](double v) -> U {
    if constexpr (T == ir::ScalarType::F32)
      return std::bit_cast<uint32_t>(static_cast<float>(v)); // nearest even (default MXCSR)
    else
      return static_cast<U>(num::nearest::from_finite<f>(v));
  };
  bool undecided = false;
  for (uint32_t i = 0; i < w; ++i) {
    const double v = static_cast<double>(in[i]);
    const bool nan = v != v, zero = v<range.zero_below, inf = v> range.inf_above;
    const double y = num::fast::evaluate<Fn>(nan || zero || inf ? 0.0 : v, table);
    const double d = y * num::fast::kTestWidth;
    const U lo = narrow_one(y - d), hi = narrow_one(y + d);
    const U r = nan ? kNan : zero ? U{0} : inf ? kInf : lo == hi ? lo : kUndecided;
    undecided |= r == kUndecided;
    out[i] = r;
  }
  if (!undecided)
    return;
  const U* bits = x.reg<U>(n.arg[0]);
  for_active(x.mask(), [&](uint32_t lane) {
    if (out[lane] == kUndecided)
      out[lane] = static_cast<U>(num::math(Fn, f, bits[lane]));
  });
}

template <num::MathFn Fn> EvalFn exp_batch_of(ir::ScalarType t) {
  switch (t) {
  case ir::ScalarType::F32:
    return exp_batch<Fn, ir::ScalarType::F32>;
  case ir::ScalarType::F16:
    return exp_batch<Fn, ir::ScalarType::F16>;
  case ir::ScalarType::BF16:
    return exp_batch<Fn, ir::ScalarType::BF16>;
  default:
    return nullptr;
  }
}

// ---- the general path: numerics, one active lane at a time ------------------------------------

using Scalar = uint64_t (*)(num::Format, uint64_t, uint64_t, uint64_t);

template <num::MathFn F> uint64_t math(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::math(F, f, a, b);
}
uint64_t s_add(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::add(f, a, b);
}
uint64_t s_sub(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::sub(f, a, b);
}
uint64_t s_mul(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::mul(f, a, b);
}
uint64_t s_div(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::div(f, a, b);
}
uint64_t s_fma(num::Format f, uint64_t a, uint64_t b, uint64_t c) {
  return num::fma(f, a, b, c);
}
uint64_t s_sqrt(num::Format f, uint64_t a, uint64_t, uint64_t) {
  return num::sqrt(f, a);
}
uint64_t s_min(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::min(f, a, b);
}
uint64_t s_max(num::Format f, uint64_t a, uint64_t b, uint64_t) {
  return num::max(f, a, b);
}
uint64_t s_clamp(num::Format f, uint64_t a, uint64_t lo, uint64_t hi) {
  return num::clamp(f, a, lo, hi);
}
uint64_t s_floor(num::Format f, uint64_t a, uint64_t, uint64_t) {
  return num::floor(f, a);
}
uint64_t s_ceil(num::Format f, uint64_t a, uint64_t, uint64_t) {
  return num::ceil(f, a);
}
uint64_t s_fract(num::Format f, uint64_t a, uint64_t, uint64_t) {
  return num::fract(f, a);
}

// U: the slot storage of the node's type (all operands have it).
template <Scalar F, bool Flush, class U> void general(Exec& x, const Node& n) {
  const num::Format f = ir::format_of(n.type);
  const num::FloatControls& c = x.options().controls;
  const U* args[3] = {};
  for (int i = 0; i < n.nargs; ++i)
    args[i] = x.reg<U>(n.arg[i]);
  U* r = x.reg<U>(n.reg);
  for_active(x.mask(), [&](uint32_t lane) {
    uint64_t v[3] = {0, 0, 0};
    for (int i = 0; i < n.nargs; ++i) {
      v[i] = args[i][lane];
      if constexpr (Flush)
        v[i] = num::apply_flush(f, v[i], c);
    }
    uint64_t out = F(f, v[0], v[1], v[2]);
    if constexpr (Flush)
      out = num::apply_flush(f, out, c);
    r[lane] = static_cast<U>(out);
  });
}

template <Scalar F, bool Flush> EvalFn general_of(uint32_t bytes) {
  switch (bytes) {
  case 1:
    return general<F, Flush, uint8_t>;
  case 2:
    return general<F, Flush, uint16_t>;
  case 4:
    return general<F, Flush, uint32_t>;
  default:
    return general<F, Flush, uint64_t>;
  }
}

template <Scalar F> EvalFn general_for(bool flush, uint32_t bytes) {
  return flush ? general_of<F, true>(bytes) : general_of<F, false>(bytes);
}

// One evaluator per numerics function, generated from its list: an op whose table row names a
// function needs nothing here.
EvalFn math_eval(num::MathFn fn, bool flush, uint32_t bytes) {
  switch (fn) {
#define HALFWAY_X(f, text, arity, libm, mpfr)                                                      \
  case num::MathFn::f:                                                                             \
    return general_for<math<num::MathFn::f>>(flush, bytes);
    HALFWAY_MATH_FNS(HALFWAY_X)
#undef HALFWAY_X
  }
  return nullptr;
}

EvalFn general_eval(ir::Op op, bool flush, uint32_t bytes) {
  if (std::optional<num::MathFn> fn = ir::math_fn(op))
    return math_eval(*fn, flush, bytes);
  switch (op) {
#define HALFWAY_CASE(o, fn)                                                                        \
  case ir::Op::o:                                                                                  \
    return general_for<fn>(flush, bytes);
    HALFWAY_CASE(Add, s_add)
    HALFWAY_CASE(Sub, s_sub)
    HALFWAY_CASE(Mul, s_mul)
    HALFWAY_CASE(Div, s_div)
    HALFWAY_CASE(Fma, s_fma)
    HALFWAY_CASE(Sqrt, s_sqrt)
    HALFWAY_CASE(Min, s_min)
    HALFWAY_CASE(Max, s_max)
    HALFWAY_CASE(Clamp, s_clamp)
    HALFWAY_CASE(Floor, s_floor)
    HALFWAY_CASE(Ceil, s_ceil)
    HALFWAY_CASE(Fract, s_fract)
#undef HALFWAY_CASE
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
  case ir::Op::Rem:
  case ir::Op::Neg:
  case ir::Op::Abs:
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
    return nullptr;
  }
  ir::invalid_op(op);
}

// The dense evaluators: T is float or double, or the f16 or bf16 ScalarType computed via f32.
template <class Op, class T> EvalFn dense_of() {
  if constexpr (std::is_floating_point_v<T>)
    return dense<Op, T>;
  else
    return via_f32<T::value, Op>;
}

template <class T> EvalFn fast_eval(ir::Op op) {
  // fma of f16 and bf16 is outside Figueroa's theorem (arith.hpp): numerics computes it.
  constexpr bool narrow = !std::is_floating_point_v<T>;
  switch (op) {
  case ir::Op::Add:
    return dense_of<Add, T>();
  case ir::Op::Sub:
    return dense_of<Sub, T>();
  case ir::Op::Mul:
    return dense_of<Mul, T>();
  case ir::Op::Div:
    return dense_of<Div, T>();
  case ir::Op::Fma:
    if constexpr (narrow)
      return nullptr;
    else
      return dense_of<Fma, T>();
  case ir::Op::Min:
    if constexpr (narrow)
      return bits_of<ir::Op::Min, T>();
    else
      return dense_of<Min, T>();
  case ir::Op::Max:
    if constexpr (narrow)
      return bits_of<ir::Op::Max, T>();
    else
      return dense_of<Max, T>();
  case ir::Op::Clamp:
    if constexpr (narrow)
      return bits_of<ir::Op::Clamp, T>();
    else
      return dense_of<Clamp, T>();
  case ir::Op::Sqrt:
    return dense_of<Sqrt, T>();
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
  case ir::Op::Rem:
  case ir::Op::Neg:
  case ir::Op::Abs:
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
    return nullptr;
  }
  ir::invalid_op(op);
}

template <class U> EvalFn sign_eval(ir::Op op) {
  switch (op) {
  case ir::Op::Neg:
    return neg<U>;
  case ir::Op::Abs:
    return abs<U>;
  case ir::Op::Copysign:
    return copysign<U>;
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
  case ir::Op::Add:
  case ir::Op::Sub:
  case ir::Op::Mul:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Min:
  case ir::Op::Max:
  case ir::Op::Clamp:
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
    return nullptr;
  }
  ir::invalid_op(op);
}

} // namespace

EvalFn float_eval(const Program& p, const Node& n) {
  switch (slot_bytes(n.type)) {
  case 1:
    if (EvalFn f = sign_eval<uint8_t>(n.op))
      return f;
    break;
  case 2:
    if (EvalFn f = sign_eval<uint16_t>(n.op))
      return f;
    break;
  case 4:
    if (EvalFn f = sign_eval<uint32_t>(n.op))
      return f;
    break;
  default:
    if (EvalFn f = sign_eval<uint64_t>(n.op))
      return f;
    break;
  }
  const bool flush = num::flushes(ir::format_of(n.type), p.options.controls);
  if (!flush && n.op == ir::Op::Exp)
    if (EvalFn f = exp_batch_of<num::MathFn::Exp>(n.type))
      return f;
  if (!flush && n.op == ir::Op::Exp2)
    if (EvalFn f = exp_batch_of<num::MathFn::Exp2>(n.type))
      return f;
  if (!flush && n.type == ir::ScalarType::F32)
    if (EvalFn f = fast_eval<float>(n.op))
      return f;
  if (!flush && n.type == ir::ScalarType::F64)
    if (EvalFn f = fast_eval<double>(n.op))
      return f;
  using F16 = std::integral_constant<ir::ScalarType, ir::ScalarType::F16>;
  using BF16 = std::integral_constant<ir::ScalarType, ir::ScalarType::BF16>;
  if (!flush && n.type == ir::ScalarType::F16)
    if (EvalFn f = fast_eval<F16>(n.op))
      return f;
  if (!flush && n.type == ir::ScalarType::BF16)
    if (EvalFn f = fast_eval<BF16>(n.op))
      return f;
  return general_eval(n.op, flush, slot_bytes(n.type));
}

} // namespace halfway::interp
