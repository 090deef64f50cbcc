#include "lower.hpp"

#include "grammar.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/printer.hpp"
#include "literal.hpp"
#include "pipeline_text.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_map>

namespace halfway::text {

using ir::ExprId;
using ir::kNone;
using ir::ScalarType;

namespace {

namespace x3 = boost::spirit::x3;

template <class T> const T& unwrap(const T& t) {
  return t;
}
template <class T> const T& unwrap(const x3::forward_ast<T>& t) {
  return t.get();
}

// One node of an expression, read from the text where the grammar has already checked its syntax
// (ast::Expr keeps only where an expression starts): a constant, a name, a call `head<targs>(args)`
// or an element `name[index][more...]`. Its operands are where they start, read in their turn.
struct Node {
  enum class Kind : uint8_t { Literal, Word, Call, Index };
  Kind kind = Kind::Word;
  uint32_t offset = 0;
  ast::Literal lit;             // Literal
  ast::Word name;               // Word; the head of a Call; the array of an Index
  std::vector<ast::Word> targs; // Call: the <...> arguments
  std::vector<uint32_t> args;   // Call: the operands; Index: the indices
};

// ASCII only, as the grammar's character classes, whatever the locale.
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_xdigit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_idchar(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Reads expressions the grammar accepted, token by token as its rules do (grammar.cpp): the same
// alternatives in the same order (true or false, a number with its suffix, a call, an element, a
// name), and whitespace and comments wherever the grammar skips them. It never meets a syntax
// error, which the grammar reported first.
class ExprReader {
public:
  explicit ExprReader(const Source& source) : src_(source), text_(source.text()) {}

  Node read(uint32_t at) const {
    Node n;
    at = src_.skip_blank(at);
    n.offset = at;
    if (uint32_t end = boolean_end(at)) {
      n.kind = Node::Kind::Literal;
      n.lit.offset = at;
      n.lit.text.assign(text_.substr(at, end - at));
      return n;
    }
    if (uint32_t end = number_end(at)) {
      n.kind = Node::Kind::Literal;
      n.lit.offset = at;
      n.lit.text.assign(text_.substr(at, end - at));
      uint32_t colon = src_.skip_blank(end);
      if (colon < text_.size() && text_[colon] == ':') {
        uint32_t type = src_.skip_blank(colon + 1);
        n.lit.type.assign(text_.substr(type, word_end(type) - type));
      }
      return n;
    }
    const uint32_t end = word_end(at);
    n.name.offset = at;
    n.name.text.assign(text_.substr(at, end - at));
    uint32_t p = src_.skip_blank(end);
    if (p < text_.size() && (text_[p] == '<' || text_[p] == '(')) {
      n.kind = Node::Kind::Call;
      if (text_[p] == '<') {
        do {
          uint32_t t = src_.skip_blank(p + 1);
          ast::Word w;
          w.offset = t;
          p = word_end(t);
          w.text.assign(text_.substr(t, p - t));
          n.targs.push_back(std::move(w));
          p = src_.skip_blank(p);
        } while (text_[p] == ',');
        p = src_.skip_blank(p + 1); // past '>', at '('
      }
      p = src_.skip_blank(p + 1);
      if (text_[p] == ')')
        return n;
      for (;;) {
        n.args.push_back(p);
        p = src_.skip_blank(skip(p));
        if (text_[p] == ')')
          return n;
        p = src_.skip_blank(p + 1); // past ','
      }
    }
    if (p < text_.size() && text_[p] == '[') {
      n.kind = Node::Kind::Index;
      do {
        const uint32_t index = src_.skip_blank(p + 1);
        n.args.push_back(index);
        p = src_.skip_blank(src_.skip_blank(skip(index)) + 1); // past ']'
      } while (p < text_.size() && text_[p] == '[');
      return n;
    }
    n.kind = Node::Kind::Word;
    return n;
  }

private:
  // Just past the expression that starts at `at` (after blanks), building nothing.
  uint32_t skip(uint32_t at) const {
    at = src_.skip_blank(at);
    if (uint32_t end = boolean_end(at))
      return end;
    if (uint32_t end = number_end(at)) {
      uint32_t colon = src_.skip_blank(end);
      if (colon < text_.size() && text_[colon] == ':')
        return word_end(src_.skip_blank(colon + 1));
      return end;
    }
    const uint32_t end = word_end(at);
    uint32_t p = src_.skip_blank(end);
    if (p < text_.size() && (text_[p] == '<' || text_[p] == '(')) {
      if (text_[p] == '<') {
        do
          p = src_.skip_blank(word_end(src_.skip_blank(p + 1)));
        while (text_[p] == ',');
        p = src_.skip_blank(p + 1);
      }
      p = src_.skip_blank(p + 1); // past '('
      if (text_[p] != ')')
        for (p = src_.skip_blank(skip(p)); text_[p] == ','; p = src_.skip_blank(skip(p + 1))) {
        }
      return p + 1; // past ')'
    }
    if (p < text_.size() && text_[p] == '[') {
      uint32_t last = p;
      do {
        last = src_.skip_blank(skip(p + 1)) + 1; // past ']'
        p = src_.skip_blank(last);
      } while (p < text_.size() && text_[p] == '[');
      return last;
    }
    return end;
  }

  uint32_t word_end(uint32_t at) const {
    while (at < text_.size() && is_idchar(text_[at]))
      ++at;
    return at;
  }
  bool at_word_end(uint32_t at) const { return at >= text_.size() || !is_idchar(text_[at]); }
  bool starts(uint32_t at, std::string_view what) const {
    return text_.substr(at, what.size()) == what;
  }
  uint32_t digits_end(uint32_t at) const {
    while (at < text_.size() && is_digit(text_[at]))
      ++at;
    return at;
  }

  // `true` or `false` as a whole word: its end, else 0.
  uint32_t boolean_end(uint32_t at) const {
    for (std::string_view w : {"true", "false"})
      if (starts(at, w) && at_word_end(at + static_cast<uint32_t>(w.size())))
        return at + static_cast<uint32_t>(w.size());
    return 0;
  }

  // A number's text without its suffix (grammar.cpp's number_text): its end, else 0.
  uint32_t number_end(uint32_t at) const {
    uint32_t p = at;
    if (p < text_.size() && text_[p] == '-')
      ++p;
    if (p < text_.size() && is_digit(text_[p])) {
      p = digits_end(p);
      if (p + 1 < text_.size() && text_[p] == '.' && is_digit(text_[p + 1]))
        p = digits_end(p + 1);
      if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
        uint32_t q = p + 1;
        if (q < text_.size() && (text_[q] == '+' || text_[q] == '-'))
          ++q;
        if (q < text_.size() && is_digit(text_[q]))
          p = digits_end(q);
      }
    } else if (starts(p, "inf")) {
      p += 3;
    } else if (starts(p, "nan(0x") && p + 6 < text_.size() && is_xdigit(text_[p + 6])) {
      p += 6;
      while (p < text_.size() && is_xdigit(text_[p]))
        ++p;
      if (p >= text_.size() || text_[p] != ')')
        return 0;
      ++p;
    } else {
      return 0;
    }
    return at_word_end(p) ? p : 0;
  }

  const Source& src_;
  std::string_view text_;
};

std::string tname(ScalarType t) {
  return std::string(ir::name(t));
}

// The node that reads a name on one line, once the line has read it: every read of the name on
// that line shares it (see Lowerer::name_node).
struct LineNode {
  uint32_t line = kNone;
  ExprId node = kNone;
};

// A named constant (`const NAME: TYPE = LITERAL;`): its uses become constant nodes of its value.
struct NamedConst {
  ScalarType type;
  uint64_t bits;
  uint32_t offset; // of its name in the text
  LineNode read;   // in the kernel being lowered
};
using Constants = std::unordered_map<std::string, NamedConst>;

// Checks a constant's declaration and returns its value; `visible` are the constants in scope.
NamedConst constant_value(const Source& src, const ast::Const& c, const Constants& visible) {
  if (is_literal_word(c.name.text))
    src.fail(c.name.offset, "'" + c.name.text + "' is a constant and cannot name a constant");
  if (auto it = visible.find(c.name.text); it != visible.end())
    src.fail(c.name.offset, "constant '" + c.name.text + "' is already defined at line " +
                                std::to_string(src.line_of(it->second.offset)));
  NamedConst out{scalar_type(src, c.type), 0, c.name.offset};
  const ast::Literal& v = c.value;
  const bool is_bool_text = v.text == "true" || v.text == "false";
  if (!v.type.empty() && v.type != tname(out.type))
    src.fail(v.offset, "constant '" + c.name.text + "' is declared " + tname(out.type) +
                           " but its value " + v.text + ":" + v.type + " is " + v.type);
  if (is_bool_text != (out.type == ScalarType::Bool))
    src.fail(v.offset, "constant '" + c.name.text + "' is declared " + tname(out.type) +
                           " but its value " + v.text + " is " +
                           (is_bool_text ? "a bool" : "a number"));
  out.bits = literal_bits(src, v, out.type);
  return out;
}

class Lowerer {
public:
  Lowerer(const Source& source, const Constants& file_consts, bool with_map)
      : src_(source), consts_(file_consts), with_map_(with_map) {}

