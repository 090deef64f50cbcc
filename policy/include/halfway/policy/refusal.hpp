#pragma once
// Why an opt-in was refused. An opt-in is a recorded decision that someone can later audit, so it
// needs a reason a person wrote, and a scope that covers only what its author meant to cover.

#include "halfway/policy/outcome.hpp"

#include <string>
#include <string_view>

namespace halfway::policy {

enum class Refusal {
  // The reason is empty or has no visible character (see is_blank_reason).
  BlankReason,
  // A Kernel scope naming halfway::kDefaultKernelName: every kernel built without a name gets that
  // name, so the scope would silently cover all of them. Use Scope::all_kernels() to mean that, or
  // give the kernel a name.
  DefaultKernelName,
};

// A sentence saying what was wrong and what to do instead.
std::string refusal_message(Refusal refusal);

// True when `reason` holds nothing a reader could see: only ASCII whitespace and control
// characters, and the Unicode spaces, separators and zero-width characters (NBSP, U+2000..U+200B,
// U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF and the like) in UTF-8. Bytes that are not valid
// UTF-8 count as visible.
bool is_blank_reason(std::string_view reason);

// What accept() returns: success (recorded now, or already recorded earlier) or the refusal.
using AcceptOutcome = Outcome<Refusal>;

} // namespace halfway::policy
