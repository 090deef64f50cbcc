#include "literal.hpp"

#include "halfway/ir/bits.hpp"
#include "halfway/ir/printer.hpp"

#include <bit>
#include <charconv>
#include <cmath>

namespace halfway::text {

using ir::ScalarType;

namespace {

std::string tname(ScalarType t) {
  return std::string(ir::name(t));
}

std::string all_types() {
  std::string s;
  for (const ir::TypeInfo& t : ir::kTypeInfo)
    s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

// "nan(0x7e00)" -> 0x7e00; the grammar guarantees the shape.
uint64_t nan_payload(const Source& source, const ast::Literal& lit) {
  std::string_view t = lit.text;
  std::string_view hex = t.substr(6, t.size() - 7); // after "nan(0x", before ")"
  uint64_t bits = 0;
  auto r = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
  if (r.ec != std::errc() || r.ptr != hex.data() + hex.size())
    source.fail(lit.offset, "NaN pattern " + lit.text + " does not fit in 64 bits");
  return bits;
}

// The values of a 16- or 8-bit float type nearest to v from below and above, for a message.
std::string neighbours(ScalarType type, double v) {
  double below = -HUGE_VAL, above = HUGE_VAL;
  uint64_t below_bits = 0, above_bits = 0;
  for (uint64_t b = 0; b < (1ull << ir::info(type).bits); ++b) {
    double w = ir::widen_to_double(type, b);
    if (w != w || std::isinf(w))
      continue;
    if (w <= v && w > below)
      below = w, below_bits = b;
    if (w >= v && w < above)
      above = w, above_bits = b;
  }
  if (std::isinf(above))
    return " (it is out of range: the largest finite " + tname(type) + " is " +
           ir::print_constant(type, below_bits) + ")";
  if (std::isinf(below))
    return " (it is out of range: the smallest finite " + tname(type) + " is " +
           ir::print_constant(type, above_bits) + ")";
  return "; the nearest " + tname(type) + " values are " + ir::print_constant(type, below_bits) +
         " and " + ir::print_constant(type, above_bits);
}

uint64_t float_bits(const Source& source, const ast::Literal& lit, ScalarType type) {
  std::string_view t = lit.text;
  bool negative = !t.empty() && t[0] == '-';
  std::string_view body = negative ? t.substr(1) : t;
  if (body.substr(0, 4) == "nan(") {
    if (negative)
      source.fail(lit.offset, "a NaN is written by its bit pattern, sign included, without '-'");
    uint64_t bits = nan_payload(source, lit);
    if (ir::truncate_bits(type, bits) != bits)
      source.fail(lit.offset, lit.text + " has bits outside the " +
                                  std::to_string(ir::info(type).bits) + " bits of " + tname(type));
    double v = ir::widen_to_double(type, bits);
    if (v == v)
      source.fail(lit.offset, lit.text + " is not a NaN of " + tname(type) + ": it is " +
                                  ir::print_constant(type, bits));
    return bits;
  }
  double value;
  if (body == "inf") {
    value = negative ? -HUGE_VAL : HUGE_VAL;
    if (type == ScalarType::E4M3)
      source.fail(lit.offset, "e4m3 has no infinity (its largest finite value is 448.0:e4m3)");
  } else if (type == ScalarType::F64) {
    auto r = std::from_chars(t.data(), t.data() + t.size(), value);
    if (r.ec != std::errc() || std::isinf(value))
      source.fail(lit.offset, "constant " + lit.text + " is out of range for f64");
  } else {
    // f32 and narrower: read through float, as the printer writes them.
    float f = 0;
    auto r = std::from_chars(t.data(), t.data() + t.size(), f);
    if (r.ec != std::errc() || std::isinf(f))
      source.fail(lit.offset,
                  "constant " + lit.text + " is out of range for " +
                      (type == ScalarType::F32 ? "f32" : "f32, and so for " + tname(type)));
    value = f;
  }
  if (auto bits = exact_float_bits(type, value))
    return *bits;
  source.fail(lit.offset, "constant " + lit.text + " is not exactly representable in " +
                              tname(type) + neighbours(type, value));
}

uint64_t int_bits(const Source& source, const ast::Literal& lit, ScalarType type) {
  std::string_view t = lit.text;
  bool negative = !t.empty() && t[0] == '-';
  std::string_view digits = negative ? t.substr(1) : t;
  if (digits.find_first_not_of("0123456789") != std::string_view::npos)
    source.fail(lit.offset, "constant " + lit.text + " is not an integer, and " + tname(type) +
                                " is an integer type");
  uint64_t magnitude = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  uint32_t width = ir::info(type).bits;
  bool is_signed = ir::info(type).is_signed;
  uint64_t max_positive = is_signed     ? (1ull << (width - 1)) - 1
                          : width == 64 ? ~0ull
                                        : (1ull << width) - 1;
  uint64_t max_negative = is_signed ? 1ull << (width - 1) : 0;
  if (r.ec != std::errc() || (negative ? magnitude > max_negative : magnitude > max_positive)) {
    std::string range =
        is_signed ? "-" + std::to_string(max_negative) + " to " + std::to_string(max_positive)
                  : "0 to " + std::to_string(max_positive);
    source.fail(lit.offset, "constant " + lit.text + " is out of range for " + tname(type) + " (" +
                                range + ")");
  }
  return ir::truncate_bits(type, negative ? 0 - magnitude : magnitude);
}

} // namespace

ScalarType scalar_type(const Source& source, const ast::Word& word) {
  if (auto t = ir::parse_type(word.text))
    return *t;
  source.fail(word.offset, "unknown type '" + word.text + "'; the types are " + all_types());
}

std::optional<uint64_t> exact_float_bits(ScalarType type, double v) {
  if (v != v)
    return std::nullopt;
  if (type == ScalarType::F64)
    return std::bit_cast<uint64_t>(v);
  if (type == ScalarType::F32) {
    float f = static_cast<float>(v);
    if (static_cast<double>(f) != v)
      return std::nullopt;
    return std::bit_cast<uint32_t>(f);
  }
  const ir::TypeInfo& ti = ir::info(type);
  int man = static_cast<int>(ti.precision) - 1;
  int exp_bits = static_cast<int>(ti.bits) - 1 - man;
  int bias = 1 - ir::min_exponent(type) - man;
  uint64_t sign = std::signbit(v) ? 1ull << (ti.bits - 1) : 0;
  double a = std::fabs(v);
  uint64_t pattern;
  if (a == 0) {
    pattern = 0;
  } else if (std::isinf(a)) {
    pattern = ((1ull << exp_bits) - 1) << man;
  } else {
    int e = std::ilogb(a);
    if (e > ir::max_exponent(type))
      return std::nullopt;
    int q = std::max(e - man, ir::min_exponent(type)); // exponent of the last significand bit
    double m = std::ldexp(a, -q);
    if (m != std::floor(m) || m >= std::ldexp(1.0, man + 1))
      return std::nullopt;
    uint64_t mi = static_cast<uint64_t>(m);
    pattern = mi < (1ull << man) ? mi // subnormal
                                 : (static_cast<uint64_t>(e + bias) << man) | (mi - (1ull << man));
  }
  pattern |= sign;
  // The round trip rejects what the layout cannot hold (e4m3's top code is NaN, not 480).
  double back = ir::widen_to_double(type, pattern);
  if (back != v || std::signbit(back) != std::signbit(v))
    return std::nullopt;
  return pattern;
}

uint64_t literal_bits(const Source& source, const ast::Literal& lit, ScalarType type) {
  if (type == ScalarType::Bool) {
    if (lit.text == "true")
      return 1;
    if (lit.text == "false")
      return 0;
    source.fail(lit.offset, "constant " + lit.text + ":bool: bool constants are true and false");
  }
  if (ir::is_float(type))
    return float_bits(source, lit, type);
  return int_bits(source, lit, type);
}

} // namespace halfway::text
