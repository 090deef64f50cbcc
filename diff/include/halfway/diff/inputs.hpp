#pragma once
// Input generators for differential tests. Double rounding is rare on ordinary data: random f32
// products narrowed to f16 round differently in two steps than in one about once in 16,000 (see
// tests/diff/inputs_test.cpp). A test that must see whether a device kept its narrowing barriers
// needs inputs that sit on the ties, where about half of them show it. Hence three families:
//  - plain fills of one buffer: uniform random values over chosen binades, zeros, iota, cycles
//    of special values and of the values around a target format's subnormal and overflow edges;
//  - correlated operands a, b, c (f32) for v = a*b or v = a*b + c narrowed to f16 or bf16, built to
//    land within one f32 ulp of a rounding tie of the target (and checked exactly afterwards), or
//    to cancel, or to hit the target's edges, signed zeros, NaN and infinity;
//  - make_inputs: buffers and arguments for a whole kernel, for the CLI and for tests.
// Every generator is deterministic for its seed on every platform (std::mt19937_64, with no
// standard distribution in between).

#include "halfway/ir/kernel.hpp"
#include "halfway/runtime/buffer.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace halfway::diff::inputs {

// Binades: values v with 2^min <= |v| < 2^(max+1), unbiased exponents.
struct Exponents {
  int min = -4;
  int max = 4;
};

// Float buffers: a uniform sign, an exponent uniform in `range` (clamped to the type: binades
// below the smallest normal give subnormals of that binade), uniform fraction bits; never NaN or
// infinity. Other buffers: uniform bits.
void fill_random(rt::HostBuffer& buffer, uint64_t seed, Exponents range = {});
// Every bit pattern equally likely (NaNs, infinities and subnormals included).
void fill_random_bits(rt::HostBuffer& buffer, uint64_t seed);
void fill_zeros(rt::HostBuffer& buffer, bool negative = false);
// Element i is start + i * step, rounded to nearest into a float type, truncated (and wrapped)
// into an integer type.
void fill_iota(rt::HostBuffer& buffer, double start = 0, double step = 1);
// Element i is bits[i % bits.size()].
void fill_cycle(rt::HostBuffer& buffer, std::span<const uint64_t> bits);

// +-0, +-1, +-smallest subnormal, +-largest subnormal, +-smallest normal, +-largest finite,
// +-inf, +-quiet NaN and a signalling NaN (formats without them skip them; E4M3 has no infinity).
std::vector<uint64_t> special_bits(ir::ScalarType type);
// Values of `type` around the edges of the narrower float `target`: its smallest subnormal, half
// of it (the underflow tie), the tie between the two smallest subnormals, its largest subnormal,
// the tie between that and the smallest normal, the smallest normal, the largest finite value and
// the overflow threshold (largest finite + half an ulp); each exactly and 1 and 2 ulps of `type`
// either side, with both signs.
std::vector<uint64_t> boundary_bits(ir::ScalarType type, ir::ScalarType target);

// Operands of v = a*b + c, f32 buffers of one length.
struct MulAdd {
  rt::HostBuffer a, b, c;
};

// a*b within half an f32 ulp of a rounding tie of `target` (f16 or bf16) and not on it, so that
// RN32(a*b) is the tie: the two-step result and the single rounding differ exactly when a*b lies
// on the side of the odd neighbour, about half the time. c is +0. `ties` picks the binades of the
// ties (clamped to the target's range; binades below the smallest normal give ties between
// subnormals). Each element is checked with near_tie.
MulAdd product_ties(size_t n, ir::ScalarType target, uint64_t seed, Exponents ties = {});
// a*b + c within one f32 ulp of a tie and not on it, with RN32(a*b) + c exactly the tie (c is
// the exact difference): the product's rounding error alone decides, and about half differ.
MulAdd mul_add_ties(size_t n, ir::ScalarType target, uint64_t seed, Exponents ties = {});
// |a*b| 2^8 to 2^20 times larger than the result a*b + c: the product's f32 rounding error, up to
// |a*b|*2^-24, is then worth many target ulps, and single rounding may differ by more than one.
MulAdd cancellation(size_t n, ir::ScalarType target, uint64_t seed);
// A fixed list: products at and 1-2 f32 ulps around the target's subnormal and overflow edges
// (exact and inexact products, both signs), signed-zero cases (including a product that
// underflows to -0 in f32), NaN and infinity operands, and an f32 product that overflows where
// the exact a*b + c does not.
MulAdd edge_triples(ir::ScalarType target);
// n elements mixing the above: 40% mul_add_ties, 40% product_ties, 10% cancellation, the rest
// edge_triples, interleaved.
MulAdd tie_stress(size_t n, ir::ScalarType target, uint64_t seed);

// Exact facts about one triple, for the generators' checks and for tests.
// Whether a*b + c lies within one f32 ulp (of the tie) of a rounding tie of `target` (a midpoint
// of two consecutive values, or the overflow threshold) without being exactly on it.
bool near_tie(ir::ScalarType target, float a, float b, float c);
// RN_t(RN32(RN32(a*b) + c)): the interpreter's two steps (c = +0 for a product alone).
uint64_t two_step(ir::ScalarType target, float a, float b, float c);
// RN_t(a*b + c): one rounding of the exact value.
uint64_t single_rounding(ir::ScalarType target, float a, float b, float c);

