#pragma once
// The one table of op semantics. Every expression node is one of these ops. The verifier reads its
// type rule, the narrowing analysis reads which ops round, which Figueroa's theorem covers and
// which pass exact values through, the interpreter and the LLVM backend call the numerics
// function the row names, the DSL defines a function for each row with a DSL form, the checker
// counts the rows that round, and the docs print the device precision. Adding an op is one row
// here plus the cases the compiler then asks for (switches over Op and OpFamily have no
// default, and the SPIR-V rows are checked against this table's count and order).

#include "halfway/numerics/math.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace halfway::ir {

// How an op's operand and result types relate.
enum class TypeRule : uint8_t {
  Leaf,    // no operands; the node carries its type
  Numeric, // operands and result share one arithmetic type (int or non-fp8 float)
  Float,   // operands and result share one float type (f16, bf16, f32, f64)
  Int,     // operands and result share one integer type
  Compare, // two operands of one type (arithmetic, or bool for eq/ne); result bool
  Bitwise, // operands and result share one integer type or bool
  Shift,   // operands and result share one integer type; the amount must be < the width
  Select,  // (bool, T, T) -> T
  Convert, // one operand of any non-bool type -> the node's type, with a rounding mode
  Bitcast, // one operand -> a type of the same width
  Pack,    // 2 x f16/bf16 or 4 x fp8 -> u32; the node's aux type is the element format
  Unpack,  // u32 -> element aux type, lane given by the node's immediate
};

// What kind of computation an op is; backends that lower whole families switch on this.
enum class OpFamily : uint8_t {
  Leaf,     // constants, locals, parameters, buffer lengths
  Builtin,  // a lane or group coordinate; the immediate is the dimension (0, 1, 2)
  Memory,   // loads
  Convert,  // value conversion with a rounding mode
  Bits,     // bitcast, pack, unpack: bit patterns moved, never rounded
  Arith,    // add, sub, mul, div, rem
  Sign,     // neg, abs, copysign: the sign bit only
  MinMax,   // min, max, clamp
  Fma,      // fused multiply-add
  Math,     // elementary functions: the row names the correctly rounded numerics function
  Integral, // floor, ceil, fract
  Compare,  // eq, ne, lt, le, gt, ge
  Logic,    // and, or, xor, not
  Shift,    // shl, shr
  Select,   // select
};

// The "numerics function" column of ops that are not elementary functions.
inline constexpr std::optional<num::MathFn> kNoMath{};

// What Vulkan's precision table ("Precision and Operation of SPIR-V Instructions") allows a
// device for an op's float result, as a rule and its figures for f32 and for 16-bit floats. The
// interval shadow of the interpreter (interp/src/interval.cpp, specs/device-precision.md) reads
// this column: it is the one statement of a device's math precision.
enum class PrecisionRule : uint8_t {
  Exact,            // no rounding at all (moves of bits, integer ops, min/max, floor, ...)
  CorrectlyRounded, // one rounding to nearest even (add, sub, mul, conversions)
  Ulp,              // within `ulp` ulps of the exact result
  Division,         // `ulp` ulps while |y| is in [2^-emax, 2^emax] of the format; undefined outside
  ExpUlp,           // `ulp` + 2*|x| ulps
  LogUlp,           // `ulp` ulps outside [0.5, 2], absolute 2^`abs_exp` inside; undefined x <= 0
  AbsolutePi,       // absolute 2^`abs_exp` inside [-pi, pi]; undefined outside
  Inherited,        // the precision of the op's defining formula, evaluated op by op
};

struct DevicePrecision {
  PrecisionRule rule = PrecisionRule::Exact;
  double ulp32 = 0, ulp16 = 0;      // Ulp, Division, ExpUlp, LogUlp: ulps for f32 and 16-bit floats
  int abs_exp32 = 0, abs_exp16 = 0; // LogUlp, AbsolutePi: the absolute error's exponent
  // The figure for a format of `bits` bits (16-bit floats get the 16-bit row, wider ones f32's).
  constexpr double ulp(int bits) const { return bits <= 16 ? ulp16 : ulp32; }
  constexpr int abs_exp(int bits) const { return bits <= 16 ? abs_exp16 : abs_exp32; }
};

