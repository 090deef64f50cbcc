#include "halfway/ir/hash.hpp"

#include "halfway/ir/printer.hpp"

namespace halfway::ir {

uint64_t hash_bytes(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  // splitmix64 finaliser: FNV's low bits mix poorly on their own.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

// The canonical text is a complete, injective rendering of the kernel in which expression
// sharing and source lines do not appear, so hashing it gives exactly the equality we want; a
// kernel is hashed once per launch-memo lookup, long before anything it launches.
uint64_t structural_hash(const Kernel& k) {
  return hash_bytes(print(k));
}

} // namespace halfway::ir