// What make_inputs fills the kernel's input buffers with.
enum class Kind : uint8_t {
  Random, // fill_random with the default binades
  Ties,   // tie_stress for the first three f32 inputs (product ties when there are two)
  Edges,  // every float input cycles through special_bits and boundary_bits
  Zeros,
  Iota,
};
std::string_view name(Kind kind);
std::optional<Kind> parse_kind(std::string_view text); // "random", "ties", "edges", "zeros", "iota"

// How a kernel uses one buffer parameter, found by following loaded values through locals.
struct BufferUse {
  // The element format when the kernel unpacks the buffer's (u32) words: f16, bf16, e4m3, e5m2.
  std::optional<ir::ScalarType> packed;
  // The memories (space, param or shared-array id) whose loads, stores or atomics take an index
  // computed from the buffer's values.
  std::vector<std::pair<ir::Space, uint32_t>> index_of;
};
BufferUse buffer_use(const ir::Kernel& kernel, uint32_t param);

// u32 words of packed finite `element` values (never NaN or infinity), binades -4..4 as
// fill_random; Edges mixes in the format's finite edges (zeros, subnormals, smallest normal,
// largest finite) on every other element, Ties on every fourth; Zeros gives zeros.
void fill_packed(rt::HostBuffer& buffer, ir::ScalarType element, Kind kind, uint64_t seed);
// Uniform integers in [0, limit).
void fill_indices(rt::HostBuffer& buffer, uint64_t limit, uint64_t seed);
// Fills `buffer` (parameter `param` of `kernel`) for how the kernel uses it: packed words with
// fill_packed, index buffers with in-range indices (below the smallest length of what they
// index; `lengths` gives each parameter's buffer length, shared arrays have theirs). Returns
// false, leaving the buffer alone, when the use asks for nothing special or `kind` is Iota (and
// Zeros for indices): those the caller fills as usual.
bool fill_for_use(const ir::Kernel& kernel, uint32_t param, rt::HostBuffer& buffer, Kind kind,
                  uint64_t seed, std::span<const uint64_t> lengths);

// Exhaustive sweeps (`--inputs sweep`): one input buffer holds every bit pattern of a 16- or 8-bit
// float type, so a comparison covers every value that buffer can hold.
struct Sweep {
  uint32_t param = 0;                           // the swept buffer parameter
  ir::ScalarType element = ir::ScalarType::F16; // f16, bf16, e4m3 or e5m2: whose codes are swept
  uint32_t lanes = 1; // codes per element: 1, or the codes a u32 word packs (f16/bf16 2, fp8 4)
  uint64_t codes() const { return uint64_t{1} << ir::info(element).bits; } // 65536 or 256
  uint64_t elements() const { return codes(); } // the buffer's length: every code once per lane
};
// The buffer a sweep enumerates: `name` when not empty, else the kernel's only candidate. A
// candidate is a read or read_write buffer of f16, bf16, e4m3 or e5m2, or of u32 words the kernel
// unpacks as one of them (buffer_use). Usage error naming the kernel when `name` is no candidate,
// when there is none, or when there are several and `name` is empty.
Sweep plan_sweep(const ir::Kernel& kernel, std::string_view name = {});
// Fills `buffer` (sweep.elements() elements of the parameter's type): element i holds code i;
// packed, lane j of word i holds code (i + j * codes / lanes) mod codes, so that every code sits
// once in every lane position and the lanes of one word differ.
void fill_sweep(rt::HostBuffer& buffer, const Sweep& sweep);

// Buffers and arguments for one launch of `kernel` over n lanes. Moving keeps `args` valid;
// copying is not allowed.
struct KernelInputs {
  std::vector<rt::HostBuffer> buffers; // one per buffer parameter, in parameter order
  std::vector<rt::Arg> args;           // one per parameter, pointing into `buffers`
  rt::Grid grid;                       // rt::Grid::for_lanes(kernel, n)

  KernelInputs() = default;
  KernelInputs(KernelInputs&&) = default;
  KernelInputs& operator=(KernelInputs&&) = default;
  KernelInputs(const KernelInputs&) = delete;
  KernelInputs& operator=(const KernelInputs&) = delete;
};

// Every buffer parameter gets n elements. Read and read_write buffers are filled per `kind`
// (Ties: the first three f32 inputs become a, b, c of tie_stress, aimed at the target of the
// kernel's first f16 or bf16 narrowing site, f16 if none; the other inputs are random. It suits
// elementwise kernels computing a*b + c from their first inputs; elsewhere it only gives unusual
// values), after fill_for_use had its say: words the kernel unpacks get packed finite values and
// index buffers in-range indices, whatever the kind. Write-only buffers are zeroed. Scalars not
// named in `scalars` (bit patterns, by parameter name) are 0 for integers (they often size loops or
// index buffers) and, for floats, one value drawn by fill_random from the seed: a float scalar of 0
// would hide most of what a kernel computes (y = a*x + y with a = 0 leaves y as it was). A name
// that is not a scalar parameter is a Usage error.
KernelInputs make_inputs(const ir::Kernel& kernel, size_t n, Kind kind, uint64_t seed,
                         const std::map<std::string, uint64_t>& scalars = {});

} // namespace halfway::diff::inputs
