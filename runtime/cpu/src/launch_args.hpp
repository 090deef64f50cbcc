#pragma once
// The KernelArgs of one launch (codegen/llvm/abi.hpp), built from rt::Args, and the snapshot that
// lets a failed launch leave the caller's buffers as they were (device.hpp).

#include "halfway/codegen/llvm/abi.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/support/thread_pool.hpp"

#include <atomic>
#include <vector>

namespace halfway::rt::cpu_detail {

class LaunchArgs {
public:
  // `cancel`: the word cancellable code polls; it must outlive the launch.
  LaunchArgs(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args,
             const std::atomic<uint32_t>* cancel);

  const codegen::llvm::KernelArgs& get() const { return args_; }
  codegen::llvm::ErrorRecord& error() { return error_; }
  // True when no two buffer parameters share storage (the code may then assume noalias).
  bool buffers_distinct() const { return distinct_; }
  // Clears the error record (before a rerun).
  void reset() { error_ = {}; }

private:
  codegen::llvm::KernelArgs args_;
  codegen::llvm::ErrorRecord error_;
  std::vector<void*> buffers_;
  std::vector<uint64_t> lengths_, scalars_;
  bool distinct_ = true;
};

// The contents of every buffer bound to a write or read_write parameter, taken before the
// launch runs; restore() puts them back after a failure. The generated code writes the caller's
// buffers directly (no copy-back on success): the copy is one memcpy per written byte, the
// least any scheme can do that restores arbitrary partial writes. The bytes live in a per-thread
// arena reused across launches, so a steady stream of launches does not fault in fresh pages.
// Bytes of the distinct buffers bound to write or read_write parameters.
uint64_t written_bytes(const ir::Kernel& k, std::span<const Arg> args);

class Snapshot {
public:
  // Copies large buffers on `pool` (`threads` as in support::ThreadPool::run): one thread alone
  // does not reach the memory bandwidth the kernel itself gets.
  Snapshot(const ir::Kernel& k, std::span<const Arg> args, support::ThreadPool& pool,
           unsigned threads);
  void restore() const;
  uint64_t bytes() const { return bytes_; }

private:
  struct Saved {
    HostBuffer* buffer;
    std::byte* copy;
  };
  std::vector<Saved> saved_;
  support::ThreadPool* pool_;
  unsigned threads_;
  uint64_t bytes_ = 0;
};

} // namespace halfway::rt::cpu_detail
