#pragma once
// What a caller may choose about the code the LLVM backend generates, beyond the kernel and its
// precision budget. Every field that changes the generated code is part of variant(), which the
// launch memo keys on (runtime/memo.hpp): two launches with different variants never share code.

#include <cstdint>

namespace halfway::codegen::llvm {

// How an accepted single-rounding opt-in (policy::OptIn::SingleRounding) is realised at a
// narrowing site that would otherwise carry a barrier. Without the opt-in both are strict.
enum class SingleRoundingMode : uint8_t {
  // `contract` on the site's producing ops: x86 forms vfmadd, so f16(a*b + c) becomes
  // round16(round32(a*b + c)). Fast; within the §4 bound of the spec; not always the exact
  // single rounding (the f32 FMA still rounds once before the narrowing).
  Contract,
  // A round-to-odd intermediate: the exact a*b (+ c) in binary64 (product exact, TwoSum for the
  // add), rounded to odd in binary32, then to nearest-even in the target: exactly one rounding
  // of the exact value, and it still vectorises. Applies to product and multiply-add sites of
  // f32 operands narrowed to f16 or bf16; other shapes fall back to Contract.
  Exact,
};

// How loads, stores and atomics are kept inside their buffer or shared array.
enum class MemoryChecks : uint8_t {
  // The default. Buffers are guarded (rt::HostBuffer): an index of 32 bits or fewer becomes a
  // zero-extended 32-bit offset, so every out-of-bounds one lands in the inaccessible guard after
  // the data and faults, which the CPU device catches; the access itself costs nothing extra.
  // 64-bit indices and shared arrays get an explicit comparison (shared lengths are constants,
  // so LLVM folds most of them). A failing comparison returns 1 at once without recording: the
  // device reruns the launch with Explicit checks to report the error.
  Guarded,
  // Every access compared with its length; a failure is recorded with the interpreter's detail
  // (kernel, node, buffer, index, length, workgroup, lane). Checked launches, launches with an
  // unguarded buffer, and the rerun after a guard fault.
  Explicit,
  // Nothing: an out-of-bounds access is undefined. Only for benchmarks' baselines (the code this
  // backend generated before guards); no device launch uses it.
  None,
};

struct LlvmOptions {
  MemoryChecks memory = MemoryChecks::Guarded;
  // Report integer division by zero and shift overflow as halfway::Error with the interpreter's
  // detail. Off: division and shifts get the defined results documented in
  // codegen/llvm/README.md.
  bool check_arith = false;
  // Poll KernelArgs::cancel at every loop back edge (kernel while/for loops, the loop over
  // workgroups) and return 2 when it is nonzero. Only launches with a timeout or a cancel flag
  // use this variant, so the poll (a volatile load, which also keeps `while true {}` from being
  // optimised away) costs the others nothing.
  bool cancellable = false;
  SingleRoundingMode single_rounding = SingleRoundingMode::Contract;
  // The buffers of one launch do not overlap: buffer pointers are `noalias`, so the vectoriser
  // needs no runtime overlap checks. The CPU device clears it when the same buffer is passed for
  // two parameters.
  bool noalias_buffers = true;
  // Width hint (llvm.loop.vectorize.width) for lane loops that narrow f32 to f16. LLVM 19's x86
  // cost model vectorises that conversion only 4 wide; 16 is 2.5x faster on AVX-512
  // (docs/measured.md). 0: 16 when the host has AVX-512; else 8 with F16C for code that rounds
  // to f16 (fp8 decoding, which only widens, runs faster without it); else no hint. 1: never.
  unsigned narrowing_vector_width = 0;
  // Every launch of this code has at most 2^32 lanes, so global_id(0) never wraps: the code may
  // then run `if (global_id(0) < n)` as a loop over [0, n) (lane_guard.hpp). The CPU device sets
  // it per launch.
  bool grid_fits_u32 = true;

  // Failures are recorded in the ErrorRecord (per-lane failed flags, no lanes in step).
  bool records_errors() const { return check_arith || memory == MemoryChecks::Explicit; }

  // The memo component: a stable number that differs whenever the generated code may differ.
  uint64_t variant() const;
};

} // namespace halfway::codegen::llvm
