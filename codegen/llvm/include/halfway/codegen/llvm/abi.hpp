#pragma once
// The calling convention between generated code and the CPU runtime. Everything the generated
// entry function reads or writes at run time is in these plain structs; the code generator reads
// their fields at the offsets asserted here, so the two sides cannot drift apart silently.
//
//   int32_t entry(const KernelArgs* args, uint64_t group_begin, uint64_t group_end, void* shared);
//
// runs workgroups [group_begin, group_end) in linear order (x fastest, then y, then z) on the
// calling thread. `shared` points to at least LoweredKernel::shared_bytes bytes of 64-byte aligned
// scratch for this thread; the entry zeroes it at the start of every workgroup. It returns 0; 1
// when an access failed its check (recorded in *args->error under MemoryChecks::Explicit or
// check_arith; under Guarded nothing is recorded and the device reruns with Explicit checks);
// 2 when cancellable code saw *args->cancel nonzero. An out-of-bounds access at a 32-bit index
// under Guarded faults in the buffer's guard instead of returning (runtime/cpu/src/guard.hpp).

#include "halfway/ir/kernel.hpp"
#include "halfway/support/error.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace halfway::codegen::llvm {

// The first failure of a launch. The generated code claims it with an atomic compare-exchange
// on `claimed`, so that when several threads fail at once exactly one record is written.
struct ErrorRecord {
  uint32_t claimed = 0; // 0 free, 1 written
  uint32_t site = 0;    // index into LoweredKernel::sites
  uint32_t lane = 0;    // local invocation index inside the workgroup
  uint32_t pad = 0;
  uint64_t group = 0;  // linear workgroup id
  uint64_t index = 0;  // the offending index or shift amount (two's complement for negatives)
  uint64_t length = 0; // the length of the buffer or shared array
};

struct KernelArgs {
  void* const* buffers = nullptr;    // per parameter: element data (null for scalars)
  const uint64_t* lengths = nullptr; // per parameter: element count (0 for scalars)
  const uint64_t* scalars = nullptr; // per parameter: the scalar's bit pattern (0 for buffers)
  uint32_t num_groups[3] = {1, 1, 1};
  uint32_t pad = 0;
  ErrorRecord* error = nullptr;
  // Nonzero: stop (cancellable code polls it with a volatile load at loop back edges). Raised by
  // the device's watchdog at the deadline or when LaunchOptions::cancel is raised.
  const volatile uint32_t* cancel = nullptr;
};

static_assert(offsetof(KernelArgs, buffers) == 0 && offsetof(KernelArgs, lengths) == 8 &&
              offsetof(KernelArgs, scalars) == 16 && offsetof(KernelArgs, num_groups) == 24 &&
              offsetof(KernelArgs, error) == 40 && offsetof(KernelArgs, cancel) == 48 &&
              sizeof(KernelArgs) == 56);
static_assert(offsetof(ErrorRecord, claimed) == 0 && offsetof(ErrorRecord, site) == 4 &&
              offsetof(ErrorRecord, lane) == 8 && offsetof(ErrorRecord, group) == 16 &&
              offsetof(ErrorRecord, index) == 24 && offsetof(ErrorRecord, length) == 32);

using EntryFn = int32_t (*)(const KernelArgs* args, uint64_t group_begin, uint64_t group_end,
                            void* shared);

// The entry unpacks KernelArgs into the parameters of an inner "groups" function (always
// inlined), so that buffer pointers can be `noalias` parameters. This table is the one statement
// of that parameter list: the code generator declares, names and passes the parameters in its
// order, and the runtime fills KernelArgs by walking the same rows, so neither side restates the
// other's positions.
enum class AbiSlot : uint8_t {
  BufferData,   // KernelArgs::buffers[param]: a pointer (noalias when the device allows)
  BufferLength, // KernelArgs::lengths[param]: u64 element count
  Scalar,       // KernelArgs::scalars[param]: u64 bit pattern
  NumGroups,    // KernelArgs::num_groups[dimension]: u32
  Error,        // KernelArgs::error
  Cancel,       // KernelArgs::cancel
  Shared,       // the entry's `shared` argument: this thread's scratch (always noalias)
  GroupBegin,   // the entry's `group_begin`
  GroupEnd,     // the entry's `group_end`
};

struct AbiParam {
  AbiSlot slot;
  uint32_t index = 0; // the kernel parameter (buffers and scalars) or the dimension (NumGroups)
};

// The groups function's parameters for kernel `k`: per kernel parameter in order, a buffer's data
// and length or a scalar's bits; then num_groups x, y, z, the error record, the cancel word, the
// shared scratch, and the group range.
std::vector<AbiParam> groups_abi(const ir::Kernel& k);

// Where KernelArgs keeps a slot that the entry loads (not Shared, GroupBegin or GroupEnd).
uint64_t kernel_args_offset(AbiSlot slot);

// One place in the kernel where checked code can fail, described as the interpreter describes it
// (interp/src/memory.cpp, eval_int.cpp), so that both report the same error.
struct CheckSite {
  ErrorKind kind = ErrorKind::OutOfBounds;
  uint32_t node = ir::kNone; // the load, div, rem or shift node; kNone for stores and atomics
  std::string node_text;     // ir::print_expr of the node
  uint32_t line = 0;         // the node's or the statement's source line
  std::string buffer;        // OutOfBounds: buffer or shared array name
  // "load from buffer x", "store to shared tile", "atomic on buffer y"; "div of i32",
  // "shl of u32": the start of the message.
  std::string what;
  bool index_signed = false; // the index (or shift amount) is of a signed type
  // OutOfBounds on a rank-2 or rank-3 array: the dimension whose index is outside (0 is the
  // outermost), and the recorded length is that dimension's size; -1 otherwise.
  int dimension = -1;
};

} // namespace halfway::codegen::llvm
