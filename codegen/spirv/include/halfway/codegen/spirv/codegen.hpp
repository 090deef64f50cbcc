#pragma once
// The SPIR-V backend: a verified kernel and its precision budget in, a Vulkan compute module out.
//
// What the module looks like (the contract with the Vulkan device that runs it):
//  - SPIR-V 1.3 (Vulkan 1.1 and later), one GLCompute entry point "main" with LocalSize = the
//    kernel's workgroup, structured control flow only.
//  - Buffer parameter i (counting buffers only, in parameter order) is a std430 runtime array at
//    descriptor set 0, binding i, decorated NonWritable / NonReadable per its access mode.
//  - One push-constant block at offset 0, laid out by `Shader::push` (see PushSlot): the logical
//    grid and how it was dispatched, buffer lengths for len(x), the scalar parameters, and the zero
//    word of the opaque identity. The device writes it with write_push_constants().
//  - Dispatch (plan_dispatch): the logical grid itself when it fits the device's per-dimension
//    group limits; otherwise, for grids with z == 1, x folded into (x, y) and y moved to z. The
//    module maps the physical group id back with multiply-adds of push constants (no division:
//    lavapipe runs a udiv per lane, which measurably slowed saxpy) and returns at once in the
//    extra groups of a folded x.
//
// Exactness, the point of halfway (specs/f16-narrowing-barrier.md §3):
//  - Strict by default: every float add, sub, mul, div and negate carries NoContraction, and the
//    module declares RoundingModeRTE for every float width it uses (where the target supports it),
//    plus DenormPreserve and SignedZeroInfNanPreserve where the target supports them.
//  - Narrowing barrier: NoContraction on the producing ops (strict already), plus, for drivers in
//    the fusing-driver table (drivers.hpp), an opaque identity on the value being narrowed: its
//    bits XOR a push-constant zero, before the OpFConvert.
//  - Single rounding (budget): NoContraction and the opaque identity are dropped on the producers
//    of every narrowing site. Relaxed accumulation (budget): NoContraction is dropped on the ops of
//    loop-carried accumulations.
//
// Formats SPIR-V lacks:
//  - bf16 has no SPIR-V type. bf16 values are held as the f32 of the same value (exact); bf16
//    buffers are u16 arrays. Loads widen by a 16-bit shift; narrowing to bf16 rounds the f32 (or
//    f64) value with integer code, correctly, in every rounding mode. bf16 add, sub, mul, div and
//    sqrt are computed in f32 and rounded to bf16: correctly rounded by Figueroa's theorem
//    (24 >= 2*8+2). bf16 fma is refused (two roundings would not be the interpreter's one).
//  - fp8 (e4m3, e5m2) values are held as their bits in a u32; widening decodes them with integer
//    code (exact) and narrowing rounds with integer code (correct, every mode, saturation).
//  - f16 arithmetic uses native half (Float16). f16 values that are only loaded and widened, or
//    narrowed and stored, need only StorageBuffer16BitAccess. f16 locals and shared elements are
//    held as f32 (exact); 8/16-bit integer locals and shared elements as 32-bit integers.
//  - Narrowings from f64 to f16, bf16 and fp8 round to odd in f32 first, which makes the second
//    rounding the correct one (24 >= p + 2). A direct f64 -> f16 OpFConvert is not used: lavapipe
//    lowers it through f32 with two nearest-even roundings (measured: wrong near f16 ties).
//  - Directed roundings (rtz, rtp, rtn) to f16/bf16/fp8 use the integer code; f64 -> f32 ones step
//    the nearest-even result by one ulp where it lies on the wrong side.
//  - Integer division guards its divisor (x86 traps on 0 and on MIN / -1, and lavapipe runs
//    shaders in-process); MIN / -1 wraps and MIN % -1 is 0, as on the interpreter.
//  - Shared arrays are zeroed at workgroup start (specs/ir.md) unless the kernel provably fills
//    them before its first barrier (arr[local_id(0)] = v from every lane, as reductions do).
//
// Memory safety (checks.cpp; on unless Options::checks is off):
//  - Every buffer and shared access whose index is not proven in range at generation time (an
//    enclosing `if lt(i, len(b))`, a `for` up to len(b), a constant, local_id within a shared array
//    of at least the workgroup's size) runs under a bounds check; signed indices below zero are out
//    of bounds. Out of bounds, the access is skipped (a load yields 0) and the fault is recorded in
//    the control buffer, an extra storage buffer after the parameters. Why not robustness: it only
//    covers buffers, and clamps or drops silently; shared memory has nothing, and lavapipe runs
//    shaders in-process, so a shared store past the end writes the host's heap.
//  - The device reports the first fault as the interpreter's error: the lowest linear workgroup,
//    then the earliest site in evaluation order, then the lowest lane. A launch only learns that
//    some invocation faulted; reruns of the reporting form (Options::report_faults) find which
//    (checks.cpp says how, and where loops make the order differ).
//  - Every loop polls the control buffer's cancel word at its test, so the host can end a running
//    dispatch (timeouts, interrupts) and the device stays usable, except a short loop with constant
//    bounds and no loop inside (ir/analysis/loops.hpp), which the code around it covers: a poll
//    per iteration cost matmul_tiled a third of its time on lavapipe. Every invocation polls it on
//    entry too, in the same test as the grid's bounds, so that a long loop-free grid ends soon.
//    One test and one return: lavapipe runs whatever follows a return under a return mask, and
//    a second early return cost act<f32> 40% of its time.
//  - Where the driver ends loops by itself (Target::loop_limit: lavapipe's 65,535 iterations per
//    invocation), iterations are counted and reaching the limit is reported, not silently wrong.
//  - Integer division by zero and shift overflow are checked only with Options::check_arith (the
//    device's LaunchOptions::check_bounds, the CLI's --check): a zero divisor, or a shift amount
//    not below the operand's width (negative signed amounts included), is noted as a fault of its
//    own site (CheckSite::kind DivideByZero / ShiftOverflow, the amount as the index) and
//    reported like an out-of-bounds access. Without it the divisor is made safe so nothing traps,
//    and shifts follow SPIR-V (an amount past the width gives an undefined value, no trap).
//    Data races are not checked on this backend, with or without it.
//  - Sizes derived from the kernel are computed in 64 bits; shared memory over 4 GiB as held is
//    refused (Error(Limit)) naming the kernel and array.
//
// Refused at generation time (Error(Unsupported), naming the kernel, node and construct): erf (no
// GLSL.std.450 instruction; this backend does not emit a polynomial), GLSL.std.450 functions that
// only take 16/32-bit floats applied to f64, bf16 fma, integer-to-f32/f64 conversions with a
// directed rounding mode, and push-constant blocks over 128 bytes.

