#include "halfway/policy/registry.hpp"

#include "halfway/ir/names.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <spdlog/spdlog.h>

namespace halfway::policy {
namespace {

// One opt-in kind's record. Maps use std::less<> so that readers look names up by string_view,
// without allocating.
struct Grants {
  std::optional<std::string> all;
  std::map<std::string, std::string, std::less<>> kernels;
};

using FusedMap = std::map<std::string, std::vector<std::string>, std::less<>>;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names)
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

} // namespace

struct Registry::State {
  mutable std::shared_mutex mutex;
  std::array<Grants, kAllOptIns.size()> grants;
  FusedMap fused; // acyclic: register_fused refuses cycles

  Grants& of(OptIn kind) { return grants[static_cast<size_t>(kind)]; }
  const Grants& of(OptIn kind) const { return grants[static_cast<size_t>(kind)]; }

  // A plain kernel's reason: its own scope's, else all kernels'; null when neither.
  const std::string* plain_reason(OptIn kind, std::string_view kernel) const {
    const Grants& g = of(kind);
    if (auto it = g.kernels.find(kernel); it != g.kernels.end())
      return &it->second;
    return g.all ? &*g.all : nullptr;
  }

  // The distinct plain kernels `name` is built from, in depth-first order of first appearance.
  // `name` itself when it is not fused.
  std::vector<std::string_view> leaves(std::string_view name) const {
    std::vector<std::string_view> out, stack{name};
    std::set<std::string_view> seen;
    while (!stack.empty()) {
      std::string_view next = stack.back();
      stack.pop_back();
      if (!seen.insert(next).second)
        continue;
      auto it = fused.find(next);
      if (it == fused.end()) {
        out.push_back(next);
        continue;
      }
      for (auto part = it->second.rbegin(); part != it->second.rend(); ++part) {
        stack.push_back(*part);
      }
    }
    return out;
  }

  bool holds(OptIn kind, std::string_view kernel) const {
    if (!fused.contains(kernel))
      return plain_reason(kind, kernel) != nullptr;
    for (std::string_view leaf : leaves(kernel)) {
      if (!plain_reason(kind, leaf))
        return false;
    }
    return true;
  }

  std::optional<std::string> reason(OptIn kind, std::string_view kernel) const {
    if (!fused.contains(kernel)) {
      const std::string* own = plain_reason(kind, kernel);
      return own ? std::optional<std::string>(*own) : std::nullopt;
    }
    std::vector<std::string_view> parts = leaves(kernel);
    std::string names, reasons;
    for (std::string_view leaf : parts) {
      const std::string* own = plain_reason(kind, leaf);
      if (!own)
        return std::nullopt;
      names += (names.empty() ? "" : ", ") + std::string(leaf);
      reasons += (reasons.empty() ? "" : "; ") + std::string(leaf) + ": " + *own;
    }
    return "fused from " + names + ": " + reasons;
  }

  // Whether `target` is among `parts` or, through fused kernels, among their parts.
  bool reaches(const std::vector<std::string>& parts, std::string_view target) const {
    for (const auto& part : parts) {
      if (part == target)
        return true;
      auto it = fused.find(part);
      if (it != fused.end() && reaches(it->second, target))
        return true;
    }
    return false;
  }

  bool names_own_scope(std::string_view kernel) const {
    return std::any_of(grants.begin(), grants.end(),
                       [&](const Grants& g) { return g.kernels.contains(kernel); });
  }
};

Registry::Registry(std::shared_ptr<spdlog::logger> logger)
    : logger_(std::move(logger)), state_(std::make_unique<State>()) {}

Registry::~Registry() = default;

std::shared_ptr<spdlog::logger> Registry::logger() const {
  return logger_ ? logger_ : spdlog::default_logger();
}