  // The kernel's header and declarations; then each top-level statement in order; then finish().
  void begin(const ast::Kernel& ak, const BodySize& size) {
    k_.exprs.reserve(size.tokens);
    k_.body.reserve(size.top_level);
    if (with_map_) {
      map_.exprs.reserve(size.tokens);
      map_.stmts.reserve(std::min<uint64_t>(size.statements, src_.lines()));
    }
    map_.header = ak.offset;
    k_.name = ak.name;
    k_.workgroup = {size_of(ak.wx), size_of(ak.wy), size_of(ak.wz)};
    for (const ast::Decl& d : ak.decls)
      boost::apply_visitor([&](const auto& decl) { declare(decl); }, d.get());
    scopes_.emplace_back();
  }
  void statement(const ast::Stmt& s) {
    boost::apply_visitor([&](const auto& n) { k_.body.push_back(stmt(unwrap(n))); }, s.get());
  }
  Lowered finish() { return Lowered{std::move(k_), std::move(map_)}; }

private:
  [[noreturn]] void fail(uint32_t offset, const std::string& message) const {
    src_.fail(offset, message);
  }

  // ---- declarations -------------------------------------------------------------------------
  void check_new_name(const ast::Word& n, const char* what) {
    if (is_literal_word(n.text))
      fail(n.offset, "'" + n.text + "' is a constant and cannot name a " + what);
    if (auto it = consts_.find(n.text); it != consts_.end())
      fail(n.offset, "duplicate name '" + n.text + "': the constant at line " +
                         std::to_string(src_.line_of(it->second.offset)) + " has it");
    for (const ir::Param& p : k_.params)
      if (p.name == n.text)
        fail(n.offset, "duplicate name '" + n.text + "': a parameter has it");
    for (const ir::SharedArray& s : k_.shared)
      if (s.name == n.text)
        fail(n.offset, "duplicate name '" + n.text + "': a shared array has it");
    for (const ir::PrivateArray& a : k_.privates)
      if (a.name == n.text)
        fail(n.offset, "duplicate name '" + n.text + "': a private array has it");
  }