#include "halfway/ir/verifier.hpp"
#include "halfway/policy/budget.hpp"
#include "halfway/support/error.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace halfway::codegen::spirv {

// What the generator must know about the device it generates for. Plain data, so that tests can
// describe drivers this machine does not have.
struct Target {
  struct Width {
    bool rounding_mode_rte = true;             // shaderRoundingModeRTEFloatN
    bool denorm_preserve = false;              // shaderDenormPreserveFloatN
    bool signed_zero_inf_nan_preserve = false; // shaderSignedZeroInfNanPreserveFloatN
  };
  std::string device;     // for messages: "llvmpipe (LLVM 15.0.6, 256 bits)"
  uint32_t driver_id = 0; // VkDriverId; 0 when unknown
  Width f16, f32, f64;
  // Whether narrowings that need a barrier get the opaque identity; nullopt: the driver table
  // decides from driver_id (drivers.hpp).
  std::optional<bool> opaque_identity;
  // Iterations after which the driver ends any loop by itself (0: none). Checked modules then
  // detect a loop that did not end by its own exit and report it (checks.cpp).
  uint32_t loop_limit = 0;

  // RTE for every width, nothing else, no opaque identity: a conservative portable target.
  static Target generic();
  // Lavapipe as measured on this project's machine (docs/measured.md).
  static Target lavapipe();

