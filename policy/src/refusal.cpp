#include "halfway/policy/refusal.hpp"

#include "halfway/ir/names.hpp"
#include "halfway/support/utf8.hpp"

namespace halfway::policy {

namespace {

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
    auto cp = decode_utf8(reason, i);
    if (!cp || !invisible(*cp))
      return false;
  }
  return true;
}

std::string refusal_message(Refusal refusal) {
  switch (refusal) {
  case Refusal::BlankReason:
    return "An opt-in needs a reason: say why this kernel may round differently from the "
           "interpreter.";
  case Refusal::DefaultKernelName:
    return "A kernel scope may not name '" + std::string(kDefaultKernelName) +
           "': every unnamed kernel has that name, so it would cover all of them; name the kernel, "
           "or opt in for all kernels.";
  }
  return "The opt-in was refused.";
}

} // namespace halfway::policy