inline constexpr DevicePrecision kExact{PrecisionRule::Exact};
inline constexpr DevicePrecision kCorrectlyRounded{PrecisionRule::CorrectlyRounded};
constexpr DevicePrecision vk_ulp(double f32, double f16) {
  return {PrecisionRule::Ulp, f32, f16};
}
constexpr DevicePrecision vk_division(double f32, double f16) {
  return {PrecisionRule::Division, f32, f16};
}
constexpr DevicePrecision vk_exp(double f32, double f16) {
  return {PrecisionRule::ExpUlp, f32, f16};
}
constexpr DevicePrecision vk_log(double f32, double f16, int abs32, int abs16) {
  return {PrecisionRule::LogUlp, f32, f16, abs32, abs16};
}
constexpr DevicePrecision vk_absolute_pi(int abs32, int abs16) {
  return {PrecisionRule::AbsolutePi, 0, 0, abs32, abs16};
}
// `f32`: the ulps the formula works out to for f32 where the table used to state one (sqrt: 3),
// for the op-table test's per-op check; 0 when the formula gives no single figure.
constexpr DevicePrecision vk_inherited(double f32) {
  return {PrecisionRule::Inherited, f32, 0};
}

// How precisely a device computes math: the interpreter and the CPU device round every op
// correctly; a Vulkan device is held to the op table's device precision column.
enum class MathProfile : uint8_t { CorrectlyRounded, Vulkan };
constexpr std::string_view name(MathProfile p) {
  return p == MathProfile::Vulkan ? "vulkan" : "correctly rounded";
}