  void declare(const ast::Param& p) {
    check_new_name(p.name, "parameter");
    ir::Param out;
    out.name = p.name.text;
    out.type = scalar_type(src_, p.type.type);
    if (p.type.access.text.empty()) {
      out.kind = ir::Param::Kind::Scalar;
    } else {
      out.kind = ir::Param::Kind::Buffer;
      out.access = access(p.type.access);
    }
    k_.params.push_back(out);
  }

  void declare(const ast::Shared& s) {
    check_new_name(s.name, "shared array");
    k_.shared.push_back(array(s, "shared array"));
  }

  void declare(const ast::Private& p) {
    check_new_name(p.name, "private array");
    k_.privates.push_back(array(p, "private array"));
  }

  // The IR's one spelling of a shape (ir::SharedArray): rank 1 keeps dims empty. Every dimension
  // is a number or a named constant. A size that does not fit the IR (2^32 elements or more) is
  // reported here, where the text says it.
  template <class Decl> ir::SharedArray array(const Decl& d, const char* what) {
    if (d.more.size() > 2)
      fail(d.name.offset, std::string(what) + " '" + d.name.text + "' has " +
                              std::to_string(d.more.size() + 1) +
                              " dimensions; arrays have 1 to 3");
    uint32_t first = size_of(d.size);
    ir::SharedArray a{d.name.text, scalar_type(src_, d.type), first, {0, 0, 0}};
    if (d.more.empty())
      return a;
    a.dims[0] = first;
    uint64_t product = first;
    for (size_t i = 0; i < d.more.size(); ++i) {
      uint32_t dim = size_of(d.more[i]);
      if (first == 0 || dim == 0)
        fail(d.name.offset, std::string(what) + " '" + d.name.text + "' has a dimension of size 0");
      a.dims[i + 1] = dim;
      product *= dim; // below 2^32 * 2^32 at each step, checked before the next
      if (product > 0xffffffffull)
        fail(d.name.offset, std::string(what) + " '" + d.name.text + "' has 2^32 elements or more");
    }
    a.size = static_cast<uint32_t>(product);
    return a;
  }

  void declare(const ast::Const& c) {
    NamedConst v = constant_value(src_, c, consts_);
    for (const ir::Param& p : k_.params)
      if (p.name == c.name.text)
        fail(c.name.offset, "duplicate name '" + c.name.text + "': a parameter has it");
    for (const ir::SharedArray& s : k_.shared)
      if (s.name == c.name.text)
        fail(c.name.offset, "duplicate name '" + c.name.text + "': a shared array has it");
    for (const ir::PrivateArray& a : k_.privates)
      if (a.name == c.name.text)
        fail(c.name.offset, "duplicate name '" + c.name.text + "': a private array has it");
    consts_.emplace(c.name.text, v);
  }

  // A workgroup size or an array dimension: a number, or an integer constant in [0, 2^32).
  uint32_t size_of(const ast::Size& s) const {
    if (s.name.empty())
      return s.value;
    auto it = consts_.find(s.name);
    if (it == consts_.end())
      fail(s.offset, "unknown constant '" + s.name + "'; a size is a number or a constant");
    const NamedConst& c = it->second;
    if (!ir::is_int(c.type))
      fail(s.offset, "constant '" + s.name + "' is " + tname(c.type) + "; a size is an integer");
    int64_t v = ir::info(c.type).is_signed ? ir::sign_extend(c.bits, ir::info(c.type).bits)
                                           : static_cast<int64_t>(c.bits);
    if (v < 0 || (!ir::info(c.type).is_signed && c.bits > 0xffffffffull) || v > 0xffffffffll)
      fail(s.offset, "constant '" + s.name + "' is " + ir::print_constant(c.type, c.bits) +
                         ", not a size (an unsigned 32-bit integer)");
    return static_cast<uint32_t>(v);
  }

