#pragma once
// The floating-point formats halfway computes in, described by one constexpr table.
//
// Every other part of halfway::num works on raw bit patterns (uint64_t, zero-extended) plus a
// Format, never on host float types: the reference interpreter must reproduce a device bit for bit,
// and host types neither exist for every format (bf16, fp8) nor promise NaN payloads or rounding
// modes. The table holds the facts (field widths, bias, special values) so that code asks it
// instead of repeating per-format switch statements.

#include <bit>
#include <cstdint>

namespace halfway::num {

// F16 = IEEE binary16, BF16 = bfloat16 (binary32's exponent, 8-bit significand), F32 = binary32,
// F64 = binary64. E4M3 is OCP FP8 E4M3FN: no infinities, only S.1111.111 is NaN, so the top binade
// holds finite values up to 448. E5M2 is OCP FP8 E5M2: IEEE-like, with infinities and NaNs.
enum class Format : uint8_t { F16, BF16, F32, F64, E4M3, E5M2 };
inline constexpr int kFormatCount = 6;

// Rounding direction of IEEE 754 (roundTiesToEven, roundTowardZero, roundTowardPositive,
// roundTowardNegative).
enum class Rounding : uint8_t { NearestEven, TowardZero, Up, Down };

// What an FP8 narrowing does with a result that IEEE rounding would send to an infinity (and with
// an infinite input).
//  - Nan: each format's own behaviour, as ml_dtypes: E4M3FN has no infinity and gives NaN (with the
//    sign of the value); E5M2 gives +-inf.
//  - Saturate: +-max finite instead (+-448 for E4M3, +-57344 for E5M2), as NVIDIA's satfinite
//    conversions. NaN inputs stay NaN.
// Under the directed roundings a result that IEEE rounds to max finite (e.g. TowardZero of 1000
// into E4M3 gives 448) is max finite under both policies. Formats other than FP8 ignore this
// setting.
enum class Fp8Overflow : uint8_t { Nan, Saturate };

// NaN encodings: in the IEEE-like formats (all but E4M3) every pattern with an all-ones exponent
// and a nonzero fraction is a NaN, quiet when the fraction's top bit is set; in E4M3FN only
// S.1111.111 (0x7f, 0xff) is. `quiet_nan` is the one halfway produces.
struct FormatInfo {
  const char* name;
  int total_bits;
  int exp_bits;
  int man_bits; // stored fraction bits; precision is man_bits + 1
  int bias;
  bool has_inf;
  int emin; // exponent of the smallest normal: 1 - bias
  int emax; // exponent of the largest finite value
  uint64_t sign_mask;
  uint64_t exp_mask;
  uint64_t man_mask;
  uint64_t inf_bits;      // +inf, or 0 when the format has none
  uint64_t quiet_nan;     // the canonical quiet NaN, sign bit clear
  uint64_t max_finite;    // bits of the largest finite value
  uint64_t min_normal;    // bits of the smallest positive normal
  uint64_t min_subnormal; // bits of the smallest positive subnormal (always 1)
  double max_finite_value;
  double min_normal_value;
  double min_subnormal_value;
  int precision() const { return man_bits + 1; }
};

namespace detail {
constexpr uint64_t low_bits(int n) {
  return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
}

constexpr double pow2(int e) {
  double r = 1.0;
  for (; e > 0; --e)
    r *= 2.0;
  for (; e < 0; ++e)
    r *= 0.5;
  return r;
}

// Builds a row from the field widths. `nan_is_all_ones` marks E4M3FN, whose only NaN is the
// all-ones pattern and whose top exponent still holds finite numbers.
constexpr FormatInfo make_format(const char* name, int exp_bits, int man_bits,
                                 bool nan_is_all_ones) {
  const int total = 1 + exp_bits + man_bits;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint64_t man_mask = low_bits(man_bits);
  const uint64_t exp_mask = low_bits(exp_bits) << man_bits;
  const uint64_t all_ones = exp_mask | man_mask;
  const bool has_inf = !nan_is_all_ones;
  const uint64_t max_finite = has_inf ? exp_mask - 1 : all_ones - 1;
  const int emax = has_inf ? bias : bias + 1;
  const double max_frac = has_inf ? 2.0 - pow2(-man_bits) : 2.0 - pow2(1 - man_bits);
  return FormatInfo{.name = name,
                    .total_bits = total,
                    .exp_bits = exp_bits,
                    .man_bits = man_bits,
                    .bias = bias,
                    .has_inf = has_inf,
                    .emin = 1 - bias,
                    .emax = emax,
                    .sign_mask = uint64_t{1} << (total - 1),
                    .exp_mask = exp_mask,
                    .man_mask = man_mask,
                    .inf_bits = has_inf ? exp_mask : 0,
                    .quiet_nan = has_inf ? exp_mask | (uint64_t{1} << (man_bits - 1)) : all_ones,
                    .max_finite = max_finite,
                    .min_normal = uint64_t{1} << man_bits,
                    .min_subnormal = 1,
                    .max_finite_value = max_frac * pow2(emax),
                    .min_normal_value = pow2(1 - bias),
                    .min_subnormal_value = pow2(1 - bias - man_bits)};
}

inline constexpr FormatInfo kFormats[kFormatCount] = {
    make_format("f16", 5, 10, false), make_format("bf16", 8, 7, false),
    make_format("f32", 8, 23, false), make_format("f64", 11, 52, false),
    make_format("e4m3", 4, 3, true),  make_format("e5m2", 5, 2, false),
};
} // namespace detail

constexpr const FormatInfo& info(Format f) {
  return detail::kFormats[static_cast<int>(f)];
}

static_assert(info(Format::F16).max_finite_value == 65504.0);
static_assert(info(Format::BF16).min_subnormal_value == 0x1p-133);
static_assert(info(Format::E4M3).max_finite_value == 448.0 && info(Format::E4M3).quiet_nan == 0x7f);
static_assert(info(Format::E5M2).max_finite_value == 57344.0 &&
              info(Format::E5M2).quiet_nan == 0x7e);
constexpr const char* format_name(Format f) {
  return info(f).name;
}
constexpr bool is_fp8(Format f) {
  return f == Format::E4M3 || f == Format::E5M2;
}

// Classification of bit patterns. `bits` must not have bits set above the format's width.
constexpr uint64_t magnitude(Format f, uint64_t bits) {
  return bits & ~info(f).sign_mask;
}
constexpr bool sign_bit(Format f, uint64_t bits) {
  return (bits & info(f).sign_mask) != 0;
}
constexpr bool is_nan(Format f, uint64_t bits) {
  const FormatInfo& i = info(f);
  const uint64_t m = bits & ~i.sign_mask;
  return i.has_inf ? m > i.exp_mask : m == (i.exp_mask | i.man_mask);
}
constexpr bool is_inf(Format f, uint64_t bits) {
  return info(f).has_inf && magnitude(f, bits) == info(f).exp_mask;
}
constexpr bool is_zero(Format f, uint64_t bits) {
  return magnitude(f, bits) == 0;
}
constexpr bool is_subnormal(Format f, uint64_t bits) {
  const uint64_t m = magnitude(f, bits);
  return m != 0 && m < info(f).min_normal;
}
constexpr bool is_finite(Format f, uint64_t bits) {
  return magnitude(f, bits) <= info(f).max_finite;
}
// The canonical quiet NaN with the given sign.
constexpr uint64_t quiet_nan(Format f, bool negative = false) {
  return info(f).quiet_nan | (negative ? info(f).sign_mask : 0);
}

// Host float <-> bits, for the formats the host has.
inline uint32_t f32_bits(float x) {
  return std::bit_cast<uint32_t>(x);
}
inline uint64_t f64_bits(double x) {
  return std::bit_cast<uint64_t>(x);
}
inline float f32_from_bits(uint32_t b) {
  return std::bit_cast<float>(b);
}
inline double f64_from_bits(uint64_t b) {
  return std::bit_cast<double>(b);
}

} // namespace halfway::num
