#include "halfway/ir/op_table_doc.hpp"

#include "halfway/ir/ops.hpp"

#include <sstream>

namespace halfway::ir {

namespace {
const char* rule_text(TypeRule r) {
  switch (r) {
  case TypeRule::Leaf:
    return "leaf";
  case TypeRule::Numeric:
    return "T, T -> T (int or float)";
  case TypeRule::Float:
    return "T, T -> T (float)";
  case TypeRule::Int:
    return "T, T -> T (int)";
  case TypeRule::Compare:
    return "T, T -> bool";
  case TypeRule::Bitwise:
    return "T, T -> T (int or bool)";
  case TypeRule::Shift:
    return "T, T -> T (int)";
  case TypeRule::Select:
    return "bool, T, T -> T";
  case TypeRule::Convert:
    return "S -> T";
  case TypeRule::Bitcast:
    return "S -> T, same width";
  case TypeRule::Pack:
    return "2 x 16-bit or 4 x 8-bit -> u32";
  case TypeRule::Unpack:
    return "u32 -> element";
  }
  return "";
}
} // namespace

std::string op_table_markdown() {
  std::ostringstream out;
  out << "# The op table\n\n"
      << "Generated from ir/include/halfway/ir/ops.hpp by `halfway ops`; a test keeps this file "
         "equal to it.\n\n"
      << "- *rounds*: the float result is a rounding of an exact value (the narrowing analysis's "
         "rounding op).\n"
      << "- *Figueroa*: one such op of operands exact in a p-bit format, computed with q >= 2p+2 "
         "bits and rounded to p bits, is correctly rounded.\n"
      << "- *device bound*: what Vulkan allows a device for f32 (ulp), and the precision rule. The "
         "interpreter is always correctly rounded (0 ulp). Each row also carries the rule and its "
         "f32 "
         "and 16-bit figures that the interval shadow reads (specs/device-precision.md).\n\n"
      << "| op | operands | types | rounds | Figueroa | device bound (f32 ulp) | device precision "
         "|\n"
      << "|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < kOpCount; ++i) {
    const OpInfo& o = info(static_cast<Op>(i));
    out << "| `" << o.name << "` | "
        << (o.arity < 0 ? std::string("2 or 4") : std::to_string(o.arity)) << " | "
        << rule_text(o.rule) << " | " << (o.rounds ? "yes" : "no") << " | "
        << (o.figueroa ? "yes" : "no") << " | " << o.device_ulp << " | " << o.device_precision
        << " |\n";
  }
  return out.str();
}

} // namespace halfway::ir
