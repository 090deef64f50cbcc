// Plain fills of one buffer, and the lists of special and boundary values.
#include "halfway/diff/compare.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/support/error.hpp"
#include "random.hpp"

#include <algorithm>
#include <cmath>

namespace halfway::diff {

uint64_t detail::Random::float_in_binade(num::Format f, int e, bool positive) {
  const num::FormatInfo& fi = num::info(f);
  const int smallest = fi.emin - fi.man_bits; // binade of the smallest subnormal
  e = std::clamp(e, smallest, fi.emax);
  uint64_t v;
  if (e >= fi.emin) {
    v = (static_cast<uint64_t>(e + fi.bias) << fi.man_bits) | (bits() & fi.man_mask);
  } else {
    const int k = e - smallest;
    v = (uint64_t{1} << k) | (bits() & ((uint64_t{1} << k) - 1));
  }
  if (num::is_nan(f, v))
    --v; // E4M3's top binade ends in its NaN
  if (!positive && coin())
    v |= fi.sign_mask;
  return v;
}

namespace inputs {

void fill_random(rt::HostBuffer& buffer, uint64_t seed, Exponents range) {
  detail::Random r(seed);
  auto f = float_format(buffer.type());
  const int lo = std::min(range.min, range.max), hi = std::max(range.min, range.max);
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer.set_bits(i, f ? r.float_in_binade(*f, r.in(lo, hi)) : r.bits());
}

void fill_random_bits(rt::HostBuffer& buffer, uint64_t seed) {
  detail::Random r(seed);
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer.set_bits(i, r.bits());
}

void fill_zeros(rt::HostBuffer& buffer, bool negative) {
  uint64_t bits = 0;
  if (auto f = float_format(buffer.type()); f && negative)
    bits = num::info(*f).sign_mask;
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer.set_bits(i, bits);
}

void fill_iota(rt::HostBuffer& buffer, double start, double step) {
  auto f = float_format(buffer.type());
  for (size_t i = 0; i < buffer.size(); ++i) {
    double v = start + static_cast<double>(i) * step;
    buffer.set_bits(
        i, f ? num::from_double(*f, v)
             : ir::truncate_bits(buffer.type(),
                                 static_cast<uint64_t>(static_cast<int64_t>(std::trunc(v)))));
  }
}

void fill_cycle(rt::HostBuffer& buffer, std::span<const uint64_t> bits) {
  if (bits.empty())
    throw Error(ErrorKind::Usage, "fill_cycle: no values to cycle through");
  for (size_t i = 0; i < buffer.size(); ++i)
    buffer.set_bits(i, bits[i % bits.size()]);
}

std::vector<uint64_t> special_bits(ir::ScalarType type) {
  std::vector<uint64_t> out;
  auto f = float_format(type);
  if (!f) {
    const uint32_t w = ir::info(type).bits;
    const uint64_t all = w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
    out = {0, 1, all};
    if (ir::info(type).is_signed)
      out.insert(out.end(), {all >> 1, (all >> 1) + 1});
    else
      out.push_back(all >> 1);
    return out;
  }
  const num::FormatInfo& fi = num::info(*f);
  for (uint64_t v : {uint64_t{0}, num::from_double(*f, 1.0), fi.min_subnormal, fi.min_normal - 1,
                     fi.min_normal, fi.max_finite}) {
    out.push_back(v);
    out.push_back(v | fi.sign_mask);
  }
  if (fi.has_inf) {
    out.push_back(fi.inf_bits);
    out.push_back(fi.inf_bits | fi.sign_mask);
  }
  out.push_back(fi.quiet_nan);
  out.push_back(fi.quiet_nan | fi.sign_mask);
  if (fi.has_inf)
    out.push_back(fi.exp_mask | 1); // a signalling NaN
  return out;
}

std::vector<uint64_t> boundary_bits(ir::ScalarType type, ir::ScalarType target) {
  auto fs = float_format(type), ft = float_format(target);
  if (!fs || !ft)
    throw Error(ErrorKind::Usage, "boundary_bits needs two float types");
  const num::FormatInfo& t = num::info(*ft);
  const num::FormatInfo& s = num::info(*fs);
  const double sub = t.min_subnormal_value, normal = t.min_normal_value;
  const double top_ulp = std::ldexp(1.0, t.emax - t.man_bits);
  const double edges[] = {sub,
                          sub / 2,
                          1.5 * sub,
                          normal - sub,
                          normal - sub / 2,
                          normal,
                          t.max_finite_value,
                          t.max_finite_value + top_ulp / 2};
  std::vector<uint64_t> out;
  for (double e : edges) {
    const uint64_t centre = num::from_double(*fs, e);
    if (!num::is_finite(*fs, centre) || num::is_zero(*fs, centre))
      continue;
    for (int k = -2; k <= 2; ++k) {
      const int64_t m = static_cast<int64_t>(centre) + k;
      if (m <= 0 || static_cast<uint64_t>(m) > s.max_finite)
        continue;
      for (uint64_t sign : {uint64_t{0}, s.sign_mask}) {
        const uint64_t v = static_cast<uint64_t>(m) | sign;
        if (std::find(out.begin(), out.end(), v) == out.end())
          out.push_back(v);
      }
    }
  }
  return out;
}

} // namespace inputs
} // namespace halfway::diff
