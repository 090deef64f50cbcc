#pragma once
// Which kernels an opt-in covers: all of them, or the one whose name is exactly the given one.
//
// Names match the IR kernel's name byte for byte: no patterns, no prefixes, so that an opt-in can
// never reach further than its author wrote. Two names get special treatment, but not here: the
// registry refuses a Kernel scope naming halfway::kDefaultKernelName (it would cover every
// unnamed kernel), and a Kernel scope naming a fused kernel's generated name covers nothing (see
// registry.hpp). A Scope can still name either, so that refusals can be reported.

#include <compare>
#include <string>

namespace halfway::policy {

class Scope {
public:
  static Scope all_kernels() { return Scope(true, {}); }
  static Scope kernel(std::string name) { return Scope(false, std::move(name)); }

  bool is_all_kernels() const { return all_; }
  // The kernel's name; empty for all_kernels().
  const std::string& kernel_name() const { return name_; }

  // All kernels sorts before every kernel scope, kernel scopes by name.
  friend bool operator==(const Scope&, const Scope&) = default;
  friend std::strong_ordering operator<=>(const Scope& a, const Scope& b) {
    if (a.all_ != b.all_)
      return a.all_ ? std::strong_ordering::less : std::strong_ordering::greater;
    return a.name_.compare(b.name_) <=> 0;
  }

private:
  Scope(bool all, std::string name) : all_(all), name_(std::move(name)) {}
  bool all_;
  std::string name_;
};

// "all kernels" or "kernel 'NAME'".
std::string to_string(const Scope& scope);

} // namespace halfway::policy
