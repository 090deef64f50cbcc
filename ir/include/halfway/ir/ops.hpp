#pragma once
// The one table of op semantics. Every expression node is one of these ops. The verifier reads its
// type rule, the narrowing analysis reads which ops round and which Figueroa's theorem covers,
// the interpreter and both backends dispatch on the op, and the docs print the device precision.
// Adding an op is one line here plus the cases the compiler then asks for.

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

#define HALFWAY_OPS(X)                                                                             \
  /* op, text, arity, rule, rounds, figueroa, device ulp (f32), device precision */                \
  X(Const, "const", 0, Leaf, false, false, 0, "exact")                                             \
  X(LocalGet, "local", 0, Leaf, false, false, 0, "exact")                                          \
  X(ParamGet, "param", 0, Leaf, false, false, 0, "exact")                                          \
  X(GlobalId, "global_id", 0, Leaf, false, false, 0, "exact")                                      \
  X(LocalId, "local_id", 0, Leaf, false, false, 0, "exact")                                        \
  X(GroupId, "group_id", 0, Leaf, false, false, 0, "exact")                                        \
  X(GroupSize, "group_size", 0, Leaf, false, false, 0, "exact")                                    \
  X(NumGroups, "num_groups", 0, Leaf, false, false, 0, "exact")                                    \
  X(BufferLen, "len", 0, Leaf, false, false, 0, "exact")                                           \
  X(Load, "load", 1, Leaf, false, false, 0, "exact")                                               \
  X(Convert, "convert", 1, Convert, true, false, 0,                                                \
    "correctly rounded with the node's rounding mode (RoundingModeRTE/RTZ float controls)")        \
  X(Bitcast, "bitcast", 1, Bitcast, false, false, 0, "exact")                                      \
  X(Pack, "pack", -1, Pack, false, false, 0, "exact")                                              \
  X(Unpack, "unpack", 1, Unpack, false, false, 0, "exact")                                         \
  X(Add, "add", 2, Numeric, true, true, 0, "correctly rounded")                                    \
  X(Sub, "sub", 2, Numeric, true, true, 0, "correctly rounded")                                    \
  X(Mul, "mul", 2, Numeric, true, true, 0, "correctly rounded")                                    \
  X(Div, "div", 2, Numeric, true, true, 2.5, "2.5 ulp for |y| in [2^-126, 2^126]")                 \
  X(Rem, "rem", 2, Int, false, false, 0, "exact (integers only)")                                  \
  X(Neg, "neg", 1, Numeric, false, false, 0, "exact")                                              \
  X(Abs, "abs", 1, Numeric, false, false, 0, "exact")                                              \
  X(Min, "min", 2, Numeric, false, false, 0, "exact")                                              \
  X(Max, "max", 2, Numeric, false, false, 0, "exact")                                              \
  X(Fma, "fma", 3, Float, true, false, 0,                                                          \
    "inherited from OpFMul followed by OpFAdd: a device may round twice")                          \
  X(Sqrt, "sqrt", 1, Float, true, true, 3, "inherited from 1.0 / inversesqrt(x)")                  \
  X(Rsqrt, "rsqrt", 1, Float, true, false, 2, "2 ulp")                                             \
  X(Exp, "exp", 1, Float, true, false, 3, "3 + 2*|x| ulp")                                         \
  X(Exp2, "exp2", 1, Float, true, false, 3, "3 + 2*|x| ulp")                                       \
  X(Log, "log", 1, Float, true, false, 3, "3 ulp outside [0.5, 2]; absolute 2^-21 inside")         \
  X(Log2, "log2", 1, Float, true, false, 3, "3 ulp outside [0.5, 2]; absolute 2^-21 inside")       \
  X(Sin, "sin", 1, Float, true, false, 0, "absolute 2^-11 inside [-pi, pi]")                       \
  X(Cos, "cos", 1, Float, true, false, 0, "absolute 2^-11 inside [-pi, pi]")                       \
  X(Tan, "tan", 1, Float, true, false, 0, "inherited from sin(x) / cos(x)")                        \
  X(Tanh, "tanh", 1, Float, true, false, 0, "inherited from its exp definition")                   \
  X(Pow, "pow", 2, Float, true, false, 0, "inherited from exp2(y * log2(x))")                      \
  X(Erf, "erf", 1, Float, true, false, 4,                                                          \
    "no GLSL.std.450 instruction: backend polynomial, 4 ulp")                                      \
  X(Atan2, "atan2", 2, Float, true, false, 4096, "4096 ulp")                                       \
  X(Floor, "floor", 1, Float, false, false, 0, "exact")                                            \
  X(Ceil, "ceil", 1, Float, false, false, 0, "exact")                                              \
  X(Fract, "fract", 1, Float, true, false, 0, "inherited from x - floor(x)")                       \
  X(Copysign, "copysign", 2, Float, false, false, 0, "exact")                                      \
  X(Eq, "eq", 2, Compare, false, false, 0, "exact")                                                \
  X(Ne, "ne", 2, Compare, false, false, 0, "exact")                                                \
  X(Lt, "lt", 2, Compare, false, false, 0, "exact")                                                \
  X(Le, "le", 2, Compare, false, false, 0, "exact")                                                \
  X(Gt, "gt", 2, Compare, false, false, 0, "exact")                                                \
  X(Ge, "ge", 2, Compare, false, false, 0, "exact")                                                \
  X(And, "and", 2, Bitwise, false, false, 0, "exact")                                              \
  X(Or, "or", 2, Bitwise, false, false, 0, "exact")                                                \
  X(Xor, "xor", 2, Bitwise, false, false, 0, "exact")                                              \
  X(Not, "not", 1, Bitwise, false, false, 0, "exact")                                              \
  X(Shl, "shl", 2, Shift, false, false, 0, "exact")                                                \
  X(Shr, "shr", 2, Shift, false, false, 0, "exact (arithmetic for signed types)")                  \
  X(Select, "select", 3, Select, false, false, 0, "exact")

