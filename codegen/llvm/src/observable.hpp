#pragma once
// Which locals can affect what a kernel does: a store, an atomic, a branch, a loop, an index. A
// let or assignment of any other local computes a value nobody sees, so LLVM deletes it, and with
// it any load in its expression: a load past a buffer's end, which the guard page turns into the
// interpreter's out-of-bounds error, would then fail nothing. The lowering keeps the loads of
// those statements (volatile) so that every device reports the interpreter's error
// (codegen/llvm/README.md, "Dead loads").

#include "halfway/ir/kernel.hpp"

#include <vector>

namespace halfway::codegen::llvm::detail {

// Per local: whether it is read, directly or through other locals, by a statement other than a
// let or assignment (the expressions of stores, atomics, conditions, loop bounds and steps).
std::vector<bool> observable_locals(const ir::Kernel& k);

} // namespace halfway::codegen::llvm::detail
