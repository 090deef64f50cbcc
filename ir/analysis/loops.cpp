#include "halfway/ir/analysis/loops.hpp"

#include "halfway/ir/bits.hpp"

namespace halfway::ir {

namespace {

// A constant of an integer type of at most 32 bits as a signed 64-bit value (exact).
std::optional<int64_t> integer_constant(const Kernel& k, ExprId id) {
  const Expr& e = k.expr(id);
  if (e.op != Op::Const)
    return std::nullopt;
  const TypeInfo& t = info(e.type);
  return t.is_signed ? sign_extend(e.imm, t.bits) : static_cast<int64_t>(e.imm);
}

} // namespace

std::optional<uint64_t> constant_trips(const Kernel& k, const Stmt& s) {
  if (s.kind != StmtKind::For)
    return std::nullopt;
  const TypeInfo& t = info(k.locals[s.local].type);
  if (t.is_float || t.bits > 32) // the bounds and step have the variable's type
    return std::nullopt;
  const std::optional<int64_t> a = integer_constant(k, s.a), b = integer_constant(k, s.b),
                               c = integer_constant(k, s.c);
  if (!a || !b || !c || *c <= 0)
    return std::nullopt;
  // 32 bits or fewer: these sums are exact in 64.
  const int64_t max = t.is_signed ? (int64_t{1} << (t.bits - 1)) - 1 : (int64_t{1} << t.bits) - 1;
  if (*b + *c - 1 > max) // the last increment, from below b, would wrap
    return std::nullopt;
  return *b > *a ? static_cast<uint64_t>((*b - *a + *c - 1) / *c) : 0;
}

bool bounded_without_poll(const Kernel& k, const Stmt& s) {
  const std::optional<uint64_t> trips = constant_trips(k, s);
  if (!trips || *trips > kUnpolledTrips)
    return false;
  bool simple = true;
  for_each_stmt(s.body, [&](const Stmt& x) {
    if (x.kind == StmtKind::For || x.kind == StmtKind::While)
      simple = false;
    if ((x.kind == StmtKind::Let || x.kind == StmtKind::Assign || x.kind == StmtKind::Atomic) &&
        x.local == s.local)
      simple = false;
  });
  return simple;
}

} // namespace halfway::ir
