#pragma once
// From syntax to IR: resolves names (locals are scoped; a name is the innermost local, else a
// scalar parameter; `x[i]` is a buffer parameter or shared array), infers each node's type from its
// operands by the op table's type rule, and turns constants into bit patterns. It checks only what
// building the IR needs; everything else (types of operands, implicit narrowing, scopes of
// shadowed names, barriers) is the verifier's job, so the two never disagree.

#include "ast.hpp"
#include "halfway/ir/kernel.hpp"
#include "halfway/text/pipeline_text.hpp"
#include "source.hpp"

#include <utility>
#include <vector>

namespace halfway::text {

// Where a kernel's parts are in the text, so that verifier errors can point there.
struct SourceMap {
  uint32_t header = 0;         // the `kernel` keyword
  std::vector<uint32_t> exprs; // each expression node's first character, by ExprId
  // (line, the first statement that starts on it), by line: statements are lowered in text
  // order. A sorted vector, as a map would take 48 bytes a line.
  std::vector<std::pair<uint32_t, uint32_t>> stmts;
  uint32_t statement_at(uint32_t line) const; // its offset, or kNone
};

struct Lowered {
  ir::Kernel kernel;
  SourceMap map;
};

// Parses and lowers every kernel of the text, one top-level statement at a time; rejects two
// kernels (or two pipelines) with the same name. The file's pipeline blocks go to `pipelines`
// when it is given, and are checked and dropped otherwise.
std::vector<Lowered> parse_source(const Source& source,
                                  std::vector<PipelineText>* pipelines = nullptr);

} // namespace halfway::text
