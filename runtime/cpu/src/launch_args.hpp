#pragma once
// The KernelArgs of one launch (codegen/llvm/abi.hpp), built from rt::Args. In checked mode the
// buffers a kernel writes are replaced by copies, so that a launch that fails leaves the caller's
// buffers as they were (device.hpp); commit() copies the results back.

#include "halfway/codegen/llvm/abi.hpp"
#include "halfway/runtime/buffer.hpp"

#include <map>
#include <vector>

namespace halfway::rt::cpu_detail {

class LaunchArgs {
public:
  LaunchArgs(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args, bool copy_written);

  const codegen::KernelArgs& get() const { return args_; }
  codegen::ErrorRecord& error() { return error_; }
  // True when no two buffer parameters share storage (the code may then assume noalias).
  bool buffers_distinct() const { return distinct_; }
  // Refreshes the copies from the caller's buffers (before a rerun) and clears the error.
  void reset();
  // Copies the results back into the caller's buffers.
  void commit();

private:
  codegen::KernelArgs args_;
  codegen::ErrorRecord error_;
  std::vector<void*> buffers_;
  std::vector<uint64_t> lengths_, scalars_;
  std::map<HostBuffer*, HostBuffer> copies_;
  bool distinct_ = true;
};

} // namespace halfway::rt::cpu_detail
