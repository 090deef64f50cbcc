#pragma once
// The structural hash: equal kernels get equal hashes and any change (a name, a type, a constant,
// a rounding mode, the workgroup size) gives a different one. It is the first part of the launch
// memo key (structural hash, device, budget).

#include "halfway/ir/kernel.hpp"

#include <cstdint>
#include <string_view>

namespace halfway::ir {

uint64_t structural_hash(const Kernel& k);
// 64-bit FNV-1a with a final avalanche; exposed so other memo keys mix the same way.
uint64_t hash_bytes(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ull);

} // namespace halfway::ir