  ir::Access access(const ast::Word& w) {
    for (auto a : {ir::Access::Read, ir::Access::Write, ir::Access::ReadWrite})
      if (ir::name(a) == w.text)
        return a;
    fail(w.offset, "unknown access mode '" + w.text + "'; use read, write or read_write");
  }

  // ---- names --------------------------------------------------------------------------------
  uint32_t declare_local(const ast::Word& n, ScalarType type) {
    if (is_literal_word(n.text))
      fail(n.offset, "'" + n.text + "' is a constant and cannot name a local");
    if (auto it = consts_.find(n.text); it != consts_.end())
      fail(n.offset, "local '" + n.text + "' would shadow the constant declared at line " +
                         std::to_string(src_.line_of(it->second.offset)));
    k_.locals.push_back({n.text, type});
    uint32_t id = static_cast<uint32_t>(k_.locals.size() - 1);
    scopes_.back().push_back(id);
    // The key is the name's text in the source, which outlives the lowering.
    auto [it, added] = visible_.try_emplace(src_.text().substr(n.offset, n.text.size()), id);
    shadowed_.push_back(added ? kNone : it->second);
    it->second = id;
    return id;
  }

  // Leaves the innermost scope: its locals are no longer visible.
  void pop_scope() {
    // Latest first: a name declared twice in one scope is visible as the later local.
    const std::vector<uint32_t>& scope = scopes_.back();
    for (auto id = scope.rbegin(); id != scope.rend(); ++id) {
      auto it = visible_.find(k_.locals[*id].name);
      it->second = shadowed_[*id];
      if (it->second == kNone)
        visible_.erase(it);
    }
    scopes_.pop_back();
  }

  uint32_t find_local(const std::string& n) const {
    auto it = visible_.find(n);
    return it == visible_.end() ? kNone : it->second;
  }

  uint32_t find_shared(const std::string& n) const {
    for (uint32_t i = 0; i < k_.shared.size(); ++i)
      if (k_.shared[i].name == n)
        return i;
    return kNone;
  }

  uint32_t find_private(const std::string& n) const {
    for (uint32_t i = 0; i < k_.privates.size(); ++i)
      if (k_.privates[i].name == n)
        return i;
    return kNone;
  }

  // The rank of what `memory` found: indices a load or store must give.
  uint32_t rank(ir::Space space, uint32_t ref) const {
    return space == ir::Space::Buffer ? 1 : k_.array(space, ref).rank();
  }
  void expect_indices(const ast::Word& n, ir::Space space, uint32_t ref, size_t given) const {
    const uint32_t r = rank(space, ref);
    if (given != r)
      fail(n.offset, "'" + n.text + "' has " + std::to_string(r) +
                         (r == 1 ? " dimension" : " dimensions") + ": write " + std::to_string(r) +
                         (r == 1 ? " index" : " indices") + ", not " + std::to_string(given));
  }

  // A buffer parameter or shared array, for loads, stores and atomics.
  std::pair<ir::Space, uint32_t> memory(const ast::Word& n) const {
    uint32_t p = k_.find_param(n.text);
    if (p != kNone && k_.params[p].is_buffer())
      return {ir::Space::Buffer, p};
    uint32_t s = find_shared(n.text);
    if (s != kNone)
      return {ir::Space::Shared, s};
    uint32_t a = find_private(n.text);
    if (a != kNone)
      return {ir::Space::Private, a};
    if (p != kNone)
      fail(n.offset, "'" + n.text + "' is a scalar parameter, not a buffer; it cannot be indexed");
    if (find_local(n.text) != kNone)
      fail(n.offset, "'" + n.text + "' is a local, not a buffer; it cannot be indexed");
    fail(n.offset, "unknown buffer, shared or private array '" + n.text + "'");
  }

  // ---- expressions --------------------------------------------------------------------------
  ExprId add(ir::Expr e, uint32_t offset) {
    e.line = src_.line_of(offset);
    // The reservation (begin) is an upper bound but for text that reads one name with two meanings
    // on a line in ways estimate_body cannot see; then grow by an eighth, not by doubling.
    if (k_.exprs.size() == k_.exprs.capacity())
      k_.exprs.reserve(k_.exprs.size() + k_.exprs.size() / 8 + 16);
    if (with_map_)
      map_.exprs.push_back(offset);
    return k_.add(e);
  }
  // A read of a name (a local, a scalar parameter or a named constant). The reads of one name on
  // one line share a node: a node has no place of its own but its line (kernel.hpp: sharing never
  // changes meaning), and text such as `x=x;` repeated on a line would otherwise hold a node
  // besides each statement, more than 20 times the text (specs/ir-text.md §1).
  ExprId name_node(LineNode& read, const ir::Expr& e, uint32_t offset) {
    const uint32_t line = src_.line_of(offset);
    if (read.line != line)
      read = {line, add(e, offset)};
    return read.node;
  }
  ScalarType type_of(ExprId id) const { return k_.expr(id).type; }

