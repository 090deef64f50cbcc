#pragma once
// Accumulation and step matching: the arithmetic shapes that the precision opt-ins act on,
// recognised in one place. The narrowing analysis (narrowing.hpp) classifies a narrowing site's
// producer with match_mul_add and lists its producers; the CPU code generator relaxes the ops of
// accumulations() and computes matched multiply-adds with one rounding; the interpreter's
// accumulation records (interp, relaxed accumulation) follow the steps match_step finds.
// specs/f16-narrowing-barrier.md §3-§5 say what the opt-ins allow.

#include "halfway/ir/kernel.hpp"

#include <optional>
#include <vector>

namespace halfway::ir {

// The float arithmetic nodes (add, sub, mul, fma, neg) that produce the value of `id`, in
// preorder (`id` first when it is one), stopping at everything else: loads, locals, parameters,
// conversions and other ops. These are the ops a precision opt-in may contract or reassociate.
bool is_producer(const Expr& e);
void producers(const Kernel& k, ExprId id, std::vector<ExprId>& out);

// A value of the form (+-)x*y (+- z): a product (z = kNone), fma(x, y, z), or an add or sub with
// a product on one side (the first one, if both are products).
struct MulAdd {
  ExprId x = kNone, y = kNone, z = kNone; // z: kNone for a plain product
  bool negate_product = false, negate_z = false;
  bool z_first = false; // z comes before the product in evaluation order (c - a*b, c + a*b)
};
std::optional<MulAdd> match_mul_add(const Kernel& k, ExprId id);

// An accumulation step, an assignment to a float local `acc` of one of
//   acc = add(acc, e)   acc = add(e, acc)   acc = sub(acc, e)   acc = fma(a, b, acc)
struct Step {
  uint32_t local = kNone;
  ExprId term = kNone;   // e; kNone for fma, whose term is the product of its first two args
  bool negative = false; // sub: the term is subtracted
};
std::optional<Step> match_step(const Kernel& k, const Stmt& s);

// A loop-carried accumulation: a step (match_step) inside a loop. `ops` are the producers of the
// assigned expression (the accumulating add first, then the products under it): the ops relaxed
// accumulation may reassociate and contract. In program order.
struct Accumulation {
  uint32_t local = kNone;
  std::vector<ExprId> ops;
};
std::vector<Accumulation> accumulations(const Kernel& k);

} // namespace halfway::ir
