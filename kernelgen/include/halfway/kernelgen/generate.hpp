#pragma once
// Random kernels for differential testing (specs/kernelgen.md). Every kernel is valid and free of
// undefined behaviour by construction, so the interpreter runs it without error and any difference
// between a device and the interpreter is the device's (or the comparison's) doing:
//  - loads of read-only buffers and shared arrays take an index reduced modulo the length;
//    stores, and loads of read_write buffers, use the lane's own element (global_id(0) < n, the
//    buffer length), so no two lanes touch one element except through atomics;
//  - integer division and remainder divide by or(d, 1), never zero; shift amounts are masked below
//    the width;
//  - loops run at most kMaxTrip iterations: `for` counts up to a bound below kMaxTrip, `while`
//    increments its own counter first; neither counter is written elsewhere;
//  - shared memory is written once per lane (own slot, and commutative atomics) before a barrier
//    at the top level, in uniform control flow, and only read after it; a rank-2 or rank-3 shared
//    array splits the lane's slot into per-dimension indices;
//  - private arrays (rank 1 to 3, per lane) are indexed by values reduced modulo each dimension;
//  - atomics on a buffer all use one commutative operation and never bind the old value, so the
//    final contents do not depend on the order of lanes; nothing else reads or writes that buffer.
// Ops and types come from the op table (ir::info) and the type table: an op added to
// HALFWAY_OPS with an existing type rule is generated without a change here. Every kernel is a
// function of (seed, index) alone.

#include "halfway/diff/inputs.hpp"
#include "halfway/ir/kernel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace halfway::kernelgen {

inline constexpr uint32_t kMaxTrip = 5;

struct GenOptions {
  // Fraction of kernels (in 1/256) restricted to ops whose device precision is "exact" or
  // "correctly rounded": those are compared bit for bit on every device.
  uint32_t exact_only_256 = 128;
  // Fraction of kernels (in 1/256) that get the single-rounding opt-in, and of those, the
  // fraction compared by the rounding models (exact models) instead of the bound.
  uint32_t single_rounding_256 = 48;
  uint32_t exact_models_256 = 128;
  // Fraction of kernels (in 1/256) that get a loop-carried accumulation stored to an output of
  // its own, and the relaxed-accumulation opt-in (compared by the §5 bound).
  uint32_t relaxed_accumulation_256 = 32;
  // Top-level statements before the final stores, and the deepest expression tree.
  uint32_t max_statements = 10;
  uint32_t max_depth = 4;
};

// A generated kernel with everything needed to run and compare it again.
struct Generated {
  ir::Kernel kernel;
  uint64_t seed = 0, index = 0;
  // The launch's lanes along x, y and z (multiples of the workgroup's); buffers hold one element
  // per lane of the whole grid, lane (x, y, z) owning element x + X * (y + Y * z).
  uint32_t lanes = 0, lanes_y = 1, lanes_z = 1;
  diff::inputs::Kind inputs = diff::inputs::Kind::Random;
  uint64_t input_seed = 0;
  bool exact_only = false;           // only exact and correctly rounded ops
  bool single_rounding = false;      // the kernel holds the single-rounding opt-in
  bool exact_models = false;         // compared with Options::exact_models
  bool relaxed_accumulation = false; // the kernel holds the relaxed-accumulation opt-in
};

// The kernel named "fz_<seed>_<index>", verified by ir::verify before it is returned (a kernel
// the verifier refuses is a bug of the generator: Error(Internal) naming it).
Generated generate(uint64_t seed, uint64_t index, const GenOptions& options = {});

// Ops of the table the generator draws from: every op whose type rule it knows (all non-leaf
// rules) plus the leaves it builds itself. Exposed for the coverage test.
std::vector<ir::Op> generated_ops();

// Whether the op table states the op as exact or correctly rounded on devices (its device
// precision text starts with "exact" or "correctly rounded").
bool device_exact(ir::Op op);

// Statements of a kernel, nested ones included.
size_t count_statements(const ir::Kernel& k);

} // namespace halfway::kernelgen
