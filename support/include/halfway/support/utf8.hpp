#pragma once
// One UTF-8 decoder for the places that look at user text code point by code point: printable()
// (which escapes what is not well-formed) and the policy's blank-reason check.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace halfway {

// Decodes the well-formed UTF-8 sequence at text[i] and advances i past it; nullopt, with i
// unchanged, for an ill-formed one (bad lead or continuation byte, truncation, overlong form,
// surrogate, beyond U+10FFFF). i must be below text.size().
std::optional<uint32_t> decode_utf8(std::string_view text, size_t& i);

} // namespace halfway