  ExprId expr(const ast::Expr& e) { return expr(e.offset); }
  ExprId expr(uint32_t at) {
    const Node n = reader_.read(at);
    switch (n.kind) {
    case Node::Kind::Literal:
      return node(n.lit);
    case Node::Kind::Word:
      return node(n.name);
    case Node::Kind::Call:
      return call(n);
    case Node::Kind::Index:
      return index(n);
    }
    return kNone; // not reached: the switch names every kind
  }

  ExprId node(const ast::Literal& lit) {
    ir::Expr e;
    e.op = ir::Op::Const;
    if (lit.type.empty()) {
      if (lit.text != "true" && lit.text != "false") {
        bool is_int = lit.text.find_first_not_of("-0123456789") == std::string::npos;
        fail(lit.offset, "constant " + lit.text + " needs a type suffix, e.g. " + lit.text +
                             (is_int ? ":u32" : ":f32"));
      }
      e.type = ScalarType::Bool;
    } else {
      ast::Word w;
      w.text = lit.type;
      w.offset = lit.offset + static_cast<uint32_t>(lit.text.size()) + 1;
      e.type = scalar_type(src_, w);
    }
    e.imm = literal_bits(src_, lit, e.type);
    return add(e, lit.offset);
  }

  ExprId node(const ast::Word& w) {
    ir::Expr e;
    uint32_t local = find_local(w.text);
    if (local != kNone) {
      e.op = ir::Op::LocalGet;
      e.ref = local;
      e.type = k_.locals[local].type;
      local_reads_.resize(k_.locals.size());
      return name_node(local_reads_[local], e, w.offset);
    }
    uint32_t p = k_.find_param(w.text);
    if (p != kNone && !k_.params[p].is_buffer()) {
      e.op = ir::Op::ParamGet;
      e.ref = p;
      e.type = k_.params[p].type;
      param_reads_.resize(k_.params.size());
      return name_node(param_reads_[p], e, w.offset);
    }
    if (p != kNone)
      fail(w.offset, "'" + w.text + "' is a buffer: read an element with " + w.text +
                         "[i] or its length with len(" + w.text + ")");
    if (auto it = consts_.find(w.text); it != consts_.end()) {
      e.op = ir::Op::Const;
      e.type = it->second.type;
      e.imm = it->second.bits;
      return name_node(it->second.read, e, w.offset);
    }
    if (find_shared(w.text) != kNone)
      fail(w.offset, "'" + w.text + "' is a shared array: read an element with " + w.text + "[i]");
    if (find_private(w.text) != kNone)
      fail(w.offset, "'" + w.text + "' is a private array: read an element with " + w.text + "[i]");
    fail(w.offset, "unknown name '" + w.text + "'");
  }

  ExprId index(const Node& ix) {
    auto [space, ref] = memory(ix.name);
    expect_indices(ix.name, space, ref, ix.args.size());
    ir::Expr e;
    e.op = ir::Op::Load;
    e.nargs = static_cast<uint8_t>(ix.args.size());
    for (size_t i = 0; i < ix.args.size(); ++i)
      e.args[i] = expr(ix.args[i]);
    e.space = space;
    e.ref = ref;
    e.type = k_.element_type(space, ref);
    return add(e, ix.offset);
  }

  void expect_args(const Node& c, size_t n, const std::string& what) const {
    if (c.args.size() != n)
      fail(c.offset, c.name.text + " takes " + what + ", not " + std::to_string(c.args.size()) +
                         (c.args.size() == 1 ? " operand" : " operands"));
  }
  void expect_targs(const Node& c, size_t min, size_t max, const std::string& form) const {
    if (c.targs.size() < min || c.targs.size() > max)
      fail(c.offset, "write " + c.name.text + form);
  }

  ExprId call(const Node& c) {
    const std::string& h = c.name.text;
    if (h == "narrow" || h == "widen" || h == "convert")
      return conversion(c);
    if (h == "bitcast")
      return bitcast(c);
    if (h == "pack")
      return pack(c);
    if (h == "unpack")
      return unpack(c);
    if (ir::parse_atomic(h))
      fail(c.offset, h + " is a statement, not a value: write `" + h +
                         "(...);` or `let old: T = " + h + "(...);`");
    std::optional<ir::Op> op = ir::parse_op(h);
    const ir::TypeRule rule = op ? ir::info(*op).rule : ir::TypeRule::Leaf;
    bool callable =
        op && (rule != ir::TypeRule::Leaf || ir::is_builtin(*op) || *op == ir::Op::BufferLen);
    if (!callable || rule == ir::TypeRule::Convert || rule == ir::TypeRule::Bitcast ||
        rule == ir::TypeRule::Pack || rule == ir::TypeRule::Unpack)
      fail(c.name.offset, "unknown operation '" + h + "'");
    if (!c.targs.empty())
      fail(c.targs[0].offset, h + " takes no <...> arguments");
    if (ir::is_builtin(*op))
      return builtin(c, *op);
    if (*op == ir::Op::BufferLen)
      return length(c);
    int arity = ir::info(*op).arity;
    expect_args(c, static_cast<size_t>(arity),
                std::to_string(arity) + (arity == 1 ? " operand" : " operands"));
    ir::Expr e;
    e.op = *op;
    e.nargs = static_cast<uint8_t>(arity);
    for (int i = 0; i < arity; ++i)
      e.args[i] = expr(c.args[i]);
    switch (rule) {
    case ir::TypeRule::Compare:
      e.type = ScalarType::Bool;
      break;
    case ir::TypeRule::Select:
      e.type = type_of(e.args[1]);
      break;
    default:
      e.type = type_of(e.args[0]);
      break; // Numeric, Float, Int, Bitwise, Shift
    }
    return add(e, c.offset);
  }

