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

// Where a kernel's parts are in the text, so that verifier errors can point there. Only the
// header is kept by a parse: the offsets of nodes and statements (4 bytes a node, 8 a line) would
// be a fifth of the memory of dense text, and they serve only to place a verifier error, so that
// rare path parses the text again with them (parse_source's with_maps).
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
// when it is given, and are checked and dropped otherwise. The maps hold the offsets of nodes and
// statements only `with_maps`; parsing is deterministic, so a second parse with them gives the
// offsets of the kernels the first one returned.
std::vector<Lowered> parse_source(const Source& source,
                                  std::vector<PipelineText>* pipelines = nullptr,
                                  bool with_maps = false);

} // namespace halfway::text
