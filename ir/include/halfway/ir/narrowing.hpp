#pragma once
// The narrowing analysis: for every float narrowing in a kernel (f32->f16, f32->bf16, f32->fp8,
// f64->f32, f64->f16, ...), decide whether the code generator must emit a narrowing barrier or
// can prove that rounding twice (in the source type, then in the target type) equals rounding
// once. Every backend reads this one analysis; specs/f16-narrowing-barrier.md §2 gives the rules
// and their proofs.

#include "halfway/ir/kernel.hpp"

#include <optional>
#include <string>
#include <vector>

namespace halfway::ir {

// What feeds the narrowing.
enum class SiteShape : uint8_t {
  NotRounded, // a load, parameter, constant, widening, or an exact op (neg, abs, min, max,
              // copysign, floor, ceil, select) of such values
  Single,     // one rounding op other than a product: a+b, a/b, sqrt(a), exp(a), ...
  Product,    // a*b
  MulAdd,     // a*b + c, c + a*b, a*b - c, c - a*b, fma(a, b, c)
  Chain,      // anything longer, or a value read from a local
};

enum class Decision : uint8_t {
  NoBarrierNotRounded, // rule 1: the value is exact in the source type, one rounding happens
  NoBarrierFigueroa,   // rule 2: one +,-,*,/,sqrt of target-exact operands, q >= 2p+2
  Barrier,             // rule 3: two roundings may differ from one
};

struct NarrowingSite {
  ExprId convert = kNone;  // the Convert node that narrows
  ExprId producer = kNone; // its operand
  ScalarType from = ScalarType::F32, to = ScalarType::F16;
  SiteShape shape = SiteShape::NotRounded;
  Decision decision = Decision::Barrier;
  std::string rule;  // one sentence naming the rule that decided, for `halfway sites`
  std::string where; // "store to out16", "let v", ...
  uint32_t line = 0;
  // The producers of the narrowed value (analysis/accumulation.hpp). These are the ops that get
  // `contract` (LLVM) or lose NoContraction (SPIR-V) when single rounding is accepted; under
  // strict rounding they never do.
  std::vector<ExprId> producers;

  bool needs_barrier() const { return decision == Decision::Barrier; }
};

// Sites in program order (statement order, then expression tree order).
std::vector<NarrowingSite> narrowing_sites(const Kernel& k);

std::string_view name(SiteShape s);
std::string_view name(Decision d);
// The sites as a table, one line each: "out16[i] = narrow<f16>(...)  f32->f16  mul-add  barrier
// (rule 3: ...)". Used by the IR dump and `halfway sites`. With `single_rounding_reason` (the
// reason of a single-rounding opt-in the kernel's budget holds), a site that would carry a
// barrier says "lifted by single rounding: REASON" instead, which is what code generation does.
std::string describe_sites(const Kernel& k,
                           const std::optional<std::string>& single_rounding_reason = {});

} // namespace halfway::ir
