#pragma once
// The verifier is the gate between whoever builds a kernel (the DSL, the text parser, a fusion
// pass) and everything that reads one: the interpreter and the backends only accept a
// VerifiedKernel. It rejects ill-typed or ill-formed kernels with a halfway::Error that names the
// kernel, the node and the reason; it never asserts on user input.

#include "halfway/ir/kernel.hpp"

#include <memory>

namespace halfway::ir {

// A kernel that passed verify(), immutable from then on, with its structural hash computed once
// (the launch memo looks it up on every launch).
class VerifiedKernel {
public:
  const Kernel& kernel() const { return *kernel_; }
  const Kernel* operator->() const { return kernel_.get(); }
  const std::string& name() const { return kernel_->name; }
  uint64_t hash() const { return hash_; }

private:
  friend VerifiedKernel verify(Kernel kernel);
  friend VerifiedKernel verify(std::shared_ptr<const Kernel> kernel);
  VerifiedKernel(std::shared_ptr<const Kernel> k, uint64_t h) : kernel_(std::move(k)), hash_(h) {}
  std::shared_ptr<const Kernel> kernel_;
  uint64_t hash_;
};

// Throws halfway::Error (ErrorKind::Verify) on the first problem found. Checks, among others:
// operand and result types against the op table; implicit narrowing (a value stored, assigned or
// bound to a narrower float type without narrow<>); stores to read-only buffers and loads from
// write-only ones; uses of undefined or out-of-scope locals; break/continue outside loops; and
// barriers in control flow that depends on lane ids (non-uniform control flow).
//
// Absolute caps, whatever the device, so that no size derived from a verified kernel overflows
// downstream (uint32 lane counts, byte sizes of shared memory): a workgroup has at most
// kMaxWorkgroupLanes lanes (the product of its three sizes, computed without overflow), and the
// kernel's shared arrays take at most kMaxSharedBytes bytes in all (each array's elements times
// its element size, each array aligned to its element, as rt::shared_bytes counts them). Devices
// have their own, usually lower, limits (rt::check_limits).
inline constexpr uint32_t kMaxWorkgroupLanes = 1024;
inline constexpr uint64_t kMaxSharedBytes = uint64_t{1} << 31;
// Private arrays take at most this many bytes per lane in all (their elements times the element
// size). Every device keeps them per lane: the CPU device next to shared memory (1024 lanes x
// 16 KiB = 16 MiB per workgroup), Vulkan in Function storage.
inline constexpr uint64_t kMaxPrivateBytes = 16384;
VerifiedKernel verify(Kernel kernel);
// The same without a copy: the VerifiedKernel shares `kernel`, which must never change again
// (text::KernelFile verifies the kernels it holds this way).
VerifiedKernel verify(std::shared_ptr<const Kernel> kernel);

} // namespace halfway::ir
