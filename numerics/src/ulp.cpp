#include "halfway/numerics/ulp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace halfway::num {

namespace {
__int128 position(Format f, uint64_t bits) {
  const auto mag = static_cast<__int128>(magnitude(f, bits));
  return sign_bit(f, bits) ? -mag : mag;
}
} // namespace

uint64_t ulp_distance(Format f, uint64_t a, uint64_t b) {
  const bool na = is_nan(f, a), nb = is_nan(f, b);
  if (na || nb)
    return na && nb ? 0 : std::numeric_limits<uint64_t>::max();
  const __int128 d = position(f, a) - position(f, b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

double ulp_of(Format f, double x) {
  if (std::isnan(x))
    return x;
  const FormatInfo& i = info(f);
  int e = i.emax;
  if (x == 0)
    e = i.emin;
  else if (!std::isinf(x))
    e = std::clamp(std::ilogb(x), i.emin, i.emax);
  return std::ldexp(1.0, e - i.man_bits);
}

} // namespace halfway::num
