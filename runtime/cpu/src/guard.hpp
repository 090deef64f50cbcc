#pragma once
// Turning a fault in a buffer's guard into a failed launch.
//
// Buffers are guarded (rt::HostBuffer): generated code under MemoryChecks::Guarded reaches any
// out-of-bounds element at a 32-bit index inside the inaccessible guard after the data, and the
// access faults. run_guarded() runs the entry with a SIGSEGV/SIGBUS handler armed for this
// thread: a fault whose address lies in one of the launch's guard ranges, on a thread that is
// running generated code for that launch, jumps back out of the entry (siglongjmp) and the
// launch fails; the device then restores the buffers and reruns with explicit checks to report
// the interpreter's error.
//
// Process-wide state, and why it is acceptable: a signal disposition is per process, so the
// handler is installed once (on the first guarded launch) and never removed. It owns only faults
// on threads that have armed it (a thread-local pointer to the launch's ranges, set around the
// call into generated code) at addresses inside those ranges; every other fault is passed on to
// the handler that was installed before it (or the default action, which then ends the process
// as before), so real crashes, sanitizers and other libraries' handlers behave as they did. The
// generated code holds no locks and owns no resources, so leaving it by siglongjmp loses
// nothing. The ranges themselves are per launch, not a registry: nothing global grows.

#include "halfway/codegen/llvm/abi.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace halfway::rt::cpu_detail {

// [begin, end) address ranges of a launch's guards.
using GuardRanges = std::vector<std::pair<uintptr_t, uintptr_t>>;

// The entry's return value, or -1 when it faulted inside `guards` (the address in *fault).
int32_t run_guarded(codegen::llvm::EntryFn entry, const codegen::llvm::KernelArgs* args,
                    uint64_t begin, uint64_t end, void* shared, const GuardRanges& guards,
                    uintptr_t* fault);

} // namespace halfway::rt::cpu_detail
