#include "launch_args.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace halfway::rt::cpu_detail {

LaunchArgs::LaunchArgs(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args,
                       const std::atomic<uint32_t>* cancel) {
  size_t n = k.params.size();
  buffers_.assign(n, nullptr);
  lengths_.assign(n, 0);
  scalars_.assign(n, 0);
  // The per-parameter slots the generated entry loads (codegen/llvm/abi.hpp).
  for (const codegen::llvm::AbiParam& p : codegen::llvm::groups_abi(k)) {
    switch (p.slot) {
    case codegen::llvm::AbiSlot::BufferData: {
      HostBuffer* b = args[p.index].buffer;
      buffers_[p.index] = b->data();
      for (size_t j = 0; j < p.index; ++j)
        if (k.params[j].is_buffer() && args[j].buffer == b)
          distinct_ = false;
      break;
    }
    case codegen::llvm::AbiSlot::BufferLength:
      lengths_[p.index] = args[p.index].buffer->size();
      break;
    case codegen::llvm::AbiSlot::Scalar:
      scalars_[p.index] = args[p.index].scalar;
      break;
    case codegen::llvm::AbiSlot::NumGroups: // KernelArgs' fixed fields, below
    case codegen::llvm::AbiSlot::Error:
    case codegen::llvm::AbiSlot::Cancel:
    case codegen::llvm::AbiSlot::Shared: // arguments of the entry itself
    case codegen::llvm::AbiSlot::GroupBegin:
    case codegen::llvm::AbiSlot::GroupEnd:
      break;
    }
  }
  args_.buffers = buffers_.data();
  args_.lengths = lengths_.data();
  args_.scalars = scalars_.data();
  std::copy(grid.groups.begin(), grid.groups.end(), args_.num_groups);
  args_.error = &error_;
  // The generated code reads the word with a plain (volatile) 32-bit load; std::atomic<uint32_t>
  // is lock-free and has uint32_t's representation.
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                std::atomic<uint32_t>::is_always_lock_free);
  args_.cancel = reinterpret_cast<const volatile uint32_t*>(cancel);
}

namespace {

// The snapshot arena of this thread: grown, never shrunk below what the largest launch needed.
std::byte* arena(uint64_t bytes) {
  struct Arena {
    std::unique_ptr<std::byte[]> p;
    uint64_t size = 0;
  };
  thread_local Arena a;
  if (bytes > a.size) {
    a.p.reset();
    a.p.reset(new std::byte[bytes]);
    a.size = bytes;
  }
  return a.p.get();
}

} // namespace

namespace {

// Whether parameter i is the first written parameter bound to its buffer.
bool first_written(const ir::Kernel& k, std::span<const Arg> args, size_t i) {
  auto written = [&](size_t p) {
    return k.params[p].is_buffer() && k.params[p].access != ir::Access::Read;
  };
  if (!written(i))
    return false;
  for (size_t j = 0; j < i; ++j)
    if (written(j) && args[j].buffer == args[i].buffer)
      return false;
  return true;
}

} // namespace

uint64_t written_bytes(const ir::Kernel& k, std::span<const Arg> args) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (first_written(k, args, i))
      bytes += args[i].buffer->size_bytes();
  return bytes;
}

Snapshot::Snapshot(const ir::Kernel& k, std::span<const Arg> args, support::ThreadPool& pool,
                   unsigned threads)
    : pool_(&pool), threads_(threads) {
  bytes_ = written_bytes(k, args);
  if (bytes_ == 0)
    return;
  std::byte* p = arena(bytes_);
  for (size_t i = 0; i < k.params.size(); ++i)
    if (first_written(k, args, i)) {
      HostBuffer* b = args[i].buffer;
      if (b->size())
        support::parallel_copy(p, b->data(), b->size_bytes(), pool_, threads_);
      saved_.push_back({b, p});
      p += b->size_bytes();
    }
}

void Snapshot::restore() const {
  for (const Saved& s : saved_)
    if (s.buffer->size())
      support::parallel_copy(s.buffer->data(), s.copy, s.buffer->size_bytes(), pool_, threads_);
}

} // namespace halfway::rt::cpu_detail