  ExprId builtin(const Node& c, ir::Op op) {
    expect_args(c, 1, "one dimension (0, 1 or 2)");
    const Node arg = reader_.read(c.args[0]);
    const ast::Literal* lit = arg.kind == Node::Kind::Literal ? &arg.lit : nullptr;
    uint64_t dim = 3;
    if (lit && lit->type.empty())
      std::from_chars(lit->text.data(), lit->text.data() + lit->text.size(), dim);
    if (!lit || !lit->type.empty() || dim > 2 ||
        lit->text.find_first_not_of("0123456789") != std::string::npos)
      fail(c.args[0], "the dimension of " + c.name.text + " is a plain 0, 1 or 2");
    ir::Expr e;
    e.op = op;
    e.type = ScalarType::U32;
    e.imm = dim;
    return add(e, c.offset);
  }

  ExprId length(const Node& c) {
    expect_args(c, 1, "one buffer");
    const Node arg = reader_.read(c.args[0]);
    const ast::Word* w = arg.kind == Node::Kind::Word ? &arg.name : nullptr;
    if (!w)
      fail(c.args[0], "len() takes the name of a buffer parameter");
    uint32_t p = k_.find_param(w->text);
    if (p == kNone || !k_.params[p].is_buffer()) {
      uint32_t s = find_shared(w->text);
      if (s != kNone)
        fail(w->offset, "len() takes a buffer; shared array '" + w->text + "' has the fixed size " +
                            std::to_string(k_.shared[s].size));
      if (find_private(w->text) != kNone)
        fail(w->offset, "len() takes a buffer; '" + w->text + "' is a private array");
      fail(w->offset, "len() takes a buffer parameter, and '" + w->text + "' is not one");
    }
    ir::Expr e;
    e.op = ir::Op::BufferLen;
    e.type = ScalarType::U32;
    e.ref = p;
    return add(e, c.offset);
  }

  ExprId conversion(const Node& c) {
    const std::string& h = c.name.text;
    expect_targs(c, 1, 3, "<type[, rte|rtz|rtp|rtn][, sat]>(value)");
    expect_args(c, 1, "one operand");
    ir::Expr e;
    e.op = ir::Op::Convert;
    e.type = scalar_type(src_, c.targs[0]);
    bool have_rounding = false;
    for (size_t i = 1; i < c.targs.size(); ++i) {
      const ast::Word& t = c.targs[i];
      auto r = ir::parse_rounding(t.text);
      if (r && !have_rounding && !e.saturate) {
        e.rounding = *r;
        have_rounding = true;
      } else if (t.text == "sat" && !e.saturate) {
        e.saturate = true;
      } else {
        fail(t.offset,
             "expected a rounding mode (rte, rtz, rtp, rtn) and then sat, found '" + t.text + "'");
      }
    }
    e.nargs = 1;
    e.args[0] = expr(c.args[0]);
    ScalarType from = type_of(e.args[0]);
    // The head says what kind of conversion it is; it must agree with the types, as the printer's.
    std::string want = ir::is_narrowing(from, e.type)                 ? "narrow"
                       : (ir::is_float(from) && ir::is_float(e.type)) ? "widen"
                                                                      : "convert";
    if (h != want) {
      std::string why = want == "narrow"  ? "rounds"
                        : want == "widen" ? "is exact"
                                          : "is not between two float types";
      fail(c.name.offset, "converting " + tname(from) + " to " + tname(e.type) + " " + why +
                              ": write " + want + "<" + tname(e.type) + ">(...), not " + h +
                              "<...>");
    }
    return add(e, c.offset);
  }

  ExprId bitcast(const Node& c) {
    expect_targs(c, 1, 1, "<type>(value)");
    expect_args(c, 1, "one operand");
    ir::Expr e;
    e.op = ir::Op::Bitcast;
    e.type = scalar_type(src_, c.targs[0]);
    e.nargs = 1;
    e.args[0] = expr(c.args[0]);
    return add(e, c.offset);
  }

