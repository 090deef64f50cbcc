#include "halfway/ir/hash.hpp"

#include "print_to.hpp"

#include <ostream>
#include <streambuf>

namespace halfway::ir {

namespace {

uint64_t fnv(std::string_view bytes, uint64_t h) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// splitmix64 finaliser: FNV's low bits mix poorly on their own.
uint64_t finish(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

// A stream buffer that hashes what is written to it and keeps nothing.
class HashBuf final : public std::streambuf {
public:
  explicit HashBuf(uint64_t h) : h_(h) {}
  uint64_t value() const { return finish(h_); }

protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      const char ch = traits_type::to_char_type(c);
      h_ = fnv({&ch, 1}, h_);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    h_ = fnv({s, static_cast<size_t>(n)}, h_);
    return n;
  }

private:
  uint64_t h_;
};

} // namespace

uint64_t hash_bytes(std::string_view bytes, uint64_t h) {
  return finish(fnv(bytes, h));
}

// The canonical text is a complete, injective rendering of the kernel in which expression
// sharing and source lines do not appear, so hashing it gives exactly the equality we want; a
// kernel is hashed once per launch-memo lookup, long before anything it launches. The text is
// hashed as the printer writes it, never held.
uint64_t structural_hash(const Kernel& k) {
  HashBuf buf(0xcbf29ce484222325ull); // hash_bytes' default seed
  std::ostream out(&buf);
  print_to(k, out);
  return buf.value();
}

} // namespace halfway::ir
