#include "halfway/policy/refusal.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>

namespace halfway::policy {
namespace {

// Decodes one well-formed UTF-8 sequence at text[i], advancing i; none for an ill-formed one
// (bad lead or continuation byte, truncation, overlong form, surrogate, beyond U+10FFFF).
std::optional<uint32_t> decode(std::string_view text, size_t& i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  if (lead < 0x80) {
    ++i;
    return lead;
  }
  size_t length;
  uint32_t cp, min;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (i + length > text.size())
    return std::nullopt;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return std::nullopt;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return std::nullopt;
  i += length;
  return cp;
}

// Code points that show nothing: controls, spaces, separators, zero-width and bidi formatting.
bool invisible(uint32_t cp) {
  return cp <= 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD || cp == 0x034F || cp == 0x061C ||
         cp == 0x115F || cp == 0x1160 || cp == 0x1680 || cp == 0x180E ||
         (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
         (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0x3164 || cp == 0xFEFF ||
         cp == 0xFFA0;
}

} // namespace

bool is_blank_reason(std::string_view reason) {
  size_t i = 0;
  while (i < reason.size()) {
    auto cp = decode(reason, i);
    if (!cp || !invisible(*cp))
      return false;
  }
  return true;
}

} // namespace halfway::policy
