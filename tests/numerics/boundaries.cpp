#include "boundaries.hpp"

#include "mpfr_ref.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace halfway::num::test {

std::vector<double> boundary_values(Format to) {
  const FormatInfo& i = info(to);
  thread_local Mp x(64);
  std::vector<double> values;
  for (uint64_t b = 0; b <= i.max_finite; ++b) {
    set_exact(x, to, b);
    values.push_back(mpfr_get_d(x, MPFR_RNDN));
  }
  const double top_ulp = std::ldexp(1.0, i.emax - i.man_bits);
  values.push_back(i.max_finite_value + top_ulp);
  const size_t n = values.size();
  for (size_t k = 0; k + 1 < n; ++k)
    values.push_back((values[k] + values[k + 1]) / 2);
  return values;
}

uint64_t step(Format f, uint64_t bits, int64_t steps) {
  const FormatInfo& i = info(f);
  const auto mag = static_cast<__int128>(bits & ~i.sign_mask);
  const __int128 pos = ((bits & i.sign_mask) ? -mag : mag) + steps;
  return pos < 0 ? static_cast<uint64_t>(-pos) | i.sign_mask : static_cast<uint64_t>(pos);
}

std::vector<uint64_t> patterns_near_boundaries(Format from, Format to, int radius) {
  std::vector<uint64_t> out;
  for (double v : boundary_values(to)) {
    // Past the source's range (2^128 for bf16 from f32) the source's infinity stands in.
    const bool beyond = v > info(from).max_finite_value;
    const uint64_t center = beyond
                                ? info(from).inf_bits
                                : convert_ref(Format::F64, f64_bits(v), from, Rounding::TowardZero);
    thread_local Mp x(64);
    set_exact(x, from, center);
    if (!beyond) {
      EXPECT_EQ(mpfr_get_d(x, MPFR_RNDN), v) << "boundary not exact in " << format_name(from);
    }
    for (int neg = 0; neg < 2; ++neg) {
      const uint64_t c = neg ? center | info(from).sign_mask : center;
      for (int d = -radius; d <= radius; ++d)
        out.push_back(step(from, c, d));
    }
  }
  return out;
}

} // namespace halfway::num::test