  ExprId pack(const Node& c) {
    expect_targs(c, 1, 1, "<f16|bf16|e4m3|e5m2>(lanes...)");
    ir::Expr e;
    e.op = ir::Op::Pack;
    e.type = ScalarType::U32;
    e.aux = scalar_type(src_, c.targs[0]);
    size_t lanes = e.aux == ScalarType::F16 || e.aux == ScalarType::BF16 ? 2
                   : ir::is_fp8(e.aux)                                   ? 4
                                                                         : 0;
    if (lanes == 0)
      fail(c.targs[0].offset, "pack and unpack take f16, bf16, e4m3 or e5m2, not " + tname(e.aux));
    expect_args(c, lanes, std::to_string(lanes) + " operands");
    e.nargs = static_cast<uint8_t>(lanes);
    for (size_t i = 0; i < lanes; ++i)
      e.args[i] = expr(c.args[i]);
    return add(e, c.offset);
  }

  ExprId unpack(const Node& c) {
    expect_targs(c, 2, 2, "<f16|bf16|e4m3|e5m2, lane>(word)");
    expect_args(c, 1, "one operand");
    ir::Expr e;
    e.op = ir::Op::Unpack;
    e.aux = e.type = scalar_type(src_, c.targs[0]);
    const std::string& lane = c.targs[1].text;
    auto r = std::from_chars(lane.data(), lane.data() + lane.size(), e.imm);
    if (r.ec != std::errc() || r.ptr != lane.data() + lane.size())
      fail(c.targs[1].offset, "the lane of unpack is a number, not '" + lane + "'");
    e.nargs = 1;
    e.args[0] = expr(c.args[0]);
    return add(e, c.offset);
  }

  // ---- statements ---------------------------------------------------------------------------
  void block(const std::vector<ast::Stmt>& in, ir::Body& out) {
    out.reserve(in.size()); // exactly: doubling would waste up to half of the block
    for (const ast::Stmt& s : in)
      boost::apply_visitor([&](const auto& n) { out.push_back(stmt(unwrap(n))); }, s.get());
  }

  void scoped_block(const std::vector<ast::Stmt>& in, ir::Body& out) {
    scopes_.emplace_back();
    block(in, out);
    pop_scope();
  }

  ir::Stmt begin(ir::StmtKind kind, uint32_t offset) {
    ir::Stmt s;
    s.kind = kind;
    s.line = src_.line_of(offset);
    if (with_map_ && (map_.stmts.empty() || map_.stmts.back().first < s.line))
      map_.stmts.emplace_back(s.line, offset);
    return s;
  }

  ir::Stmt stmt(const ast::Let& let) {
    if (const Node c = reader_.read(let.value.offset);
        c.kind == Node::Kind::Call && ir::parse_atomic(c.name.text))
      return atomic(c, &let);
    ir::Stmt s = begin(ir::StmtKind::Let, let.offset);
    ScalarType type = scalar_type(src_, let.type);
    s.a = expr(let.value);
    s.local = declare_local(let.name, type);
    return s;
  }

  ir::Stmt stmt(const ast::Assign& as) {
    ir::Stmt s = begin(ir::StmtKind::Assign, as.offset);
    s.local = find_local(as.name.text);
    if (s.local == kNone) {
      uint32_t p = k_.find_param(as.name.text);
      if (p != kNone && k_.params[p].is_buffer())
        fail(as.name.offset, "'" + as.name.text + "' is a buffer: store to an element with " +
                                 as.name.text + "[i] = ...");
      if (p != kNone)
        fail(as.name.offset, "cannot assign to parameter '" + as.name.text + "'");
      if (find_shared(as.name.text) != kNone)
        fail(as.name.offset, "'" + as.name.text + "' is a shared array: store to an element with " +
                                 as.name.text + "[i] = ...");
      if (find_private(as.name.text) != kNone)
        fail(as.name.offset, "'" + as.name.text +
                                 "' is a private array: store to an element with " + as.name.text +
                                 "[i] = ...");
      fail(as.name.offset,
           "assignment to unknown local '" + as.name.text + "'; declare it with let");
    }
    s.a = expr(as.value);
    return s;
  }

  ir::Stmt stmt(const ast::Store& st) {
    ir::Stmt s = begin(ir::StmtKind::Store, st.offset);
    std::tie(s.space, s.mem) = memory(st.name);
    expect_indices(st.name, s.space, s.mem, 1 + st.more.size());
    s.a = expr(st.index);
    if (st.more.size() > 0)
      s.c = expr(st.more[0]);
    if (st.more.size() > 1)
      s.d = expr(st.more[1]);
    s.b = expr(st.value);
    return s;
  }

  ir::Stmt stmt(const ast::Call& c) {
    if (!ir::parse_atomic(c.head.text))
      fail(c.offset,
           "a call to " + c.head.text +
               " cannot stand alone: only atomics are statements; use let to keep a value");
    return atomic(reader_.read(c.offset), nullptr);
  }

