#pragma once
// The fusion pass (specs/fusion.md): two consecutive launches A then B, where B reads a temporary
// t that A writes, become one kernel when the pass can prove from the IR that the result is the
// same, bit for bit:
//  - elementwise: A writes t only at its own global index, B reads t only at its own global index,
//    same one-dimensional grid and workgroup: the fused kernel runs A's body, then B's, in each
//    lane, with t kept in a local of t's element type;
//  - epilogue: A is any kernel whose one store to t is at an index e that does not depend on
//    memory, whose launch provably stores each element of t exactly once (an enumeration of a
//    slice of A, pipeline/src/coverage.hpp), and B is elementwise over t: A's store becomes B's
//    body applied to the stored value at index e.
// Otherwise the pair is refused with a reason. The fused kernel is named fused(A+B) (the plain
// kernels it is built from, in order, joined by '+'; see fused_name) and registered with the
// precision policy under its parts, so that its budget is the meet of theirs.

#include "halfway/pipeline/pipeline.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::policy {
class Registry;
}

namespace halfway::pipeline {

enum class FusionKind { Elementwise, Epilogue };
std::string_view name(FusionKind kind);

struct Fused {
  FusionKind kind;
  std::string producer, consumer; // kernel names of A and B
  std::string temporary;          // the buffer that no longer exists
  std::string name;               // the fused kernel's name
  std::string proof;              // why every element B reads holds what A stored, in words
};

struct Refused {
  std::string producer, consumer;
  size_t launch = 0; // position of A in the pipeline the pass was looking at (0-based)
  std::string reason;
};

struct FuseResult {
  Pipeline pipeline; // the fused pipeline
  std::vector<Fused> fused;
  std::vector<Refused> refused;
};

// The name of the kernel fused from the plain kernels `parts`: "fused(a+b+c)". Kernel names may
// hold any character (a quoted name in .hk text), so inside a part each of the characters
// `\`, `+`, `(` and `)` is written after a backslash: parts "x+y" and "f(z)" make
// "fused(x\+y+f\(z\))". fused_parts(fused_name(parts)) == parts for non-empty parts.
std::string fused_name(const std::vector<std::string>& parts);

// The parts of a name that fused_name() makes; none for a name of another form (not
// "fused(...)", an empty part, an unescaped parenthesis inside, or a backslash before anything
// but the four characters above).
std::optional<std::vector<std::string>> fused_parts(std::string_view name);

// Fuses every consecutive pair it can, left to right; a fused kernel may fuse again with the
// launch after it (a chain of three elementwise kernels becomes one). A later consumer of A's
// output moves up next to A and fuses when no launch in between writes a buffer it reads or
// touches a buffer it writes (specs/fusion.md §2, "Across launches"). Registers every fused
// kernel with `registry` (the process-wide one when null). Checks `p` first (check()).
FuseResult fuse(const Pipeline& p, policy::Registry* registry = nullptr);

} // namespace halfway::pipeline
