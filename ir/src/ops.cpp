#include "halfway/ir/ops.hpp"

#include "halfway/support/error.hpp"

#include <array>
#include <string>

namespace halfway::ir {

namespace {
constexpr std::array kOps = {
#define HALFWAY_X(op, text, arity, rule, family, rounds, figueroa, exact, math, dsl, spelling,     \
                  ulp, precision)                                                                  \
  OpInfo{text,  arity, TypeRule::rule, OpFamily::family, rounds, figueroa,                         \
         exact, math,  (ulp).ulp32,    precision,        ulp},
    HALFWAY_OPS(HALFWAY_X)
#undef HALFWAY_X
};
constexpr std::array<std::string_view, 9> kAtomics = {
    "atomic_add", "atomic_sub", "atomic_min",  "atomic_max",    "atomic_and",
    "atomic_or",  "atomic_xor", "atomic_xchg", "atomic_cmpxchg"};
} // namespace

const OpInfo& info(Op op) {
  return kOps[static_cast<size_t>(op)];
}

std::optional<Op> parse_op(std::string_view text) {
  for (size_t i = 0; i < kOps.size(); ++i)
    if (kOps[i].name == text)
      return static_cast<Op>(i);
  return std::nullopt;
}

void invalid_op(Op op) {
  throw Error(ErrorKind::Internal,
              "op number " + std::to_string(static_cast<unsigned>(op)) + " is not in the op table");
}

std::string_view name(AtomicOp op) {
  return kAtomics[static_cast<size_t>(op)];
}

std::optional<AtomicOp> parse_atomic(std::string_view text) {
  for (size_t i = 0; i < kAtomics.size(); ++i)
    if (kAtomics[i] == text)
      return static_cast<AtomicOp>(i);
  return std::nullopt;
}

} // namespace halfway::ir
