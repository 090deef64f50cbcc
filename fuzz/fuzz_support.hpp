#pragma once
// What the fuzz targets past the parser share: reporting a finding, the stream of bits that
// sizes buffers and grids from a hash of the input, and the walk from the input's bytes to its
// verified kernels (a parse or verify failure must be the documented error kind, nothing else).

#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace fuzz {

// The target's name in its findings; each target defines it.
extern const char* const kTarget;

[[noreturn]] inline void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n%s\n", kTarget, what, detail.c_str());
  std::abort();
}

// splitmix64: a deterministic stream of bits seeded from the input.
struct Bits {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

inline uint64_t fnv1a(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

// Parses the input and calls run(kernel, bits) for each of its first `max_kernels` kernels that
// verifies, with one Bits stream seeded from the input's hash.
template <class Run>
void for_each_verified_kernel(const uint8_t* data, size_t size, size_t max_kernels, Run&& run) {
  using halfway::Error;
  using halfway::ErrorKind;
  std::optional<halfway::text::KernelFile> file;
  try {
    file.emplace(std::string(reinterpret_cast<const char*>(data), size), "fuzz.hk");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Parse)
      bug("bad parse error", e.what());
    return;
  }
  Bits bits{fnv1a(data, size)};
  for (size_t i = 0; i < file->kernels().size() && i < max_kernels; ++i) {
    std::optional<halfway::ir::VerifiedKernel> k;
    try {
      k.emplace(file->verify(i));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Verify)
        bug("bad verify error", e.what());
      continue;
    }
    run(*k, bits);
  }
}

} // namespace fuzz