  bool uses_opaque_identity() const;
  const Width& width(uint32_t bits) const { return bits == 16 ? f16 : bits == 64 ? f64 : f32; }
};

struct Options {
#ifdef NDEBUG
  bool validate = false; // run the SPIRV-Tools validator on the result (throws Internal if invalid)
#else
  bool validate = true;
#endif
  bool debug_names = true; // OpName for parameters, locals and shared arrays
  // Bounds checks on every buffer and shared access, cancel polls at loop tests and the loop
  // count, all through the control buffer (see "Memory safety" above). Off only for the benchmark's
  // unchecked baseline: such a module may corrupt the host (lavapipe runs in-process), never
  // launch it on untrusted kernels.
  bool checks = true;
  // The reporting form of a checked module: faults are recorded in detail (kWorkgroup, kKey, the
  // index) instead of only raising kFaulted. The device builds it only after a launch faulted.
  bool report_faults = false;
  // With checks: also note integer division and remainder by zero and shifts by at least the
  // width as faults (the checks the interpreter always makes and that are not free here).
  bool check_arith = false;
};

// The control buffer: the storage buffer every checked module binds after its buffer parameters
// (Shader::control_binding), as u32 words. The host zeroes it except where noted.
namespace control {
inline constexpr uint32_t kWorkgroup = 0;   // atomic min of faulting linear workgroups (init ~0)
inline constexpr uint32_t kKey = 1;         // atomic min of (site << lane_bits | lane) (init ~0)
inline constexpr uint32_t kTargetGroup = 2; // keys are recorded in this workgroup only (init ~0)
inline constexpr uint32_t kTargetKey = 3;   // this key stores its index below (init ~0)
inline constexpr uint32_t kIndexLow = 4;    // the target key's index, low and high words
inline constexpr uint32_t kIndexHigh = 5;
inline constexpr uint32_t kCancel = 6;  // the host raises it: loops end, the invocation returns
inline constexpr uint32_t kFaulted = 7; // set by any fault (launch form, not report_faults)
inline constexpr uint32_t kWords = 12;
inline constexpr uint32_t kNone = 0xffffffffu;
} // namespace control

// One checked access: what the host needs to name a fault recorded at this site.
struct CheckSite {
  // OutOfBounds; Limit: a loop the driver cut (Target::loop_limit); DivideByZero, ShiftOverflow
  // (Options::check_arith): `node` is the div, rem, shl or shr, and for shifts the recorded index
  // is the amount (signed when index_signed).
  ErrorKind kind = ErrorKind::OutOfBounds;
  ir::Space space = ir::Space::Buffer;
  uint32_t mem = 0;            // parameter index (buffers) or shared-array index
  uint32_t node = 0xffffffffu; // the load's expression id; ir::kNone for stores and atomics
  uint32_t line = 0;
  const char* access = "";   // "load from", "store to", "atomic on"
  bool index_signed = false; // the index is signed: the recorded 64 bits are an int64
  // A rank-2 or rank-3 array: the dimension this site checks (0 is the outermost); -1 otherwise.
  int dimension = -1;
};

// One word of the push-constant block.
enum class PushSlot : uint8_t {
  GroupsX,      // u32: logical grid, x (also the bound of the early return)
  GroupsY,      // u32: logical grid, y
  GroupsZ,      // u32: logical grid, z
  FoldX,        // u32: Dispatch::fold_x (physical x count when x is folded into y, else 0)
  Folded,       // u32: 1 when x is folded (logical y then comes from the physical z), else 0
  Zero,         // u32: 0, the opaque identity's operand
  BufferLength, // u32: element count of buffer parameter `param`
  Scalar,       // scalar parameter `param`, encoded by push_scalar_bits (4 or 8 bytes)
};

// How a logical grid of workgroups is dispatched.
struct Dispatch {
  std::array<uint32_t, 3> physical{1, 1, 1};
  uint32_t fold_x = 0; // physical x when the logical x is folded into (x, y); 0 otherwise
};

