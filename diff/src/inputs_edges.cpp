// The fixed edge cases of a*b + c, and the mixed tie-stressing set.
#include "halfway/diff/inputs.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/support/error.hpp"

#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <span>
#include <thread>
#include <tuple>

namespace halfway::diff::inputs {

namespace {

using Triple = std::tuple<float, float, float>;

float step(float x, int k) {
  for (; k > 0; --k)
    x = std::nextafter(x, INFINITY);
  for (; k < 0; ++k)
    x = std::nextafter(x, -INFINITY);
  return x;
}

MulAdd from_list(const std::vector<Triple>& list) {
  MulAdd out{rt::HostBuffer(ir::ScalarType::F32, list.size()),
             rt::HostBuffer(ir::ScalarType::F32, list.size()),
             rt::HostBuffer(ir::ScalarType::F32, list.size())};
  for (size_t i = 0; i < list.size(); ++i) {
    out.a.set_bits(i, num::f32_bits(std::get<0>(list[i])));
    out.b.set_bits(i, num::f32_bits(std::get<1>(list[i])));
    out.c.set_bits(i, num::f32_bits(std::get<2>(list[i])));
  }
  return out;
}

// The three operand buffers of a MulAdd as spans of their bit patterns (typed once, not per
// element; copied as integers, so that no NaN is ever touched by a float instruction).
struct Operands {
  std::span<const uint32_t> a, b, c;
  explicit Operands(const MulAdd& m)
      : a(m.a.as<uint32_t>()), b(m.b.as<uint32_t>()), c(m.c.as<uint32_t>()) {}
};

} // namespace

MulAdd edge_triples(ir::ScalarType target) {
  num::Format t;
  if (target == ir::ScalarType::F16)
    t = num::Format::F16;
  else if (target == ir::ScalarType::BF16)
    t = num::Format::BF16;
  else
    throw Error(ErrorKind::Usage, "edge triples narrow f32 to f16 or bf16");
  const num::FormatInfo& fi = num::info(t);
  const double sub = fi.min_subnormal_value, normal = fi.min_normal_value;
  const double threshold = fi.max_finite_value + std::ldexp(1.0, fi.emax - fi.man_bits - 1);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float fmax = std::numeric_limits<float>::max();

  std::vector<Triple> list;
  const float inexact = 1.1f; // a factor whose products are rarely exact
  for (double edge : {sub, sub / 2, 1.5 * sub, normal - sub, normal - sub / 2, normal,
                      fi.max_finite_value, threshold}) {
    const float e = static_cast<float>(edge);
    for (int k = -2; k <= 2; ++k) {
      const float v = step(e, k);
      for (float sign : {1.0f, -1.0f}) {
        list.emplace_back(0.5f * sign, 2 * v, 0.0f);            // exact product
        list.emplace_back(inexact * sign, v / inexact, 0.0f);   // rounded product
        list.emplace_back(sign * 0x1p-20f, 0x1p-20f, sign * v); // tiny product plus v
      }
    }
  }
  // Signed zeros: -0 + -0 is -0, every other sum of zeros +0; an f32 product that underflows to
  // -0 is a signed zero the two-step form loses when c = +0, while the exact value keeps its sign.
  for (float a : {-1.0f, 1.0f, -0.0f, 0.0f})
    for (float b : {-0.0f, 0.0f})
      for (float c : {-0.0f, 0.0f})
        list.emplace_back(a, b, c);
  list.emplace_back(-0x1p-100f, 0x1p-100f, 0.0f);
  list.emplace_back(-0x1p-100f, 0x1p-100f, -0.0f);
  list.emplace_back(0x1p-100f, 0x1p-100f, -0.0f);
  // NaN and infinity.
  list.emplace_back(inf, 0.0f, 1.0f); // 0 * inf: NaN
  list.emplace_back(inf, 1.0f, -inf); // inf - inf: NaN
  list.emplace_back(nan, 1.0f, 0.0f);
  list.emplace_back(1.0f, nan, 0.0f);
  list.emplace_back(1.0f, 1.0f, nan);
  list.emplace_back(1.0f, 1.0f, inf);
  list.emplace_back(-inf, 2.0f, 1.0f);
  list.emplace_back(-inf, -2.0f, -1.0f);
  // The f32 product overflows; the exact a*b + c is finite or -inf.
  list.emplace_back(fmax, 2.0f, -fmax);
  list.emplace_back(fmax, 2.0f, -inf);
  list.emplace_back(-fmax, 2.0f, fmax);
  return from_list(list);
}

MulAdd tie_stress(size_t n, ir::ScalarType target, uint64_t seed) {
  // Element i comes from family i % 10: 0-3 multiply-add ties, 4-7 product ties, 8 cancellation,
  // 9 edge triples (cycled).
  size_t counts[4] = {0, 0, 0, 0};
  auto family = [](size_t i) { return i % 10 < 4 ? 0 : i % 10 < 8 ? 1 : i % 10 == 8 ? 2 : 3; };
  for (size_t i = 0; i < n; ++i)
    ++counts[family(i)];
  // The families are independent (a seed each): the product ties are searched on a second
  // thread while this one searches the multiply-add ties (the search is most of the time of a
  // large diff's input generation).
  std::optional<MulAdd> products;
  std::exception_ptr failed;
  std::thread worker([&] {
    try {
      products.emplace(product_ties(counts[1], target, seed + 1));
    } catch (...) {
      failed = std::current_exception();
    }
  });
  std::optional<MulAdd> mul_adds;
  try {
    mul_adds.emplace(mul_add_ties(counts[0], target, seed));
  } catch (...) {
    worker.join();
    throw;
  }
  worker.join();
  if (failed)
    std::rethrow_exception(failed);
  const MulAdd parts[4] = {std::move(*mul_adds), std::move(*products),
                           cancellation(counts[2], target, seed + 2), edge_triples(target)};
  MulAdd out{rt::HostBuffer(ir::ScalarType::F32, n), rt::HostBuffer(ir::ScalarType::F32, n),
             rt::HostBuffer(ir::ScalarType::F32, n)};
  const Operands from[4] = {Operands(parts[0]), Operands(parts[1]), Operands(parts[2]),
                            Operands(parts[3])};
  const std::span<uint32_t> a = out.a.as<uint32_t>(), b = out.b.as<uint32_t>(),
                            c = out.c.as<uint32_t>();
  size_t next[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    const int f = family(i);
    const size_t j = next[f]++ % from[f].a.size();
    a[i] = from[f].a[j];
    b[i] = from[f].b[j];
    c[i] = from[f].c[j];
  }
  return out;
}

} // namespace halfway::diff::inputs
