#include "halfway/policy/refusal.hpp"

#include "halfway/ir/names.hpp"

namespace halfway::policy {

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
