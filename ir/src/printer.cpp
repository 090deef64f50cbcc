#include "halfway/ir/printer.hpp"

#include "halfway/ir/bits.hpp"
#include "print_to.hpp"

#include <cctype>
#include <charconv>
#include <cstring>
#include <sstream>

namespace halfway::ir {

namespace {

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string float_text(ScalarType type, uint64_t bits) {
  double v = widen_to_double(type, bits);
  if (v != v)
    return "nan(" + hex(bits) + ")";
  if (v == __builtin_inf())
    return "inf";
  if (v == -__builtin_inf())
    return "-inf";
  char buf[64];
  std::to_chars_result r;
  // Shortest text that reads back to the same value: through float for f32 and narrower formats
  // (their values are exact floats), through double for f64.
  if (type == ScalarType::F64)
    r = std::to_chars(buf, buf + sizeof buf, v);
  else
    r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  std::string s(buf, r.ptr);
  // Keep floats visibly floats: "1" becomes "1.0".
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

class Printer {
public:
  Printer(const Kernel& k, std::ostream& out) : out(out), k_(k) {}

  std::string expr(ExprId id) {
    const Expr& e = k_.expr(id);
    auto arg = [&](int i) { return expr(e.args[i]); };
    switch (e.op) {
    case Op::Const:
      return print_constant(e.type, e.imm);
    case Op::LocalGet:
      return k_.locals[e.ref].name;
    case Op::ParamGet:
      return k_.params[e.ref].name;
    case Op::BufferLen:
      return "len(" + k_.params[e.ref].name + ")";
    case Op::Load: {
      std::string out = k_.memory_name(e.space, e.ref);
      for (int i = 0; i < std::min<int>(e.nargs, 4); ++i)
        out += "[" + arg(i) + "]";
      return out;
    }
    case Op::Convert: {
      ScalarType from = k_.expr(e.args[0]).type;
      std::string head = is_narrowing(from, e.type)             ? "narrow<"
                         : (is_float(from) && is_float(e.type)) ? "widen<"
                                                                : "convert<";
      head += std::string(name(e.type));
      if (e.rounding != RoundingMode::NearestEven || e.saturate)
        head += ", " + std::string(name(e.rounding));
      if (e.saturate)
        head += ", sat";
      return head + ">(" + arg(0) + ")";
    }
    case Op::Bitcast:
      return "bitcast<" + std::string(name(e.type)) + ">(" + arg(0) + ")";
    case Op::Unpack:
      return "unpack<" + std::string(name(e.aux)) + ", " + std::to_string(e.imm) + ">(" + arg(0) +
             ")";
    case Op::Pack:
      return call("pack<" + std::string(name(e.aux)) + ">", e);
    case Op::GlobalId:
    case Op::LocalId:
    case Op::GroupId:
    case Op::GroupSize:
    case Op::NumGroups:
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
      if (is_builtin(e.op))
        return std::string(name(e.op)) + "(" + std::to_string(e.imm) + ")";
      return call(std::string(name(e.op)), e);
    }
    invalid_op(e.op);
  }

  void block(const Body& stmts, int depth) {
    for (const Stmt& s : stmts)
      stmt(s, depth);
  }

  std::ostream& out;

private:
  std::string call(const std::string& head, const Expr& e) {
    std::string s = head + "(";
    for (int i = 0; i < e.nargs; ++i)
      s += (i ? ", " : "") + expr(e.args[i]);
    return s + ")";
  }

  std::string local_decl(uint32_t local) {
    return k_.locals[local].name + ": " + std::string(name(k_.locals[local].type));
  }

  void stmt(const Stmt& s, int depth) {
    std::string pad(2 * depth, ' ');
    switch (s.kind) {
    case StmtKind::Let:
      out << pad << "let " << local_decl(s.local) << " = " << expr(s.a) << ";\n";
      return;
    case StmtKind::Assign:
      out << pad << k_.locals[s.local].name << " = " << expr(s.a) << ";\n";
      return;
    case StmtKind::Store:
      out << pad << k_.memory_name(s.space, s.mem);
      for (ExprId i : store_indices(s))
        if (i != kNone)
          out << "[" << expr(i) << "]";
      out << " = " << expr(s.b) << ";\n";
      return;
    case StmtKind::Atomic: {
      out << pad;
      if (s.local != kNone)
        out << "let " << local_decl(s.local) << " = ";
      out << name(s.atomic) << "(" << k_.memory_name(s.space, s.mem) << "[" << expr(s.a) << "], "
          << expr(s.b);
      if (s.c != kNone)
        out << ", " << expr(s.c);
      out << ");\n";
      return;
    }
    case StmtKind::If: {
      out << pad << "if " << expr(s.a) << " {\n";
      block(s.body, depth + 1);
      // An else block that is exactly one if statement prints as `else if` (the canonical form);
      // a loop rather than recursion, as a chain may be long.
      const Stmt* last = &s;
      while (last->else_body.size() == 1 && last->else_body[0].kind == StmtKind::If) {
        last = &last->else_body[0];
        out << pad << "} else if " << expr(last->a) << " {\n";
        block(last->body, depth + 1);
      }
      if (!last->else_body.empty()) {
        out << pad << "} else {\n";
        block(last->else_body, depth + 1);
      }
      out << pad << "}\n";
      return;
    }
    case StmtKind::For:
      out << pad << "for " << local_decl(s.local) << " = " << expr(s.a) << " to " << expr(s.b)
          << " step " << expr(s.c) << " {\n";
      block(s.body, depth + 1);
      out << pad << "}\n";
      return;
    case StmtKind::While:
      out << pad << "while " << expr(s.a) << " {\n";
      block(s.body, depth + 1);
      out << pad << "}\n";
      return;
    case StmtKind::Break:
      out << pad << "break;\n";
      return;
    case StmtKind::Continue:
      out << pad << "continue;\n";
      return;
    case StmtKind::Barrier:
      out << pad << "barrier;\n";
      return;
    case StmtKind::Return:
      out << pad << "return;\n";
      return;
    }
  }

  const Kernel& k_;
};

} // namespace

std::string quoted_name(const std::string& n) {
  if (is_identifier(n))
    return n;
  std::string out = "\"";
  for (char c : n) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + '"';
}

bool is_identifier(std::string_view n) {
  if (n.empty() || !(std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_'))
    return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

std::string print_constant(ScalarType type, uint64_t bits) {
  if (type == ScalarType::Bool)
    return bits ? "true" : "false";
  std::string value;
  if (is_float(type)) {
    value = float_text(type, bits);
  } else if (info(type).is_signed) {
    value = std::to_string(sign_extend(bits, info(type).bits));
  } else {
    value = std::to_string(bits);
  }
  return value + ":" + std::string(name(type));
}

std::string print_expr(const Kernel& k, ExprId e) {
  std::ostringstream unused;
  return Printer(k, unused).expr(e);
}

std::string print(const Kernel& k) {
  std::ostringstream out;
  print_to(k, out);
  return std::move(out).str(); // the stream's buffer itself, not a copy: it can be megabytes
}

void print_to(const Kernel& k, std::ostream& out) {
  Printer p(k, out);
  out << "kernel " << quoted_name(k.name) << " workgroup(" << k.workgroup[0] << ", "
      << k.workgroup[1] << ", " << k.workgroup[2] << ") {\n";
  for (const Param& prm : k.params) {
    out << "  param " << prm.name << ": ";
    if (prm.is_buffer())
      out << "buffer<" << name(prm.type) << ", " << name(prm.access) << ">;\n";
    else
      out << name(prm.type) << ";\n";
  }
  auto shape = [&](const SharedArray& a) {
    for (uint32_t d = 0; d < a.rank(); ++d)
      out << "[" << a.dim(d) << "]";
    out << ";\n";
  };
  for (const SharedArray& s : k.shared) {
    out << "  shared " << s.name << ": " << name(s.type);
    shape(s);
  }
  for (const PrivateArray& a : k.privates) {
    out << "  let " << a.name << ": " << name(a.type);
    shape(a);
  }
  p.block(k.body, 1);
  out << "}\n";
}

} // namespace halfway::ir
