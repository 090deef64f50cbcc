#pragma once
// Success, or the reason for failure. The policy's calls can be refused for ordinary reasons (a
// blank reason, a reserved name) that the caller must look at, so they return a value instead of
// throwing; [[nodiscard]] keeps a refusal from going unnoticed. g++ 12 has no std::expected.

#include <cassert>
#include <optional>

namespace halfway::policy {

template <typename E> class [[nodiscard]] Outcome {
public:
  static Outcome success() { return Outcome(std::nullopt); }
  static Outcome failure(E error) { return Outcome(error); }

  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }

  // Only meaningful when !ok().
  E error() const {
    assert(error_);
    return *error_;
  }

  friend bool operator==(const Outcome&, const Outcome&) = default;

private:
  explicit Outcome(std::optional<E> error) : error_(error) {}
  std::optional<E> error_;
};

} // namespace halfway::policy
