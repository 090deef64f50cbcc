#include "rewrite.hpp"

namespace halfway::pipeline::rewrite {

std::string Target::fresh(const std::string& base) {
  std::string name = base;
  for (int n = 2; names.contains(name); ++n)
    name = base + "_" + std::to_string(n);
  names.insert(name);
  return name;
}

uint32_t Target::add_local(const std::string& base, ir::ScalarType type) {
  kernel.locals.push_back({fresh(base), type});
  return static_cast<uint32_t>(kernel.locals.size() - 1);
}

uint32_t Target::add_param(ir::Param p) {
  p.name = fresh(p.name);
  kernel.params.push_back(std::move(p));
  return static_cast<uint32_t>(kernel.params.size() - 1);
}

Copy::Copy(const ir::Kernel& source, Target& target)
    : src(source), dst(target), params(source.params.size(), ir::kNone) {}

void Copy::add_locals() {
  for (const ir::Local& l : src.locals)
    locals.push_back(dst.add_local(l.name, l.type));
}

ir::ExprId Copy::expr(ir::ExprId e) {
  if (auto it = memo_.find(e); it != memo_.end())
    return it->second;
  ir::Expr x = src.expr(e);
  const bool buffer_ref =
      (x.op == ir::Op::Load || x.op == ir::Op::BufferLen) && x.space == ir::Space::Buffer;
  if (buffer_ref && x.ref == t && x.op == ir::Op::Load) {
    x = ir::Expr{ir::Op::LocalGet, x.type};
    x.ref = t_local;
  } else if (buffer_ref && x.ref == t) {
    x = ir::Expr{ir::Op::Const, ir::ScalarType::U32};
    x.imm = t_size;
  } else if (x.op == ir::Op::GlobalId && x.imm == 0 && index_local != ir::kNone) {
    x = ir::Expr{ir::Op::LocalGet, ir::ScalarType::U32};
    x.ref = index_local;
  } else {
    if (buffer_ref || x.op == ir::Op::ParamGet)
      x.ref = params[x.ref];
    else if (x.op == ir::Op::LocalGet)
      x.ref = locals[x.ref];
    for (uint8_t a = 0; a < x.nargs; ++a)
      x.args[a] = expr(x.args[a]);
  }
  x.line = 0;
  ir::ExprId out = dst.kernel.add(x);
  memo_.emplace(e, out);
  return out;
}

ir::Body Copy::block(const ir::Body& in) {
  ir::Body out;
  for (const ir::Stmt& s : in) {
    if ((s.kind == ir::StmtKind::Store || s.kind == ir::StmtKind::Atomic) &&
        s.space == ir::Space::Buffer && s.mem == t) {
      on_t_store(s, out);
      continue;
    }
    ir::Stmt c;
    c.kind = s.kind;
    c.space = s.space;
    c.atomic = s.atomic;
    c.local = s.local == ir::kNone ? ir::kNone : locals[s.local];
    c.mem = s.mem == ir::kNone || s.space != ir::Space::Buffer ? s.mem : params[s.mem];
    for (auto [from, to] : {std::pair{s.a, &c.a}, {s.b, &c.b}, {s.c, &c.c}, {s.d, &c.d}})
      *to = from == ir::kNone ? ir::kNone : expr(from);
    c.body = block(s.body);
    c.else_body = block(s.else_body);
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace halfway::pipeline::rewrite
