#include "halfway/ir/narrowing.hpp"

#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/support/error.hpp"

#include <sstream>

namespace halfway::ir {

namespace {

class Analysis {
public:
  explicit Analysis(const Kernel& k) : k_(k) {}

  // Rule 1: the value is not the result of a rounding operation.
  bool not_rounded(ExprId id) const {
    const Expr& e = k_.expr(id);
    switch (e.op) {
    case Op::Load:
    case Op::ParamGet:
    case Op::Const:
      return true;
    case Op::Convert:
      return widens_exactly(k_.expr(e.args[0]).type, e.type);
    case Op::LocalGet:
    case Op::GlobalId:
    case Op::LocalId:
    case Op::GroupId:
    case Op::GroupSize:
    case Op::NumGroups:
    case Op::BufferLen:
    case Op::Bitcast:
    case Op::Pack:
    case Op::Unpack:
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Rem:
    case Op::Neg:
    case Op::Abs:
    case Op::Min:
    case Op::Max:
    case Op::Clamp:
    case Op::Fma:
    case Op::Sqrt:
    case Op::Rsqrt:
    case Op::Exp:
    case Op::Exp2:
    case Op::Log:
    case Op::Log2:
    case Op::Sin:
    case Op::Cos:
    case Op::Tan:
    case Op::Tanh:
    case Op::Pow:
    case Op::Erf:
    case Op::Atan2:
    case Op::Atan:
    case Op::Floor:
    case Op::Ceil:
    case Op::Fract:
    case Op::Copysign:
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
    case Op::And:
    case Op::Or:
    case Op::Xor:
    case Op::Not:
    case Op::Shl:
    case Op::Shr:
    case Op::Select:
      if (!info(e.op).exact_value)
        return false;
      for (int i = (e.op == Op::Select ? 1 : 0); i < e.nargs; ++i)
        if (!not_rounded(e.args[i]))
          return false;
      return true;
    }
    invalid_op(e.op);
  }

  // An operand exactly representable in `target`: widened from target or narrower, or a
  // constant on its grid.
  bool exact_in(ExprId id, ScalarType target) const {
    const Expr& e = k_.expr(id);
    if (e.op == Op::Convert)
      return widens_exactly(k_.expr(e.args[0]).type, target);
    if (e.op == Op::Const) {
      uint64_t bits;
      double v = widen_to_double(e.type, e.imm);
      return v == v && exact_bits(target, v, bits);
    }
    if (e.op == Op::Neg || e.op == Op::Abs)
      return exact_in(e.args[0], target);
    return false;
  }

  SiteShape shape(ExprId id) const {
    const Expr& e = k_.expr(id);
    if (not_rounded(id))
      return SiteShape::NotRounded;
    if (e.op == Op::LocalGet)
      return SiteShape::Chain;
    auto plain = [&](ExprId a) { return not_rounded(a); };
    // (When both sides of an add or sub are products, the one not matched is rounded: a chain.)
    if (auto m = match_mul_add(k_, id); m && plain(m->x) && plain(m->y)) {
      if (m->z == kNone)
        return SiteShape::Product;
      if (plain(m->z))
        return SiteShape::MulAdd;
    }
    if (info(e.op).rounds) {
      for (int i = 0; i < e.nargs; ++i)
        if (!plain(e.args[i]))
          return SiteShape::Chain;
      return SiteShape::Single;
    }
    return SiteShape::Chain;
  }

