// The X3 grammar. Design rules that keep its errors clear and its speed linear:
//  - after the token that decides what a construct is, every further part is an expectation
//    (`>`), so a mistake is reported where it is, naming the part that was expected;
//  - alternatives only ever backtrack over a name or a literal, never over a whole subtree;
//  - rules are named after what they mean to a reader ("an expression", "a type"), since X3 puts
//    a failed rule's name into the error.
#include "grammar.hpp"

#include <boost/fusion/include/adapt_struct.hpp>
#include <boost/spirit/home/x3.hpp>
#include <cctype>

BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Literal, text, type)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Call, head, targs, args)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Let, name, type, value)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Assign, name, value)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Store, name, index, more, value)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::If, cond, body, else_body)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::For, name, type, start, end, step, body)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::While, cond, body)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::ParamType, type, access)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Param, name, type)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Size, value, name)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Shared, name, type, size, more)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Private, name, type, size, more)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Const, name, type, value)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Kernel, name, wx, wy, wz, decls)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::PipeBuffer, kind, name, type, size)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::PipeLaunch, kernel, args, gx, gy, gz)
BOOST_FUSION_ADAPT_STRUCT(halfway::text::ast::Pipeline, name, items)

namespace halfway::text {
namespace grammar {

namespace x3 = boost::spirit::x3;
namespace ascii = x3::ascii;
using x3::attr;
using x3::lexeme;
using x3::lit;
using x3::raw;

// The start of the text, so that on_success can turn iterators into offsets.
struct begin_tag;

// Rule ids deriving from Tagged record the offset where their node starts (after whitespace).
struct Tagged {
  template <class It, class Attr, class Ctx>
  void on_success(It const& first, It const&, Attr& node, Ctx const& ctx) const {
    if constexpr (std::is_base_of_v<ast::Pos, Attr>)
      node.offset = static_cast<uint32_t>(first - x3::get<begin_tag>(ctx));
  }
};

auto const idchar = ascii::alnum | lit('_');
auto const identifier = lexeme[raw[(ascii::alpha | lit('_')) >> *idchar]];

// The action of the word rules: the raw[] range gives both the text and where it starts (rules
// with actions get no on_success call with their attribute).
auto const set_text = [](auto& ctx) {
  auto const& range = x3::_attr(ctx);
  x3::_val(ctx).text.assign(range.begin(), range.end());
  x3::_val(ctx).offset = static_cast<uint32_t>(range.begin() - x3::get<begin_tag>(ctx));
};

// Whitespace and `//` comments.
auto const skipper = ascii::space | (lit("//") >> *(x3::char_ - lit('\n')));

// ---- words ----------------------------------------------------------------------------------
x3::rule<class ident_r, std::string> const ident = "an identifier";
auto const ident_def = identifier;

struct name_r;
x3::rule<name_r, ast::Word> const name = "a name";
auto const name_def = identifier[set_text];

struct type_r;
x3::rule<type_r, ast::Word> const type = "a type";
auto const type_def = identifier[set_text];

struct access_r;
x3::rule<access_r, ast::Word> const access = "an access mode (read, write or read_write)";
auto const access_def = identifier[set_text];

struct targ_r;
x3::rule<targ_r, ast::Word> const targ = "a type, rounding mode or lane";
auto const targ_def = lexeme[raw[+idchar]][set_text];

#define HALFWAY_KEYWORD(id, text)                                                                  \
  x3::rule<class id##_r> const id = "'" text "'";                                                  \
  auto const id##_def = lexeme[lit(text) >> !idchar];

HALFWAY_KEYWORD(kw_kernel, "kernel")
HALFWAY_KEYWORD(kw_workgroup, "workgroup")
HALFWAY_KEYWORD(kw_param, "param")
HALFWAY_KEYWORD(kw_buffer, "buffer")
HALFWAY_KEYWORD(kw_shared, "shared")
HALFWAY_KEYWORD(kw_let, "let")
HALFWAY_KEYWORD(kw_if, "if")
HALFWAY_KEYWORD(kw_else, "else")
HALFWAY_KEYWORD(kw_for, "for")
HALFWAY_KEYWORD(kw_to, "to")
HALFWAY_KEYWORD(kw_step, "step")
HALFWAY_KEYWORD(kw_while, "while")
HALFWAY_KEYWORD(kw_const, "const")
HALFWAY_KEYWORD(kw_pipeline, "pipeline")
HALFWAY_KEYWORD(kw_launch, "launch")
HALFWAY_KEYWORD(kw_groups, "groups")
#undef HALFWAY_KEYWORD

// Locals and buffers may be named like keywords. `else`, `param` and `shared` are tried where a
// statement could also start, so they only count as keywords when no '=' or '[' follows.
auto const not_assigned = !(lit('=') | lit('['));

// ---- expressions ----------------------------------------------------------------------------
auto const digits = +ascii::digit;
auto const decimal = digits >> -(lit('.') >> digits) >>
                     -(ascii::char_("eE") >> -ascii::char_("+-") >> digits);

x3::rule<class number_text_r, std::string> const number_text = "a number";
auto const number_text_def =
    lexeme[raw[-lit('-') >> (decimal | lit("inf") | (lit("nan(0x") >> +ascii::xdigit >> ')')) >>
               !idchar]];

x3::rule<class suffix_r, std::string> const suffix = "a type suffix";
auto const suffix_def = lit(':') > ident;

struct number_r : Tagged {};
x3::rule<number_r, ast::Literal> const number = "a constant";
auto const number_def = number_text >> -suffix;

struct boolean_r : Tagged {};
x3::rule<boolean_r, ast::Literal> const boolean = "true or false";
auto const boolean_def = lexeme[raw[(lit("true") | lit("false")) >> !idchar]] >>
                         attr(std::string());

// The expression rules check the syntax and build nothing (no attribute): an expression's
// attribute is only where it starts, and the lowering reads it again from there. Their names are
// those an error quotes.
struct expr_r : Tagged {};
x3::rule<expr_r, ast::Expr> const expr = "an expression";

x3::rule<class expr_name_r> const expr_name = "a name";
auto const expr_name_def = identifier;

x3::rule<class expr_targ_r> const expr_targ = "a type, rounding mode or lane";
auto const expr_targ_def = lexeme[+idchar];

x3::rule<class expr_number_r> const expr_number = "a constant";
auto const expr_number_def = number_text >> -suffix;

x3::rule<class expr_boolean_r> const expr_boolean = "true or false";
auto const expr_boolean_def = lexeme[(lit("true") | lit("false")) >> !idchar];

x3::rule<class expr_targs_r> const expr_targs = "template arguments";
auto const expr_targs_def = lit('<') > expr_targ > *(lit(',') > expr_targ) > lit('>');

x3::rule<class expr_arg_items_r> const expr_arg_items = "an expression or ')'";
auto const expr_arg_items_def = lit(')') | (expr > *(lit(',') > expr) > lit(')'));

x3::rule<class expr_args_r> const expr_args = "'('";
auto const expr_args_def = lit('(') > expr_arg_items;

// A name followed by '<' or '(' is a call: from there on, every part is expected.
x3::rule<class expr_call_r> const expr_call = "a call";
auto const expr_call_def = (expr_name >> &(lit('<') | lit('('))) > -expr_targs > expr_args;

x3::rule<class expr_index_r> const expr_index = "an element";
auto const expr_index_def = (expr_name >> lit('[')) > expr > lit(']') >
                            *(lit('[') > expr > lit(']'));

auto const expr_def = x3::omit[expr_boolean | expr_number | expr_call | expr_index | expr_name];

// A call statement: an atomic whose result is unused.
x3::rule<class targs_r, std::vector<ast::Word>> const targs = "template arguments";
auto const targs_def = lit('<') > targ > *(lit(',') > targ) > lit('>');

x3::rule<class arg_items_r, std::vector<ast::Expr>> const arg_items = "an expression or ')'";
auto const arg_items_def = lit(')') | (expr > *(lit(',') > expr) > lit(')'));

x3::rule<class args_r, std::vector<ast::Expr>> const args = "'('";
auto const args_def = lit('(') > arg_items;

struct call_r : Tagged {};
x3::rule<call_r, ast::Call> const call = "a call";
auto const call_def = (name >> &(lit('<') | lit('('))) > -targs > args;

// ---- statements -----------------------------------------------------------------------------
x3::rule<class stmt_r, ast::Stmt> const stmt = "a statement";

x3::rule<class close_r> const close = "a statement or '}'";
auto const close_def = lit('}');

x3::rule<class block_r, std::vector<ast::Stmt>> const block = "'{'";
auto const block_def = lit('{') > *stmt > close;

struct let_r : Tagged {};
x3::rule<let_r, ast::Let> const let = "a let statement";
auto const let_def = kw_let > name > lit(':') > type > lit('=') > expr > lit(';');

struct assign_r : Tagged {};
x3::rule<assign_r, ast::Assign> const assign = "an assignment";
auto const assign_def = (name >> lit('=')) > expr > lit(';');

struct store_r : Tagged {};
x3::rule<store_r, ast::Store> const store = "a store";
auto const store_def = (name >> lit('[')) > expr > lit(']') > *(lit('[') > expr > lit(']')) >
                       lit('=') > expr > lit(';');

x3::rule<class call_stmt_r, ast::Call> const call_stmt = "a call statement";
auto const call_stmt_def = call > lit(';');

struct if_r : Tagged {};
x3::rule<if_r, ast::If> const if_ = "an if statement";
// `else if` chains: the else block is then that one if statement.
x3::rule<class else_if_r, ast::Stmt> const else_if = "an if statement";
x3::rule<class else_body_r, std::vector<ast::Stmt>> const else_body = "'{' or 'if'";
auto const else_body_def = block | x3::repeat(1)[else_if];
auto const if__def = kw_if > expr > block > -((kw_else >> not_assigned) > else_body);
auto const else_if_def = if_;

struct for_r : Tagged {};
x3::rule<for_r, ast::For> const for_ = "a for statement";
auto const for__def = kw_for > name > lit(':') > type > lit('=') > expr > kw_to > expr > kw_step
                      > expr > block;

struct while_r : Tagged {};
x3::rule<while_r, ast::While> const while_ = "a while statement";
auto const while__def = kw_while > expr > block;

struct jump_word_r;
x3::rule<jump_word_r, ast::Word> const jump_word = "break, continue, barrier or return";
auto const jump_word_def =
    lexeme[raw[(lit("break") | lit("continue") | lit("barrier") | lit("return")) >> !idchar]]
          [set_text];

x3::rule<class jump_r, ast::Word> const jump = "a statement";
auto const jump_def = jump_word > lit(';');

// Assignments and stores first: a local may be named like a keyword (`if = ...;`).
auto const stmt_def = assign | store | let | if_ | for_ | while_ | jump | call_stmt;

// ---- declarations and kernels ---------------------------------------------------------------
x3::rule<class param_type_r, ast::ParamType> const param_type = "a type or buffer<type, access>";
auto const param_type_def =
    (kw_buffer > lit('<') > type > lit(',') > access > lit('>')) | (type >> attr(ast::Word()));

struct param_r : Tagged {};
x3::rule<param_r, ast::Param> const param = "a parameter";
auto const param_def = (kw_param >> not_assigned) > name > lit(':') > param_type > lit(';');

struct size_r : Tagged {};
x3::rule<size_r, ast::Size> const size = "a size (an unsigned 32-bit integer or a constant)";
auto const size_def =
    (x3::uint_parser<uint32_t>() >> !idchar >> attr(std::string())) | (attr(uint32_t{0}) >> ident);

struct shared_r : Tagged {};
x3::rule<shared_r, ast::Shared> const shared = "a shared array";
x3::rule<class dims_r, std::vector<ast::Size>> const more_dims = "'[' or ';'";
auto const more_dims_def = *(lit('[') > size > lit(']'));

auto const shared_def = (kw_shared >> not_assigned) > name > lit(':') > type > lit('[') > size >
                        lit(']') > more_dims > lit(';');

// `let name: type[` starts a private array; `let name: type =` is the first statement, so the
// rule backtracks over the name and the type only.
struct private_r : Tagged {};
x3::rule<private_r, ast::Private> const private_ = "a private array";
auto const private__def = (kw_let >> name >> lit(':') >> type >> lit('[')) > size >
                          lit(']') > more_dims > lit(';');

struct const_value_r : Tagged {};
x3::rule<const_value_r, ast::Literal> const const_value = "a constant value";
auto const const_value_def = boolean | number;

struct const_decl_r : Tagged {};
x3::rule<const_decl_r, ast::Const> const const_decl = "a constant";
auto const const_decl_def = (kw_const >> not_assigned) > name > lit(':') > type >
                            lit('=') > const_value > lit(';');

x3::rule<class decl_r, ast::Decl> const decl = "a declaration";
auto const decl_def = param | shared | private_ | const_decl;

x3::rule<class quoted_r, std::string> const quoted = "a quoted name";
auto const quoted_def =
    lexeme[lit('"') > *((lit('\\') > ascii::char_("\"\\")) |
                        (x3::char_ - lit('"') - lit('\\') - lit('\n'))) > lit('"')];

x3::rule<class kernel_name_r, std::string> const kernel_name = "a kernel name";
auto const kernel_name_def = ident | quoted;

struct kernel_r : Tagged {};
x3::rule<kernel_r, ast::Kernel> const kernel = "a kernel";
auto const kernel_def = kw_kernel > kernel_name > kw_workgroup > lit('(') > size > lit(',') > size >
                        lit(',') > size > lit(')') > lit('{') > *decl;

// ---- pipelines ------------------------------------------------------------------------------
struct pipe_kind_r;
x3::rule<pipe_kind_r, ast::Word> const pipe_kind = "buffer, temp, launch or '}'";
auto const pipe_kind_def = lexeme[raw[(lit("buffer") | lit("temp")) >> !idchar]][set_text];

struct pipe_buffer_r : Tagged {};
x3::rule<pipe_buffer_r, ast::PipeBuffer> const pipe_buffer = "a pipeline buffer";
auto const pipe_buffer_def = pipe_kind > name > lit(':') > type >
                             lit('[') > x3::uint_parser<uint64_t>() > lit(']') > lit(';');

x3::rule<class pipe_arg_r, ast::PipeArg> const pipe_arg = "a buffer name or a constant";
auto const pipe_arg_def = boolean | number | name;

x3::rule<class pipe_args_r, std::vector<ast::PipeArg>> const pipe_args =
    "a buffer name, a constant or ')'";
auto const pipe_args_def = lit(')') | (pipe_arg > *(lit(',') > pipe_arg) > lit(')'));

x3::rule<class group_count_r, uint32_t> const group_count =
    "a workgroup count (an unsigned 32-bit integer)";
auto const group_count_def = x3::uint_parser<uint32_t>() >> !idchar;

struct pipe_launch_r : Tagged {};
x3::rule<pipe_launch_r, ast::PipeLaunch> const pipe_launch = "a launch";
auto const pipe_launch_def = kw_launch > kernel_name > lit('(') > pipe_args > kw_groups >
                             lit('(') > group_count > lit(',') > group_count >
                             lit(',') > group_count > lit(')') > lit(';');

x3::rule<class pipe_item_r, ast::PipeItem> const pipe_item = "buffer, temp, launch or '}'";
auto const pipe_item_def = pipe_launch | pipe_buffer;

x3::rule<class pipe_close_r> const pipe_close = "buffer, temp, launch or '}'";
auto const pipe_close_def = lit('}');

struct pipeline_r : Tagged {};
x3::rule<pipeline_r, ast::Pipeline> const pipeline = "a pipeline";
auto const pipeline_def = kw_pipeline > kernel_name > lit('{') > *pipe_item > pipe_close;

x3::rule<class end_r> const end = "'kernel', 'pipeline' or the end of the text";
auto const end_def = x3::eoi;

BOOST_SPIRIT_DEFINE(ident, name, type, access, targ, kw_kernel, kw_workgroup, kw_param, kw_buffer,
                    kw_shared, kw_let, kw_if, kw_else, kw_for, kw_to, kw_step, kw_while, kw_const,
                    number_text, suffix, number, boolean, expr, targs, arg_items, args, call, stmt,
                    close, block, let, assign, store, call_stmt, if_, else_if, else_body, for_,
                    while_, jump_word, jump, param_type, param, size, more_dims, shared, private_,
                    const_value, const_decl, decl, quoted, kernel_name, kernel, end)
// A second list: one BOOST_SPIRIT_DEFINE takes at most 64 rules (Boost.Preprocessor).
BOOST_SPIRIT_DEFINE(kw_pipeline, kw_launch, kw_groups, pipe_kind, pipe_buffer, pipe_arg, pipe_args,
                    group_count, pipe_launch, pipe_item, pipe_close, pipeline, expr_name, expr_targ,
                    expr_number, expr_boolean, expr_targs, expr_arg_items, expr_args, expr_call,
                    expr_index)

} // namespace grammar

namespace {

// X3 reports a position near a failure, before or after the whitespace the failed part skipped.
// "found" names the next token. The caret goes under it, except when a punctuation mark was
// expected and the next token is on a later line: then the mark is missing at the end of the
// earlier line (a ';' say), and the caret goes just after its last token. Inside a quoted name
// whitespace is part of the name, so the next character is what was found.
[[noreturn]] void expected(const Source& source, const std::string& what, uint32_t where) {
  std::string_view text = source.text();
  bool in_quotes = what == "'\"'";
  uint32_t next = in_quotes ? where : source.skip_blank(where);
  uint32_t after = in_quotes ? where : source.end_of_previous_token(where);
  bool punctuation =
      what.size() == 3 && what[0] == '\'' && !std::isalnum(static_cast<unsigned char>(what[1]));
  uint32_t at = next;
  if (next >= text.size() || (punctuation && source.line_of(after) < source.line_of(next)))
    at = after;
  std::string found = source.token_at(next);
  std::string message = "expected " + what + ", found " + found;
  // A private array declared among the statements reads as a local's `let` without its value.
  if (what == "'='" && found == "'['") {
    size_t line = text.rfind('\n', next >= 1 ? next - 1 : 0);
    line = line == std::string_view::npos ? 0 : line + 1;
    if (text.substr(source.skip_blank(static_cast<uint32_t>(line)), 4) == "let ")
      message += "; private arrays are declared before the first statement";
  }
  source.fail(at, message);
}

// Parses `rule` at `pos` into `out`; advances `pos` past it (and the whitespace before it) and
// returns true on a match, returns false without moving when the rule does not match at all, and
// reports an expectation failure inside it.
template <class Rule, class Attr>
bool parse_at(const Source& source, uint32_t& pos, const Rule& rule, Attr& out) {
  namespace x3 = boost::spirit::x3;
  std::string_view text = source.text();
  const char* begin = text.data();
  const char* first = begin + pos;
  const char* last = begin + text.size();
  try {
    auto parser = x3::with<grammar::begin_tag>(begin)[rule];
    if (!x3::phrase_parse(first, last, parser, grammar::skipper, out))
      return false;
  } catch (const x3::expectation_failure<const char*>& e) {
    expected(source, e.which(), static_cast<uint32_t>(e.where() - begin));
  }
  pos = static_cast<uint32_t>(first - begin);
  return true;
}

} // namespace

std::optional<ast::Kernel> SyntaxReader::next_kernel(std::vector<ast::Const>& consts,
                                                     std::vector<ast::Pipeline>& pipelines) {
  boost::spirit::x3::unused_type none;
  for (bool more = true; more;) {
    ast::Const c;
    ast::Pipeline p;
    more = false;
    if (parse_at(source_, pos_, grammar::const_decl, c)) {
      consts.push_back(std::move(c));
      more = true;
    } else if (parse_at(source_, pos_, grammar::pipeline, p)) {
      pipelines.push_back(std::move(p));
      more = true;
    }
  }
  if (parse_at(source_, pos_, grammar::end, none))
    return std::nullopt;
  ast::Kernel k;
  if (!parse_at(source_, pos_, grammar::kernel, k))
    expected(source_, "'kernel', 'pipeline' or the end of the text", pos_);
  return k;
}

std::optional<ast::Stmt> SyntaxReader::next_statement() {
  ast::Stmt s;
  if (parse_at(source_, pos_, grammar::stmt, s))
    return s;
  boost::spirit::x3::unused_type none;
  if (!parse_at(source_, pos_, grammar::close, none))
    expected(source_, "a statement or '}'", pos_);
  return std::nullopt;
}

} // namespace halfway::text