AcceptOutcome Registry::accept(OptIn kind, const Scope& scope, std::string_view reason) {
  std::optional<Refusal> refusal;
  if (is_blank_reason(reason)) {
    refusal = Refusal::BlankReason;
  } else if (!scope.is_all_kernels() && scope.kernel_name() == kDefaultKernelName) {
    refusal = Refusal::DefaultKernelName;
  }
  if (refusal) {
    logger()->warn("precision policy: refused {} for {}: {}", opt_in_name(kind), to_string(scope),
                   refusal_message(*refusal));
    return AcceptOutcome::failure(*refusal);
  }

  bool recorded = false, names_fused = false;
  {
    std::unique_lock lock(state_->mutex);
    Grants& g = state_->of(kind);
    if (scope.is_all_kernels()) {
      if (!g.all) {
        g.all.emplace(reason);
        recorded = true;
      }
    } else {
      recorded = g.kernels.try_emplace(scope.kernel_name(), reason).second;
      names_fused = recorded && state_->fused.contains(scope.kernel_name());
    }
  }
  // Only the call that recorded logs, so each opt-in is logged once however many threads race.
  if (recorded) {
    logger()->info("precision policy: accepted {} for {}: {}", opt_in_name(kind), to_string(scope),
                   reason);
  }
  if (names_fused) {
    logger()->warn("precision policy: {} is a fused kernel, so this {} opt-in covers nothing: a "
                   "fused kernel holds an opt-in only when all its parts do",
                   to_string(scope), opt_in_name(kind));
  }
  return AcceptOutcome::success();
}

std::optional<std::string> Registry::reason(OptIn kind, std::string_view kernel) const {
  std::shared_lock lock(state_->mutex);
  return state_->reason(kind, kernel);
}

Budget Registry::budget(std::string_view kernel) const {
  Budget out;
  std::shared_lock lock(state_->mutex);
  for (OptIn kind : kAllOptIns)
    out.reason(kind) = state_->reason(kind, kernel);
  return out;
}

uint64_t Registry::budget_key(std::string_view kernel) const {
  Budget bits; // reasons left empty: only which opt-ins hold goes into the key
  std::shared_lock lock(state_->mutex);
  for (OptIn kind : kAllOptIns) {
    if (state_->holds(kind, kernel))
      bits.reason(kind).emplace();
  }
  return bits.key();
}

FuseOutcome Registry::register_fused(std::string_view fused_name, std::vector<std::string> parts) {
  std::optional<FuseError> error;
  bool registered = false, had_own_scope = false;
  std::string part_list = join(parts);
  if (fused_name.empty() || fused_name == kDefaultKernelName) {
    error = FuseError::ReservedName;
  } else if (parts.empty()) {
    error = FuseError::NoParts;
  } else {
    std::unique_lock lock(state_->mutex);
    if (auto it = state_->fused.find(fused_name); it != state_->fused.end()) {
      if (it->second != parts)
        error = FuseError::Conflict;
    } else if (state_->reaches(parts, fused_name)) {
      error = FuseError::Cycle;
    } else {
      state_->fused.emplace(std::string(fused_name), std::move(parts));
      registered = true;
      had_own_scope = state_->names_own_scope(fused_name);
    }
  }
  if (error) {
    logger()->warn("precision policy: cannot register fused kernel '{}' from {}: {}", fused_name,
                   part_list, fuse_error_message(*error));
    return FuseOutcome::failure(*error);
  }
  if (registered) {
    logger()->debug("precision policy: fused kernel '{}' is built from {}", fused_name, part_list);
  }
  if (had_own_scope) {
    logger()->warn("precision policy: opt-ins naming kernel '{}' now cover nothing: it is a fused "
                   "kernel, read through its parts ({})",
                   fused_name, part_list);
  }
  return FuseOutcome::success();
}

std::optional<std::vector<std::string>> Registry::fused_parts(std::string_view name) const {
  std::shared_lock lock(state_->mutex);
  auto it = state_->fused.find(name);
  if (it == state_->fused.end())
    return std::nullopt;
  return it->second;
}

std::string Registry::report() const {
  std::shared_lock lock(state_->mutex);
  std::string opt_ins, fused;
  for (OptIn kind : kAllOptIns) {
    const Grants& g = state_->of(kind);
    std::string name(opt_in_name(kind));
    if (g.all)
      opt_ins += "    " + name + ", all kernels: " + *g.all + "\n";
    for (const auto& [kernel, reason] : g.kernels) {
      opt_ins += "    " + name + ", " + to_string(Scope::kernel(kernel)) + ": " + reason;
      if (state_->fused.contains(kernel))
        opt_ins += " (covers nothing: a fused kernel)";
      opt_ins += "\n";
    }
  }
  for (const auto& [name, parts] : state_->fused) {
    fused += "    '" + name + "' from " + join(parts) + "\n";
  }
  return "precision policy\n" +
         (opt_ins.empty() ? "  opt-ins in force: none\n" : "  opt-ins in force:\n" + opt_ins) +
         (fused.empty() ? "  fused kernels: none\n" : "  fused kernels:\n" + fused);
}

} // namespace halfway::policy