  NarrowingSite site(ExprId convert, const std::string& where, uint32_t line) const {
    const Expr& c = k_.expr(convert);
    NarrowingSite s;
    s.convert = convert;
    s.producer = c.args[0];
    s.from = k_.expr(s.producer).type;
    s.to = c.type;
    s.where = where;
    s.line = c.line ? c.line : line;
    s.shape = shape(s.producer);
    producers(k_, s.producer, s.producers);
    const Expr& p = k_.expr(s.producer);
    uint32_t q = info(s.from).precision, t = info(s.to).precision;
    if (s.shape == SiteShape::NotRounded) {
      s.decision = Decision::NoBarrierNotRounded;
      s.rule = "rule 1: the " + std::string(name(s.from)) +
               " value is not the result of a rounding operation, so it is rounded once";
    } else if (info(p.op).figueroa && p.nargs >= 1 && q >= 2 * t + 2 &&
               (c.rounding == RoundingMode::NearestEven || (p.op != Op::Add && p.op != Op::Sub)) &&
               [&] {
                 for (int i = 0; i < p.nargs; ++i)
                   if (!exact_in(p.args[i], s.to))
                     return false;
                 return true;
               }()) {
      s.decision = Decision::NoBarrierFigueroa;
      s.rule = "rule 2: one " + std::string(name(p.op)) + " of " + std::string(name(s.to)) +
               "-exact operands computed in " + std::string(name(s.from)) +
               " (q=" + std::to_string(q) + " >= 2p+2=" + std::to_string(2 * t + 2) +
               ") rounds as if once (Figueroa)";
    } else {
      s.decision = Decision::Barrier;
      s.rule = "rule 3: two roundings (" + std::string(name(s.from)) + ", then " +
               std::string(name(s.to)) + ") may differ from one; a barrier keeps them";
    }
    return s;
  }

  void expr_sites(ExprId id, const std::string& where, uint32_t line,
                  std::vector<NarrowingSite>& out) const {
    const Expr& e = k_.expr(id);
    for (int i = 0; i < e.nargs; ++i)
      expr_sites(e.args[i], where, line, out);
    if (e.op == Op::Convert && is_narrowing(k_.expr(e.args[0]).type, e.type))
      out.push_back(site(id, where, line));
  }

  std::string where(const Stmt& s) const {
    switch (s.kind) {
    case StmtKind::Let:
      return "let " + k_.locals[s.local].name;
    case StmtKind::Assign:
      return "assignment to " + k_.locals[s.local].name;
    case StmtKind::Store:
      return "store to " + k_.memory_name(s.space, s.mem);
    case StmtKind::Atomic:
      return std::string(name(s.atomic)) + " on " + k_.memory_name(s.space, s.mem);
    case StmtKind::If:
      return "if condition";
    case StmtKind::While:
      return "while condition";
    case StmtKind::For:
      return "for bounds";
    default:
      return "statement";
    }
  }

  std::vector<NarrowingSite> sites() const {
    std::vector<NarrowingSite> out;
    for_each_stmt(k_.body, [&](const Stmt& s) {
      for (ExprId e : stmt_exprs(s))
        expr_sites(e, where(s), s.line, out);
    });
    return out;
  }

private:
  const Kernel& k_;
};

} // namespace

std::vector<NarrowingSite> narrowing_sites(const Kernel& k) {
  return Analysis(k).sites();
}

std::string_view name(SiteShape s) {
  switch (s) {
  case SiteShape::NotRounded:
    return "not rounded";
  case SiteShape::Single:
    return "single op";
  case SiteShape::Product:
    return "product";
  case SiteShape::MulAdd:
    return "multiply-add";
  case SiteShape::Chain:
    return "chain";
  }
  return "chain";
}

std::string_view name(Decision d) {
  switch (d) {
  case Decision::NoBarrierNotRounded:
  case Decision::NoBarrierFigueroa:
    return "no barrier";
  case Decision::Barrier:
    return "barrier";
  }
  return "barrier";
}

std::string describe_sites(const Kernel& k,
                           const std::optional<std::string>& single_rounding_reason) {
  std::ostringstream out;
  auto sites = narrowing_sites(k);
  if (sites.empty())
    return "no narrowing sites\n";
  int n = 0;
  for (const NarrowingSite& s : sites) {
    out << "site " << n++ << ": " << s.where << ": " << print_expr(k, s.convert) << "\n"
        << "  " << name(s.from) << " -> " << name(s.to) << ", " << name(s.shape) << ", ";
    if (s.needs_barrier() && single_rounding_reason)
      out << "lifted by single rounding: " << printable(*single_rounding_reason)
          << " (without it: " << s.rule << ")\n";
    else
      out << name(s.decision) << " (" << s.rule << ")\n";
  }
  return out.str();
}

} // namespace halfway::ir
