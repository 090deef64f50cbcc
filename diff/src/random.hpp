#pragma once
// The generators' random source: std::mt19937_64, whose output the standard fixes, and plain
// arithmetic on its bits instead of the implementation-defined standard distributions, so that a
// seed means the same inputs on every platform.

#include "halfway/numerics/formats.hpp"

#include <cstdint>
#include <random>

namespace halfway::diff::detail {

class Random {
public:
  explicit Random(uint64_t seed) : g_(seed) {}
  uint64_t bits() { return g_(); }
  uint64_t below(uint64_t n) { return n ? g_() % n : 0; }
  int in(int lo, int hi) {
    return lo + static_cast<int>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  bool coin() { return (g_() >> 63) != 0; }
  double unit() { return static_cast<double>(g_() >> 11) * 0x1p-53; } // [0, 1)

  // A value of format f in binade e (clamped to the format's range; binades below the smallest
  // normal give subnormals), uniform fraction, random sign unless `positive`; never NaN or inf.
  uint64_t float_in_binade(num::Format f, int e, bool positive = false);

private:
  std::mt19937_64 g_;
};

} // namespace halfway::diff::detail
