// Chooses each node's evaluation function once, at compile time, from its op and types.
#include "halfway/support/error.hpp"
#include "program.hpp"

namespace halfway::interp {

EvalFn select_eval(const Program& p, const Node& n) {
  EvalFn f = nullptr;
  switch (n.op) {
  case ir::Op::Load:
    f = memory_eval(p, n);
    break;
  case ir::Op::Convert:
  case ir::Op::Bitcast:
  case ir::Op::Pack:
  case ir::Op::Unpack:
    f = convert_eval(p, n);
    break;
  case ir::Op::Eq:
  case ir::Op::Ne:
  case ir::Op::Lt:
  case ir::Op::Le:
  case ir::Op::Gt:
  case ir::Op::Ge:
  case ir::Op::Select:
    f = logic_eval(p, n);
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
  case ir::Op::Add:
  case ir::Op::Sub:
  case ir::Op::Mul:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Neg:
  case ir::Op::Abs:
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
  case ir::Op::Copysign:
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Not:
  case ir::Op::Shl:
  case ir::Op::Shr:
    f = ir::is_float(n.type) ? float_eval(p, n) : int_eval(p, n);
    break;
  }
  if (!f)
    throw Error(ErrorKind::Internal,
                "the interpreter has no implementation of " + std::string(ir::name(n.op)) + " on " +
                    std::string(ir::name(n.type)),
                {.kernel = p.kernel->name, .node = n.id});
  return f;
}

} // namespace halfway::interp