  ir::Stmt atomic(const Node& c, const ast::Let* let) {
    ir::Stmt s = begin(ir::StmtKind::Atomic, let ? let->offset : c.offset);
    s.atomic = *ir::parse_atomic(c.name.text);
    if (!c.targs.empty())
      fail(c.targs[0].offset, c.name.text + " takes no <...> arguments");
    bool cmpxchg = s.atomic == ir::AtomicOp::CompareExchange;
    expect_args(c, cmpxchg ? 3 : 2,
                cmpxchg ? "an element, a value and a comparand" : "an element and a value");
    const Node ix = reader_.read(c.args[0]);
    if (ix.kind != Node::Kind::Index)
      fail(c.args[0],
           "the first operand of " + c.name.text + " is a buffer or shared element, e.g. bins[i]");
    std::tie(s.space, s.mem) = memory(ix.name);
    if (s.space == ir::Space::Private)
      fail(ix.name.offset, c.name.text + " on private array '" + ix.name.text +
                               "': a private array is the lane's own; update it with a store");
    if (ix.args.size() != 1 || rank(s.space, s.mem) != 1)
      fail(ix.name.offset, c.name.text + " takes an element of a rank-1 buffer or shared array");
    s.a = expr(ix.args[0]);
    s.b = expr(c.args[1]);
    if (cmpxchg)
      s.c = expr(c.args[2]);
    if (let)
      s.local = declare_local(let->name, scalar_type(src_, let->type));
    return s;
  }

  ir::Stmt stmt(const ast::If& i) {
    ir::Stmt s = begin(ir::StmtKind::If, i.offset);
    s.a = expr(i.cond);
    scoped_block(i.body, s.body);
    scoped_block(i.else_body, s.else_body);
    return s;
  }

  ir::Stmt stmt(const ast::While& w) {
    ir::Stmt s = begin(ir::StmtKind::While, w.offset);
    s.a = expr(w.cond);
    scoped_block(w.body, s.body);
    return s;
  }

  ir::Stmt stmt(const ast::For& f) {
    ir::Stmt s = begin(ir::StmtKind::For, f.offset);
    ScalarType type = scalar_type(src_, f.type);
    s.a = expr(f.start);
    s.b = expr(f.end);
    s.c = expr(f.step);
    scopes_.emplace_back();
    s.local = declare_local(f.name, type);
    scoped_block(f.body, s.body);
    pop_scope();
    return s;
  }

  ir::Stmt stmt(const ast::Word& w) {
    ir::StmtKind kind = w.text == "break"      ? ir::StmtKind::Break
                        : w.text == "continue" ? ir::StmtKind::Continue
                        : w.text == "barrier"  ? ir::StmtKind::Barrier
                                               : ir::StmtKind::Return;
    return begin(kind, w.offset);
  }

  const Source& src_;
  ExprReader reader_{src_};
  Constants consts_; // the file's constants declared so far, then the kernel's own
  ir::Kernel k_;
  SourceMap map_;
  bool with_map_; // map_ records the nodes and statements, not only the header
  std::vector<LineNode> local_reads_, param_reads_; // by local and parameter id
  std::vector<std::vector<uint32_t>> scopes_;
  // Each visible name's innermost local (name lookup is a hash lookup, however many locals a
  // kernel declares); shadowed_[id] is the local that id hides, or kNone. A node per name, not a
  // vector, as a kernel of many short `let`s has a name per 14 bytes of text.
  std::unordered_map<std::string_view, uint32_t> visible_;
  std::vector<uint32_t> shadowed_;
};

} // namespace

uint32_t SourceMap::statement_at(uint32_t line) const {
  auto it = std::lower_bound(stmts.begin(), stmts.end(), std::make_pair(line, uint32_t{0}));
  return it != stmts.end() && it->first == line ? it->second : kNone;
}

std::vector<Lowered> parse_source(const Source& source, std::vector<PipelineText>* pipelines,
                                  bool with_maps) {
  check_nesting(source);
  SyntaxReader reader(source);
  std::vector<Lowered> out;
  Constants file_consts;
  std::vector<ast::Const> decls;
  std::vector<ast::Pipeline> pipes;
  while (std::optional<ast::Kernel> k = reader.next_kernel(decls, pipes)) {
    for (const ast::Const& c : decls)
      file_consts.emplace(c.name.text, constant_value(source, c, file_consts));
    decls.clear();
    for (const Lowered& earlier : out)
      if (earlier.kernel.name == k->name)
        source.fail(k->offset, "duplicate kernel name '" + k->name + "'; the first is at line " +
                                   std::to_string(source.line_of(earlier.map.header)));
    Lowerer lowerer(source, file_consts, with_maps);
    lowerer.begin(*k, estimate_body(source, reader.position()));
    while (std::optional<ast::Stmt> s = reader.next_statement())
      lowerer.statement(*s);
    out.push_back(lowerer.finish());
  }
  for (const ast::Const& c : decls) // after the last kernel: checked, though nothing uses them
    file_consts.emplace(c.name.text, constant_value(source, c, file_consts));
  for (size_t i = 0; i < pipes.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (pipes[j].name == pipes[i].name)
        source.fail(pipes[i].offset, "duplicate pipeline name '" + pipes[i].name +
                                         "'; the first is at line " +
                                         std::to_string(source.line_of(pipes[j].offset)));
    PipelineText lowered = lower_pipeline(source, pipes[i]);
    if (pipelines)
      pipelines->push_back(std::move(lowered));
  }
  return out;
}

} // namespace halfway::text
