#include "halfway/numerics/convert.hpp"

#include "halfway/numerics/nearest.hpp"
#include "pack.hpp"

#include <array>

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

// g++ 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports as a use of an uninitialised variable (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace halfway::num {

using detail::Kind;

uint64_t convert_bits(Format from, uint64_t bits, Format to, Rounding r, Fp8Overflow ov) {
  const detail::Unpacked u = detail::unpack(from, bits);
  switch (u.kind) {
  case Kind::Nan:
    return quiet_nan(to, u.sign);
  case Kind::Inf:
    return detail::infinity_result(to, u.sign, ov);
  case Kind::Zero:
    return u.sign ? info(to).sign_mask : 0;
  case Kind::Finite:
    break;
  }
  return detail::round_pack(to, u.sign, u.exp, u.mant, false, r, ov);
}

namespace {

bool is_nan_or_inf(Format f, uint64_t bits) {
  return (bits & info(f).exp_mask) == info(f).exp_mask;
}

} // namespace

double to_double(Format from, uint64_t bits) {
  if (!is_nan_or_inf(from, bits)) {
    switch (from) {
    case Format::F16:
      return nearest::to_double<Format::F16>(bits);
    case Format::BF16:
      return nearest::to_double<Format::BF16>(bits);
    case Format::F32:
      return nearest::to_double<Format::F32>(bits);
    case Format::F64:
      return f64_from_bits(bits);
    case Format::E4M3:
    case Format::E5M2:
      break;
    }
  }
  return f64_from_bits(convert_bits(from, bits, Format::F64));
}

uint64_t from_double(Format to, double x, Rounding r, Fp8Overflow ov) {
  if (r == Rounding::NearestEven && (f64_bits(x) & 0x7ff0000000000000u) != 0x7ff0000000000000u) {
    switch (to) {
    case Format::F16:
      return nearest::from_finite<Format::F16>(x);
    case Format::BF16:
      return nearest::from_finite<Format::BF16>(x);
    case Format::F32:
      return nearest::from_finite<Format::F32>(x);
    case Format::F64:
    case Format::E4M3:
    case Format::E5M2:
      break;
    }
  }
  return convert_bits(Format::F64, f64_bits(x), to, r, ov);
}

namespace {
constexpr uint16_t canonical_f16(uint16_t h) {
  return (h & 0x7fff) > 0x7c00 ? static_cast<uint16_t>((h & 0x8000) | 0x7e00) : h;
}
constexpr uint32_t canonical_f32(uint32_t x) {
  return (x & 0x7fffffffu) > 0x7f800000u ? (x & 0x80000000u) | 0x7fc00000u : x;
}

// fp8 widenings are table lookups; the tables come from the generic path.
template <Format From, Format To> const auto& widening_table() {
  using Out = std::conditional_t<To == Format::F32, uint32_t, uint64_t>;
  static const std::array<Out, 256> table = [] {
    std::array<Out, 256> t{};
    for (uint64_t b = 0; b < 256; ++b)
      t[b] = static_cast<Out>(convert_bits(From, b, To));
    return t;
  }();
  return table;
}
} // namespace

uint16_t f32_to_f16(uint32_t bits, Rounding r) {
#ifdef __F16C__
  if (r == Rounding::NearestEven)
    return canonical_f16(_cvtss_sh(f32_from_bits(bits), _MM_FROUND_TO_NEAREST_INT));
#endif
  return static_cast<uint16_t>(convert_bits(Format::F32, bits, Format::F16, r));
}
uint16_t f32_to_bf16(uint32_t bits, Rounding r) {
  return static_cast<uint16_t>(convert_bits(Format::F32, bits, Format::BF16, r));
}
uint8_t f32_to_e4m3(uint32_t bits, Rounding r, Fp8Overflow ov) {
  return static_cast<uint8_t>(convert_bits(Format::F32, bits, Format::E4M3, r, ov));
}
uint8_t f32_to_e5m2(uint32_t bits, Rounding r, Fp8Overflow ov) {
  return static_cast<uint8_t>(convert_bits(Format::F32, bits, Format::E5M2, r, ov));
}