enum class Op : uint8_t {
#define HALFWAY_X(op, text, arity, rule, rounds, figueroa, ulp, precision) op,
  HALFWAY_OPS(HALFWAY_X)
#undef HALFWAY_X
};

struct OpInfo {
  std::string_view name;
  int arity; // -1: variable (pack takes 2 or 4)
  TypeRule rule;
  // The float result is a rounding of an exact value (the narrowing analysis's "rounding op").
  bool rounds;
  // One such op of operands exact in a p-bit format, computed in q >= 2p+2 bits and rounded to p
  // bits, equals the op rounded once to p bits (Figueroa 1995): add, sub, mul, div, sqrt.
  bool figueroa;
  // The f32 error bound Vulkan allows a device, in ulps (0: exact or see the text).
  double device_ulp;
  std::string_view device_precision;
};

const OpInfo& info(Op op);
inline std::string_view name(Op op) {
  return info(op).name;
}
std::optional<Op> parse_op(std::string_view text);
inline constexpr size_t kOpCount = 0
#define HALFWAY_X(op, text, arity, rule, rounds, figueroa, ulp, precision) +1
    HALFWAY_OPS(HALFWAY_X)
#undef HALFWAY_X
    ;

// Ops that read a builtin lane or group coordinate: their immediate is the dimension (0, 1, 2).
inline bool is_builtin(Op op) {
  return op >= Op::GlobalId && op <= Op::NumGroups;
}

// Atomic read-modify-write operations (statements, on u32/i32/u64/i64 elements).
enum class AtomicOp : uint8_t { Add, Sub, Min, Max, And, Or, Xor, Exchange, CompareExchange };
std::string_view name(AtomicOp op);
std::optional<AtomicOp> parse_atomic(std::string_view text);

} // namespace halfway::ir
