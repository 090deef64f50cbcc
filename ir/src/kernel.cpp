#include "halfway/ir/kernel.hpp"

namespace halfway::ir {

std::string_view name(Access a) {
  switch (a) {
  case Access::Read:
    return "read";
  case Access::Write:
    return "write";
  case Access::ReadWrite:
    return "read_write";
  }
  return "read";
}

ScalarType Kernel::element_type(Space space, uint32_t ref) const {
  return space == Space::Buffer ? params[ref].type : array(space, ref).type;
}

const std::string& Kernel::memory_name(Space space, uint32_t ref) const {
  return space == Space::Buffer ? params[ref].name : array(space, ref).name;
}

uint32_t Kernel::find_param(std::string_view n) const {
  for (uint32_t i = 0; i < params.size(); ++i)
    if (params[i].name == n)
      return i;
  return kNone;
}

std::vector<ExprId> stmt_exprs(const Stmt& s) {
  std::vector<ExprId> out;
  if (s.kind == StmtKind::Store) {
    for (ExprId e : {s.a, s.c, s.d, s.b})
      if (e != kNone)
        out.push_back(e);
    return out;
  }
  for (ExprId e : {s.a, s.b, s.c})
    if (e != kNone)
      out.push_back(e);
  return out;
}

} // namespace halfway::ir
