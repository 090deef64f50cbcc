// Chooses each node's evaluation function once, at compile time, from its op and types.
#include "halfway/ir/error.hpp"
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
  default:
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
