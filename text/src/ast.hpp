#pragma once
// The syntax tree the Spirit X3 grammar produces. It records only what the text says, with the
// byte offset where each part starts; names are not resolved and types not inferred here. That
// work is done by lower.cpp, in plain C++, so that the grammar stays small (X3 is slow to compile)
// and semantic errors get precise messages instead of X3's generic "expected ...".

#include <boost/spirit/home/x3/support/ast/variant.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace halfway::text::ast {

namespace x3 = boost::spirit::x3;

// Where a node starts, as a byte offset into the source text (set by the grammar's on_success).
struct Pos {
  uint32_t offset = 0;
};

// An identifier, type name, template argument or keyword, with its position.
struct Word : Pos {
  std::string text;
};

// A constant: its text ("1.5", "-inf", "nan(0x7e00)", "true", "0") and its type suffix, empty when
// the text has none (only builtin dimensions are written without one).
struct Literal : Pos {
  std::string text;
  std::string type;
};

// An expression: where it starts. The grammar checks an expression's syntax, reporting its errors,
// but keeps no tree of it: the lowering reads it again from the text (lower.cpp) and builds its
// IR as it reads, so that the syntax of a huge expression never exists next to its IR.
struct Expr : Pos {};

// A call statement (an atomic whose result is unused).
struct Call : Pos {
  Word head;
  std::vector<Word> targs; // the <...> arguments; empty when there are none
  std::vector<Expr> args;
};

struct Let;
struct Assign;
struct Store;
struct If;
struct For;
struct While;

// A statement. A Call is an atomic whose result is unused; a Word is break, continue, barrier or
// return.
struct Stmt : x3::variant<x3::forward_ast<Let>, x3::forward_ast<Assign>, x3::forward_ast<Store>,
                          x3::forward_ast<Call>, x3::forward_ast<If>, x3::forward_ast<For>,
                          x3::forward_ast<While>, Word> {
  using base_type::base_type;
  using base_type::operator=;
};

struct Let : Pos {
  Word name;
  Word type;
  Expr value;
};

struct Assign : Pos {
  Word name;
  Expr value;
};

struct Store : Pos {
  Word name;
  Expr index;
  std::vector<Expr> more; // the indices after the first, on a rank-2 or rank-3 array
  Expr value;
};

// `else if c { ... }` is read as an else block holding that one if statement.
struct If : Pos {
  Expr cond;
  std::vector<Stmt> body;
  std::vector<Stmt> else_body;
};

struct For : Pos {
  Word name;
  Word type;
  Expr start, end, step;
  std::vector<Stmt> body;
};

struct While : Pos {
  Expr cond;
  std::vector<Stmt> body;
};

// `buffer<type, access>` (access set) or a scalar `type` (access empty).
struct ParamType {
  Word type;
  Word access;
};

struct Param : Pos {
  Word name;
  ParamType type;
};

// A workgroup or shared-array size: a number, or the name of a constant (name set).
struct Size : Pos {
  uint32_t value = 0;
  std::string name;
};

struct Shared : Pos {
  Word name;
  Word type;
  Size size;
  std::vector<Size> more; // the dimensions after the first, on a rank-2 or rank-3 array
};

// `let name: type[d0][d1]...;` among the declarations: a private (per-lane) array.
struct Private : Pos {
  Word name;
  Word type;
  Size size;
  std::vector<Size> more;
};

// `const NAME: TYPE = LITERAL;`, at file level or among a kernel's declarations.
struct Const : Pos {
  Word name;
  Word type;
  Literal value;
};

struct Decl : x3::variant<Param, Shared, Private, Const> {
  using base_type::base_type;
  using base_type::operator=;
};

// A kernel's header and declarations. Its statements are read one at a time (SyntaxReader), so
// that the syntax of a whole kernel body never exists at once.
struct Kernel : Pos {
  std::string name;
  Size wx, wy, wz;
  std::vector<Decl> decls;
};

// ---- pipelines (specs/fusion.md) -----------------------------------------------------------

// `buffer NAME: TYPE[SIZE];` or `temp NAME: TYPE[SIZE];` inside a pipeline.
struct PipeBuffer : Pos {
  Word kind; // buffer or temp
  Word name;
  Word type;
  uint64_t size = 0;
};

// A launch argument: a buffer's name or a constant with its type suffix.
struct PipeArg : x3::variant<Literal, Word> {
  using base_type::base_type;
  using base_type::operator=;
};

// `launch KERNEL(ARGS) groups(X, Y, Z);`
struct PipeLaunch : Pos {
  std::string kernel;
  std::vector<PipeArg> args;
  uint32_t gx = 0, gy = 0, gz = 0;
};

struct PipeItem : x3::variant<PipeBuffer, PipeLaunch> {
  using base_type::base_type;
  using base_type::operator=;
};

struct Pipeline : Pos {
  std::string name;
  std::vector<PipeItem> items;
};

} // namespace halfway::text::ast
