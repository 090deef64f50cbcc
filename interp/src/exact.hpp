#pragma once
// Exact evaluation of a narrowing site's producer expression, for the single-rounding model and
// for shadow records (shadow.hpp defines the producer expression and what a record holds).
//
// Two ways to the exact value:
//  - error-free transformations, when the expression is a sum of at most two terms, each a leaf
//    or a product of two leaves, of f32, f16 or bf16 (a*b, a*b+c, a*b-c, c-a*b, fma(a,b,c),
//    a*b+c*d, a+b): every product is exact in double (at most 48 bits, no overflow or
//    underflow), and TwoSum gives the sum exactly as a double-double;
//  - otherwise MPFR, each op at the precision that makes it exact (a product at the sum of its
//    operands' precisions, a sum at the span between the operands' highest and lowest bits).
// The exact value is then rounded to odd into a double (53 >= p + 2 bits for every narrowing
// target), which makes the final rounding into the target, in any direction, exactly one rounding
// of the exact value (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums").

#include "halfway/numerics/formats.hpp"
#include "program.hpp"

namespace halfway::interp {

class Exec;
struct CStmt;

struct ExactSite {
  ir::NarrowingSite site;
  num::Format from = num::Format::F32, to = num::Format::F16;
  num::Rounding rounding = num::Rounding::NearestEven;
  num::Fp8Overflow overflow = num::Fp8Overflow::Nan;
  bool single = false; // round the exact value once (SingleRounding and a Barrier site)
  bool shadow = false; // record every evaluation
  // An f32 source the controls do not flush: leaves and source roundings use the host's binary32
  // (the workers run with the default MXCSR), the shadow's common case.
  bool plain_f32 = false;
  uint32_t producer_reg = 0;
  EvalFn convert = nullptr; // the ordinary, two-step conversion

  // The producer tree in postorder (root last). A leaf reads a register.
  struct TreeOp {
    ir::Op op = ir::Op::Const;
    bool leaf = false;
    uint32_t reg = 0;
    std::array<int, 3> args{-1, -1, -1};
  };
  std::vector<TreeOp> tree;
  // Per tree node, whether the FusedF32 and the FusedMul models round it into the source type
  // (shadow.hpp, RoundingModel): the MPFR path of model_results_mpfr.
  std::vector<uint8_t> fused_f32_rounds, fused_mul_rounds;

  // The error-free path: the value is the sum of these terms (empty: use MPFR).
  struct Term {
    bool negative = false;
    uint32_t a = 0, b = ir::kNone; // leaf registers; b == kNone: the term is the leaf a
    bool fma = false;              // the product of an fma (never rounded on its own)
  };
  std::vector<Term> terms;
};

struct ExactValue {
  double hi = 0, lo = 0;  // the exact value as hi + lo (shadow.hpp)
  double odd = 0;         // the exact value rounded to odd into a double
  double product_sum = 0; // sum of |x*y| over the products
};

std::shared_ptr<ExactSite> make_exact_site(const Program& p, const ir::NarrowingSite& site);
// The MPFR path (exact_mpfr.cpp), and a leaf's exact value (flushed when the controls flush it).
ExactValue exact_value_mpfr(Exec& x, const ExactSite& s, uint32_t lane);
double exact_leaf(Exec& x, const ExactSite& s, uint32_t reg, uint32_t lane);

// The FusedF32 and FusedMul results (shadow.hpp, RoundingModel) of one evaluation, bit patterns
// of the target type: computed with the exact value on the error-free path (exact.cpp), with
// MPFR by model_results_mpfr otherwise.
struct ModelResults {
  uint64_t fused_f32 = 0, fused_mul = 0;
};
ModelResults model_results_mpfr(Exec& x, const ExactSite& s, uint32_t lane);

// The evaluation function of a narrowing convert that is rounded once or shadowed: the ordinary
// conversion, then the site's single rounding and records on the active lanes.
void eval_site(Exec& x, const Node& n);

// After a store statement evaluated its expressions: site evaluations made since `first` (an
// index of ShadowColumns' evaluations) for the stored
// convert get the store's destination.
void attach_destinations(Exec& x, const CStmt& s, size_t first);

} // namespace halfway::interp
