#pragma once
// A `pipeline` block of a .hk file as the text says it (specs/fusion.md): buffers with their
// types and lengths, and launches naming a kernel, its arguments and its workgroup counts. Names
// are not resolved here: the pipeline library binds the launches to the file's kernels, and its
// errors point at the places recorded here.

#include "halfway/ir/types.hpp"
#include "halfway/support/error.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace halfway::text {

struct PipelineText {
  struct Buffer {
    std::string name;
    ir::ScalarType type = ir::ScalarType::F32;
    uint64_t size = 0;
    bool temporary = false;
    ErrorContext where;
  };
  // A buffer's name (`buffer` set) or a constant: its type and bit pattern.
  struct Arg {
    std::string buffer;
    ir::ScalarType type = ir::ScalarType::U32;
    uint64_t bits = 0;
    ErrorContext where;
  };
  struct Launch {
    std::string kernel;
    std::vector<Arg> args;
    std::array<uint32_t, 3> groups{1, 1, 1};
    ErrorContext where;
  };

  std::string name;
  std::vector<Buffer> buffers;
  std::vector<Launch> launches;
  ErrorContext where;
};

} // namespace halfway::text