// The dispatch for `logical` on a device allowing `max_groups` per dimension: the grid itself when
// it fits; else x folded into y = ceil(x / max_x) rows of ceil(x / y) groups, and y moved to z.
// Throws Error(Unsupported), naming `kernel`, for a grid neither fits (a folded x with z > 1, or
// a dimension beyond max_x * max_y).
Dispatch plan_dispatch(const std::array<uint32_t, 3>& logical,
                       const std::array<uint32_t, 3>& max_groups, const std::string& kernel);

struct PushEntry {
  PushSlot slot = PushSlot::GroupsX;
  uint32_t param = 0;  // kernel parameter index, for BufferLength and Scalar
  uint32_t offset = 0; // bytes
  uint32_t size = 4;   // bytes
};

struct BufferBinding {
  uint32_t param = 0;   // kernel parameter index
  uint32_t binding = 0; // in descriptor set 0
};

// The device features the module's capabilities need (names follow Vulkan's feature structs).
struct Needs {
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool shader_int16 = false;
  bool shader_int64 = false;
  bool shader_float64 = false;
  bool storage_buffer_16bit_access = false;
  bool storage_buffer_8bit_access = false;
  bool shader_buffer_int64_atomics = false;
  bool shader_shared_int64_atomics = false;
  bool operator==(const Needs&) const = default;
};

struct Shader {
  std::string kernel;
  std::vector<uint32_t> words;
  std::string entry = "main";
  std::vector<BufferBinding> bindings;
  std::vector<PushEntry> push;
  uint32_t push_bytes = 0; // a multiple of 4 (0: no push constants)
  Needs needs;
  std::vector<std::string> capabilities; // as declared, e.g. "Shader", "StorageBuffer16BitAccess"
  std::vector<std::string> extensions;
  uint32_t opaque_identities = 0; // narrowings that got the opaque identity
  uint32_t no_contraction = 0;    // instructions decorated NoContraction
  policy::Budget budget;          // what it was generated under
  double codegen_ms = 0;          // generate() wall time, validation excluded
  // Checked modules (Options::checks): the control buffer's binding, the checked sites in
  // evaluation order (a fault's key names its site), and how many low key bits hold the lane.
  std::optional<uint32_t> control_binding;
  std::vector<CheckSite> sites;
  uint32_t lane_bits = 0;
  uint32_t loop_limit = 0;    // Target::loop_limit it was generated for
  uint32_t elided_checks = 0; // accesses proven in bounds at generation time
  // Bytes of shared memory as the module holds it (f16, bf16 and 8/16-bit elements in 32 bits).
  uint64_t shared_bytes = 0;
};

// Generates the module. Throws Error(Unsupported) naming the kernel and construct for what the
// backend cannot express, and Error(Internal) when options.validate finds the module invalid.
Shader generate(const ir::VerifiedKernel& kernel, const policy::Budget& budget,
                const Target& target = Target::lavapipe(), const Options& options = {});

// The value a scalar parameter of type `type` with bit pattern `bits` has in its push-constant
// slot: f16 and bf16 widened to f32 bits, fp8 as zero-extended bits, 8/16-bit integers sign- or
// zero-extended to 32 bits, the rest unchanged.
uint64_t push_scalar_bits(ir::ScalarType type, uint64_t bits);

// Fills `out` (at least shader.push_bytes long) for one launch. `scalars[i]` is parameter i's bit
// pattern (ignored for buffers), `lengths[i]` buffer parameter i's element count (ignored for
// scalars); `groups` the logical grid and `dispatch` its plan_dispatch().
void write_push_constants(const Shader& shader, const ir::Kernel& kernel,
                          std::span<const uint64_t> scalars, std::span<const uint64_t> lengths,
                          const std::array<uint32_t, 3>& groups, const Dispatch& dispatch,
                          std::span<std::byte> out);

// SPIRV-Tools, target environment Vulkan 1.1 (SPIR-V 1.3). Empty when valid, else the messages.
std::string validate(std::span<const uint32_t> words);
// Human-readable disassembly with friendly names (`halfway emit --spirv`).
std::string disassemble(std::span<const uint32_t> words);

} // namespace halfway::codegen::spirv
