#pragma once
// A parsed .hk file that remembers where each kernel came from. The CLI works with these: it
// picks a kernel by name, and when the verifier rejects one, the error points at the line of the
// text the user wrote rather than at a node number.

#include "halfway/ir/kernel.hpp"
#include "halfway/ir/verifier.hpp"
#include "halfway/text/pipeline_text.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::text {

class KernelFile {
public:
  // Parses `text`, which came from `file_name` (used in messages only). Throws Error(Parse).
  KernelFile(std::string text, std::string file_name);

  const std::string& file_name() const;
  const std::string& text() const;
  // The kernels, in the order the file defines them, not yet verified.
  const std::vector<ir::Kernel>& kernels() const;
  std::vector<std::string> kernel_names() const;

  // The file's `pipeline` blocks, in order (specs/fusion.md).
  const std::vector<PipelineText>& pipelines() const;
  // The pipeline called `name`, or the file's only one when `name` is empty. Throws Error(Usage)
  // naming the file and the pipelines it has otherwise.
  const PipelineText& pipeline(std::string_view name) const;

  // The kernel called `name`. Throws Error(Usage) "unknown kernel K in FILE; it has A, B".
  const ir::Kernel& kernel(std::string_view name) const;

  // Verifies a kernel, by name or position. A verifier error (ErrorKind::Verify) carries the file,
  // line and column of the statement or expression it is about, and that line for a caret.
  ir::VerifiedKernel verify(std::string_view name) const;
  ir::VerifiedKernel verify(size_t index) const;
  std::vector<ir::VerifiedKernel> verify_all() const;

private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

// Reads and parses a .hk file. A missing, unreadable or non-regular file, or one larger than
// kMaxTextBytes (parse.hpp), throws Error(Usage) naming the path and the reason; the size is
// checked before the file is read. Malformed text throws Error(Parse).
KernelFile parse_file(const std::string& path);

} // namespace halfway::text