uint32_t f64_to_f32(uint64_t bits, Rounding r) {
  return static_cast<uint32_t>(convert_bits(Format::F64, bits, Format::F32, r));
}
uint16_t f64_to_f16(uint64_t bits, Rounding r) {
  return static_cast<uint16_t>(convert_bits(Format::F64, bits, Format::F16, r));
}
uint16_t f64_to_bf16(uint64_t bits, Rounding r) {
  return static_cast<uint16_t>(convert_bits(Format::F64, bits, Format::BF16, r));
}
uint8_t f64_to_e4m3(uint64_t bits, Rounding r, Fp8Overflow ov) {
  return static_cast<uint8_t>(convert_bits(Format::F64, bits, Format::E4M3, r, ov));
}
uint8_t f64_to_e5m2(uint64_t bits, Rounding r, Fp8Overflow ov) {
  return static_cast<uint8_t>(convert_bits(Format::F64, bits, Format::E5M2, r, ov));
}

uint32_t f16_to_f32(uint16_t bits) {
#ifdef __F16C__
  return canonical_f32(f32_bits(_cvtsh_ss(bits)));
#else
  return static_cast<uint32_t>(convert_bits(Format::F16, bits, Format::F32));
#endif
}
uint32_t bf16_to_f32(uint16_t bits) {
  return canonical_f32(uint32_t{bits} << 16);
}
uint32_t e4m3_to_f32(uint8_t bits) {
  return widening_table<Format::E4M3, Format::F32>()[bits];
}
uint32_t e5m2_to_f32(uint8_t bits) {
  return widening_table<Format::E5M2, Format::F32>()[bits];
}
uint64_t f16_to_f64(uint16_t bits) {
  return convert_bits(Format::F16, bits, Format::F64);
}
uint64_t bf16_to_f64(uint16_t bits) {
  return convert_bits(Format::BF16, bits, Format::F64);
}
uint64_t e4m3_to_f64(uint8_t bits) {
  return widening_table<Format::E4M3, Format::F64>()[bits];
}
uint64_t e5m2_to_f64(uint8_t bits) {
  return widening_table<Format::E5M2, Format::F64>()[bits];
}
uint64_t f32_to_f64(uint32_t bits) {
  return convert_bits(Format::F32, bits, Format::F64);
}

void f32_to_f16_array(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
#if defined(__AVX512F__) && defined(__AVX2__)
  const __m256i mag_mask = _mm256_set1_epi16(0x7fff);
  const __m256i inf = _mm256_set1_epi16(0x7c00);
  const __m256i qnan = _mm256_set1_epi16(0x7e00);
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    const __m256i is_nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, mag_mask), inf);
    const __m256i canon = _mm256_or_si256(_mm256_andnot_si256(mag_mask, h), qnan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_blendv_epi8(h, canon, is_nan));
  }
#elif defined(__F16C__) && defined(__SSE4_1__)
  const __m128i mag_mask = _mm_set1_epi16(0x7fff);
  const __m128i inf = _mm_set1_epi16(0x7c00);
  const __m128i qnan = _mm_set1_epi16(0x7e00);
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    const __m128i is_nan = _mm_cmpgt_epi16(_mm_and_si128(h, mag_mask), inf);
    const __m128i canon = _mm_or_si128(_mm_andnot_si128(mag_mask, h), qnan);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_blendv_epi8(h, canon, is_nan));
  }
#endif
  for (; i < n; ++i)
    out[i] = f32_to_f16(f32_bits(in[i]));
}

void f16_to_f32_array(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
#if defined(__AVX512F__)
  const __m512i mag_mask = _mm512_set1_epi32(0x7fffffff);
  const __m512i inf = _mm512_set1_epi32(0x7f800000);
  const __m512i qnan = _mm512_set1_epi32(0x7fc00000);
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
    const __m512i x = _mm512_castps_si512(_mm512_cvtph_ps(h));
    const __mmask16 is_nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, mag_mask), inf);
    const __m512i canon = _mm512_or_si512(_mm512_andnot_si512(mag_mask, x), qnan);
    _mm512_storeu_si512(out + i, _mm512_mask_mov_epi32(x, is_nan, canon));
  }
#elif defined(__F16C__) && defined(__AVX2__)
  // An AVX2 host (Zen 1-3, Haswell to Ice Lake clients): the same eight lanes at a time, the NaN
  // test a signed compare of the magnitude's bits (NaNs are the magnitudes above infinity's).
  const __m256i mag_mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  const __m256i qnan = _mm256_set1_epi32(0x7fc00000);
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m256i x = _mm256_castps_si256(_mm256_cvtph_ps(h));
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, mag_mask), inf);
    const __m256i canon = _mm256_or_si256(_mm256_andnot_si256(mag_mask, x), qnan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_blendv_epi8(x, canon, is_nan));
  }
#endif
  for (; i < n; ++i)
    out[i] = f32_from_bits(f16_to_f32(in[i]));
}

} // namespace halfway::num
