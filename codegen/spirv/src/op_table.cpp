#include "op_table.hpp"

#include <iterator>
#include <spirv/unified1/GLSL.std.450.h>

namespace halfway::codegen::spirv {

namespace {

using O = spv::Op;
constexpr Impl core(O op) {
  return {ImplKind::Core, static_cast<uint32_t>(op)};
}
constexpr Impl glsl(GLSLstd450 inst) {
  return {ImplKind::Glsl, static_cast<uint32_t>(inst)};
}
constexpr Impl special(Special s) {
  return {ImplKind::Special, static_cast<uint32_t>(s)};
}
constexpr Impl none() {
  return {};
}

constexpr SpirvRow leaf(ir::Op op) {
  Impl l = special(Special::Leaf);
  return {op, l, l, l, l};
}
constexpr SpirvRow all(ir::Op op, Impl i) {
  return {op, i, i, i, i};
}
// Float arithmetic that contracts: float / signed / unsigned forms.
constexpr SpirvRow arith(ir::Op op, O f, O s, O u) {
  return {op, core(f), core(s), core(u), none(), true};
}
constexpr SpirvRow int_op(ir::Op op, Impl s, Impl u, Impl b = none()) {
  return {op, none(), s, u, b};
}
constexpr SpirvRow math(ir::Op op, GLSLstd450 inst, bool f16_f32_only) {
  return {op, glsl(inst), none(), none(), none(), false, f16_f32_only};
}
constexpr SpirvRow compare(ir::Op op, O f, O s, O u, O b = O::OpNop) {
  return {op, core(f), core(s), core(u), b == O::OpNop ? none() : core(b)};
}

using enum ir::Op;
constexpr SpirvRow kRows[] = {
    leaf(Const),
    leaf(LocalGet),
    leaf(ParamGet),
    leaf(GlobalId),
    leaf(LocalId),
    leaf(GroupId),
    leaf(GroupSize),
    leaf(NumGroups),
    leaf(BufferLen),
    leaf(Load),
    all(Convert, special(Special::Convert)),
    all(Bitcast, special(Special::Bitcast)),
    all(Pack, special(Special::Pack)),
    all(Unpack, special(Special::Unpack)),
    arith(Add, O::OpFAdd, O::OpIAdd, O::OpIAdd),
    arith(Sub, O::OpFSub, O::OpISub, O::OpISub),
    arith(Mul, O::OpFMul, O::OpIMul, O::OpIMul),
    arith(Div, O::OpFDiv, O::OpSDiv, O::OpUDiv),
    int_op(Rem, core(O::OpSRem), core(O::OpUMod)),
    arith(Neg, O::OpFNegate, O::OpSNegate, O::OpSNegate),
    {Abs, glsl(GLSLstd450FAbs), glsl(GLSLstd450SAbs), special(Special::Identity), none()},
    {Min, special(Special::FloatMin), glsl(GLSLstd450SMin), glsl(GLSLstd450UMin), none()},
    {Max, special(Special::FloatMax), glsl(GLSLstd450SMax), glsl(GLSLstd450UMax), none()},
    all(Clamp, special(Special::Clamp)),
    {Fma, glsl(GLSLstd450Fma), none(), none(), none(), false, false, true},
    math(Sqrt, GLSLstd450Sqrt, false),
    math(Rsqrt, GLSLstd450InverseSqrt, false),
    math(Exp, GLSLstd450Exp, true),
    math(Exp2, GLSLstd450Exp2, true),
    math(Log, GLSLstd450Log, true),
    math(Log2, GLSLstd450Log2, true),
    math(Sin, GLSLstd450Sin, true),
    math(Cos, GLSLstd450Cos, true),
    math(Tan, GLSLstd450Tan, true),
    math(Tanh, GLSLstd450Tanh, true),
    math(Pow, GLSLstd450Pow, true),
    {Erf, special(Special::Erf), none(), none(), none()},
    math(Atan2, GLSLstd450Atan2, true),
    math(Atan, GLSLstd450Atan, true),
    math(Floor, GLSLstd450Floor, false),
    math(Ceil, GLSLstd450Ceil, false),
    math(Fract, GLSLstd450Fract, false),
    {Copysign, special(Special::Copysign), none(), none(), none()},
    compare(Eq, O::OpFOrdEqual, O::OpIEqual, O::OpIEqual, O::OpLogicalEqual),
    compare(Ne, O::OpFUnordNotEqual, O::OpINotEqual, O::OpINotEqual, O::OpLogicalNotEqual),
    compare(Lt, O::OpFOrdLessThan, O::OpSLessThan, O::OpULessThan),
    compare(Le, O::OpFOrdLessThanEqual, O::OpSLessThanEqual, O::OpULessThanEqual),
    compare(Gt, O::OpFOrdGreaterThan, O::OpSGreaterThan, O::OpUGreaterThan),
    compare(Ge, O::OpFOrdGreaterThanEqual, O::OpSGreaterThanEqual, O::OpUGreaterThanEqual),
    int_op(And, core(O::OpBitwiseAnd), core(O::OpBitwiseAnd), core(O::OpLogicalAnd)),
    int_op(Or, core(O::OpBitwiseOr), core(O::OpBitwiseOr), core(O::OpLogicalOr)),
    int_op(Xor, core(O::OpBitwiseXor), core(O::OpBitwiseXor), core(O::OpLogicalNotEqual)),
    int_op(Not, core(O::OpNot), core(O::OpNot), core(O::OpLogicalNot)),
    int_op(Shl, core(O::OpShiftLeftLogical), core(O::OpShiftLeftLogical)),
    int_op(Shr, core(O::OpShiftRightArithmetic), core(O::OpShiftRightLogical)),
    all(Select, special(Special::Select)),
};

static_assert(std::size(kRows) == ir::kOpCount, "one SPIR-V row per IR op");
constexpr bool rows_in_op_order() {
  for (size_t i = 0; i < std::size(kRows); ++i)
    if (static_cast<size_t>(kRows[i].op) != i)
      return false;
  return true;
}
static_assert(rows_in_op_order(), "SPIR-V rows must follow the IR op table's order");

} // namespace

const SpirvRow& spirv_row(ir::Op op) {
  return kRows[static_cast<size_t>(op)];
}

} // namespace halfway::codegen::spirv