// Columns: the op's enumerator and text; its arity and type rule; its family; `rounds`: the float
// result is a rounding of an exact value; `figueroa`: see OpInfo; `exact value`: the float result
// is exactly a function of exact operand values (sign ops, min/max, floor/ceil, select), so a
// value built from unrounded operands stays unrounded; the correctly rounded numerics function
// that the interpreter and the LLVM backend call (Math family); the DSL form (Unary, Binary,
// Ternary or None) and the DSL function's spelling; the device precision (DevicePrecision) and
// its text.
#define HALFWAY_OPS(X)                                                                             \
  /* op, text, arity, type rule, family, rounds, figueroa, exact value, numerics function,      */ \
  /* DSL form, DSL spelling, device precision rule, device precision text                      */  \
  X(Const, "const", 0, Leaf, Leaf, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(LocalGet, "local", 0, Leaf, Leaf, false, false, false, kNoMath, None, _, kExact, "exact")      \
  X(ParamGet, "param", 0, Leaf, Leaf, false, false, false, kNoMath, None, _, kExact, "exact")      \
  X(GlobalId, "global_id", 0, Leaf, Builtin, false, false, false, kNoMath, None, _, kExact,        \
    "exact")                                                                                       \
  X(LocalId, "local_id", 0, Leaf, Builtin, false, false, false, kNoMath, None, _, kExact, "exact") \
  X(GroupId, "group_id", 0, Leaf, Builtin, false, false, false, kNoMath, None, _, kExact, "exact") \
  X(GroupSize, "group_size", 0, Leaf, Builtin, false, false, false, kNoMath, None, _, kExact,      \
    "exact")                                                                                       \
  X(NumGroups, "num_groups", 0, Leaf, Builtin, false, false, false, kNoMath, None, _, kExact,      \
    "exact")                                                                                       \
  X(BufferLen, "len", 0, Leaf, Leaf, false, false, false, kNoMath, None, _, kExact, "exact")       \
  X(Load, "load", 1, Leaf, Memory, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Convert, "convert", 1, Convert, Convert, true, false, false, kNoMath, None, _,                 \
    kCorrectlyRounded,                                                                             \
    "correctly rounded with the node's rounding mode (RoundingModeRTE/RTZ float controls)")        \
  X(Bitcast, "bitcast", 1, Bitcast, Bits, false, false, false, kNoMath, None, _, kExact, "exact")  \
  X(Pack, "pack", -1, Pack, Bits, false, false, false, kNoMath, None, _, kExact, "exact")          \
  X(Unpack, "unpack", 1, Unpack, Bits, false, false, false, kNoMath, None, _, kExact, "exact")     \
  X(Add, "add", 2, Numeric, Arith, true, true, false, kNoMath, None, _, kCorrectlyRounded,         \
    "correctly rounded")                                                                           \
  X(Sub, "sub", 2, Numeric, Arith, true, true, false, kNoMath, None, _, kCorrectlyRounded,         \
    "correctly rounded")                                                                           \
  X(Mul, "mul", 2, Numeric, Arith, true, true, false, kNoMath, None, _, kCorrectlyRounded,         \
    "correctly rounded")                                                                           \
  X(Div, "div", 2, Numeric, Arith, true, true, false, kNoMath, None, _, vk_division(2.5, 2.5),     \
    "2.5 ulp for |y| in [2^-126, 2^126] (f16: [2^-14, 2^14]); undefined outside")                  \
  X(Rem, "rem", 2, Int, Arith, false, false, false, kNoMath, None, _, kExact,                      \
    "exact (integers only)")                                                                       \
  X(Neg, "neg", 1, Numeric, Sign, false, false, true, kNoMath, None, _, kExact, "exact")           \
  X(Abs, "abs", 1, Numeric, Sign, false, false, true, kNoMath, Unary, abs, kExact, "exact")        \
  X(Min, "min", 2, Numeric, MinMax, false, false, true, kNoMath, Binary, min, kExact, "exact")     \
  X(Max, "max", 2, Numeric, MinMax, false, false, true, kNoMath, Binary, max, kExact, "exact")     \
  X(Clamp, "clamp", 3, Numeric, MinMax, false, false, true, kNoMath, Ternary, clamp, kExact,       \
    "exact")                                                                                       \
  X(Fma, "fma", 3, Float, Fma, true, false, false, kNoMath, None, _, vk_inherited(0),              \
    "inherited from OpFMul followed by OpFAdd: a device may round twice")                          \
  X(Sqrt, "sqrt", 1, Float, Math, true, true, false, kNoMath, Unary, sqrt, vk_inherited(3),        \
    "inherited from 1.0 / inversesqrt(x)")                                                         \
  X(Rsqrt, "rsqrt", 1, Float, Math, true, false, false, num::MathFn::Rsqrt, Unary, rsqrt,          \
    vk_ulp(2, 2), "2 ulp")                                                                         \
  X(Exp, "exp", 1, Float, Math, true, false, false, num::MathFn::Exp, Unary, exp, vk_exp(3, 1),    \
    "3 + 2*|x| ulp (f16: 1 + 2*|x|)")                                                              \
  X(Exp2, "exp2", 1, Float, Math, true, false, false, num::MathFn::Exp2, Unary, exp2,              \
    vk_exp(3, 1), "3 + 2*|x| ulp (f16: 1 + 2*|x|)")                                                \
  X(Log, "log", 1, Float, Math, true, false, false, num::MathFn::Log, Unary, log,                  \
    vk_log(3, 3, -21, -7),                                                                         \
    "3 ulp outside [0.5, 2]; absolute 2^-21 inside (f16: 2^-7); undefined for x <= 0")             \
  X(Log2, "log2", 1, Float, Math, true, false, false, num::MathFn::Log2, Unary, log2,              \
    vk_log(3, 3, -21, -7),                                                                         \
    "3 ulp outside [0.5, 2]; absolute 2^-21 inside (f16: 2^-7); undefined for x <= 0")             \
  X(Sin, "sin", 1, Float, Math, true, false, false, num::MathFn::Sin, Unary, sin,                  \
    vk_absolute_pi(-11, -7), "absolute 2^-11 inside [-pi, pi] (f16: 2^-7); undefined outside")     \
  X(Cos, "cos", 1, Float, Math, true, false, false, num::MathFn::Cos, Unary, cos,                  \
    vk_absolute_pi(-11, -7), "absolute 2^-11 inside [-pi, pi] (f16: 2^-7); undefined outside")     \
  X(Tan, "tan", 1, Float, Math, true, false, false, num::MathFn::Tan, Unary, tan, vk_inherited(0), \
    "inherited from sin(x) / cos(x)")                                                              \
  X(Tanh, "tanh", 1, Float, Math, true, false, false, num::MathFn::Tanh, Unary, tanh,              \
    vk_inherited(0), "inherited from its exp definition")                                          \
  X(Pow, "pow", 2, Float, Math, true, false, false, num::MathFn::Pow, Binary, pow,                 \
    vk_inherited(0), "inherited from exp2(y * log2(x))")                                           \
  X(Erf, "erf", 1, Float, Math, true, false, false, num::MathFn::Erf, Unary, erf, vk_ulp(4, 4),    \
    "no GLSL.std.450 instruction: backend polynomial, 4 ulp")                                      \
  X(Atan2, "atan2", 2, Float, Math, true, false, false, num::MathFn::Atan2, Binary, atan2,         \
    vk_ulp(4096, 5), "4096 ulp (f16: 5)")                                                          \
  X(Atan, "atan", 1, Float, Math, true, false, false, num::MathFn::Atan, Unary, atan,              \
    vk_ulp(4096, 5), "4096 ulp (f16: 5)")                                                          \
  X(Floor, "floor", 1, Float, Integral, false, false, true, kNoMath, Unary, floor, kExact,         \
    "exact")                                                                                       \
  X(Ceil, "ceil", 1, Float, Integral, false, false, true, kNoMath, Unary, ceil, kExact, "exact")   \
  X(Fract, "fract", 1, Float, Integral, true, false, false, kNoMath, Unary, fract,                 \
    vk_inherited(0), "inherited from x - floor(x)")                                                \
  X(Copysign, "copysign", 2, Float, Sign, false, false, true, kNoMath, Binary, copysign, kExact,   \
    "exact")                                                                                       \
  X(Eq, "eq", 2, Compare, Compare, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Ne, "ne", 2, Compare, Compare, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Lt, "lt", 2, Compare, Compare, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Le, "le", 2, Compare, Compare, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Gt, "gt", 2, Compare, Compare, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Ge, "ge", 2, Compare, Compare, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(And, "and", 2, Bitwise, Logic, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Or, "or", 2, Bitwise, Logic, false, false, false, kNoMath, None, _, kExact, "exact")           \
  X(Xor, "xor", 2, Bitwise, Logic, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Not, "not", 1, Bitwise, Logic, false, false, false, kNoMath, None, _, kExact, "exact")         \
  X(Shl, "shl", 2, Shift, Shift, false, false, false, kNoMath, None, _, kExact, "exact")           \
  X(Shr, "shr", 2, Shift, Shift, false, false, false, kNoMath, None, _, kExact,                    \
    "exact (arithmetic for signed types)")                                                         \
  X(Select, "select", 3, Select, Select, false, false, true, kNoMath, None, _, kExact, "exact")

enum class Op : uint8_t {
#define HALFWAY_X(op, text, arity, rule, family, rounds, figueroa, exact, math, dsl, spelling,     \
                  ulp, precision)                                                                  \
  op,
  HALFWAY_OPS(HALFWAY_X)
#undef HALFWAY_X
};

struct OpInfo {
  std::string_view name;
  int arity; // -1: variable (pack takes 2 or 4)
  TypeRule rule;
  OpFamily family;
  // The float result is a rounding of an exact value (the narrowing analysis's "rounding op").
  bool rounds;
  // One such op of operands exact in a p-bit format, computed in q >= 2p+2 bits and rounded to p
  // bits, equals the op rounded once to p bits (Figueroa 1995): add, sub, mul, div, sqrt.
  bool figueroa;
  // The float result is exactly a function of exact operand values (no rounding of its own).
  bool exact_value;
  // The correctly rounded elementary function of the Math family's ops.
  std::optional<num::MathFn> math;
  // The f32 error bound Vulkan allows a device, in ulps (0: exact or see the text): device.ulp32.
  double device_ulp;
  std::string_view device_precision;
  // What Vulkan allows a device (the interval shadow reads it).
  DevicePrecision device;
};

const OpInfo& info(Op op);
inline std::string_view name(Op op) {
  return info(op).name;
}
std::optional<Op> parse_op(std::string_view text);
// Ends a function whose switch lists every op (no default, so that -Wswitch asks for a new op's
// case): reached only through a value outside the enumeration, a bug. Throws Internal.
[[noreturn]] void invalid_op(Op op);
inline constexpr size_t kOpCount = 0
#define HALFWAY_X(op, text, arity, rule, family, rounds, figueroa, exact, math, dsl, spelling,     \
                  ulp, precision)                                                                  \
  +1
    HALFWAY_OPS(HALFWAY_X)
#undef HALFWAY_X
    ;

// Each op's numerics function, usable at compile time (the interpreter instantiates one evaluator
// per function).
inline constexpr std::optional<num::MathFn> kOpMath[] = {
#define HALFWAY_X(op, text, arity, rule, family, rounds, figueroa, exact, math, dsl, spelling,     \
                  ulp, precision)                                                                  \
  math,
    HALFWAY_OPS(HALFWAY_X)
#undef HALFWAY_X
};
constexpr std::optional<num::MathFn> math_fn(Op op) {
  return kOpMath[static_cast<size_t>(op)];
}

// Ops that read a builtin lane or group coordinate: their immediate is the dimension (0, 1, 2).
inline bool is_builtin(Op op) {
  return info(op).family == OpFamily::Builtin;
}

// Atomic read-modify-write operations (statements, on u32/i32/u64/i64 elements).
enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Exchange, CompareExchange };
std::string_view name(AtomicOp op);
std::optional<AtomicOp> parse_atomic(std::string_view text);

} // namespace halfway::ir
