#include "partition.hpp"

namespace halfway::codegen::llvm::detail {

bool contains_barrier(const ir::Stmt& s) {
  if (s.kind == ir::StmtKind::Barrier)
    return true;
  for (const ir::Stmt& c : s.body)
    if (contains_barrier(c))
      return true;
  for (const ir::Stmt& c : s.else_body)
    if (contains_barrier(c))
      return true;
  return false;
}

static bool escapes_from(const ir::Stmt& s, bool in_loop) {
  switch (s.kind) {
  case ir::StmtKind::Return:
    return true;
  case ir::StmtKind::Break:
  case ir::StmtKind::Continue:
    return !in_loop;
  default:
    break;
  }
  bool loop = in_loop || s.kind == ir::StmtKind::For || s.kind == ir::StmtKind::While;
  for (const ir::Stmt& c : s.body)
    if (escapes_from(c, loop))
      return true;
  for (const ir::Stmt& c : s.else_body)
    if (escapes_from(c, in_loop))
      return true;
  return false;
}

bool escapes(const ir::Stmt& s) {
  return escapes_from(s, false);
}

namespace {

std::vector<Part> split(const ir::Body& block, const std::set<const ir::Stmt*>& hoisted,
                        uint32_t& next_id) {
  std::vector<Part> parts;
  Part lanes;
  auto flush = [&] {
    if (lanes.stmts.empty())
      return;
    lanes.id = next_id++;
    parts.push_back(std::move(lanes));
    lanes = Part{};
  };
  for (const ir::Stmt& s : block) {
    if (hoisted.count(&s)) {
      flush();
      Part p;
      p.kind = Part::Kind::Uniform;
      p.stmt = &s;
      p.id = next_id++;
      parts.push_back(std::move(p));
      continue;
    }
    if (!contains_barrier(s)) {
      lanes.stmts.push_back(&s);
      continue;
    }
    flush();
    if (s.kind == ir::StmtKind::Barrier)
      continue;
    Part p;
    p.kind = s.kind == ir::StmtKind::If      ? Part::Kind::If
             : s.kind == ir::StmtKind::While ? Part::Kind::While
                                             : Part::Kind::For;
    p.stmt = &s;
    p.id = next_id++;
    p.body = split(s.body, hoisted, next_id);
    p.else_body = split(s.else_body, hoisted, next_id);
    parts.push_back(std::move(p));
  }
  flush();
  return parts;
}

} // namespace

std::vector<Part> partition(const ir::Body& body, const std::set<const ir::Stmt*>& hoisted) {
  uint32_t next_id = 0;
  return split(body, hoisted, next_id);
}

} // namespace halfway::codegen::llvm::detail
