#pragma once
// A pipeline: a sequence of kernel launches over named buffers that the launches share
// (specs/fusion.md). Each buffer has a fixed element type and length, so that the fusion pass can
// compare lengths and grids when it proves its conditions. A buffer marked temporary is one that
// nothing outside the pipeline reads: the runner allocates it (zeroed) for the run, and the
// fusion pass may remove it once no launch reads it.

#include "halfway/ir/verifier.hpp"
#include "halfway/runtime/buffer.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace halfway::pipeline {

struct BufferDecl {
  std::string name;
  ir::ScalarType type = ir::ScalarType::F32;
  uint64_t size = 0;      // elements
  bool temporary = false; // nothing outside the pipeline reads it
};

// One argument of a launch, for the kernel parameter at the same position: the pipeline buffer
// named `buffer` for a buffer parameter, the bit pattern `scalar` for a scalar one.
struct LaunchArg {
  std::string buffer;
  uint64_t scalar = 0;

  static LaunchArg of(std::string name) { return {std::move(name), 0}; }
  static LaunchArg bits(uint64_t bits) { return {{}, bits}; }
  static LaunchArg f32(float v);
  static LaunchArg u32(uint32_t v) { return {{}, v}; }
};

struct Launch {
  ir::VerifiedKernel kernel;
  std::vector<LaunchArg> args; // one per kernel parameter, in parameter order
  rt::Grid grid;
};

struct Pipeline {
  std::string name;
  std::vector<BufferDecl> buffers;
  std::vector<Launch> launches;

  // The declaration named `name`, or null.
  const BufferDecl* find_buffer(std::string_view name) const;
  // The pipeline buffer bound to kernel parameter `param` of launch `launch` (null for a scalar).
  const BufferDecl* bound(const Launch& launch, uint32_t param) const;
};

// Throws a Usage error naming the pipeline, launch, parameter or buffer when the pipeline is not
// well formed: duplicate or empty buffer names, a zero-length buffer, an argument count that
// differs from the kernel's parameters, an unknown buffer, a buffer bound to a scalar parameter or
// a scalar to a buffer, an element type that differs from the parameter's, an empty grid, or a
// temporary that some launch reads before any launch writes it.
void check(const Pipeline& p);

// The kernel parameter of `launch` at position `param` ("launch 2 (silu), parameter t"), for
// messages.
std::string describe(const Pipeline& p, size_t launch, std::optional<uint32_t> param = {});

} // namespace halfway::pipeline
