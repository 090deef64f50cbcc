#include "halfway/diff/compare.hpp"
#include "halfway/diff/report.hpp"

#include <cstdio>
#include <limits>
#include <sstream>

namespace halfway::diff {

namespace {

std::string ulps_text(uint64_t ulps) {
  if (ulps == std::numeric_limits<uint64_t>::max())
    return "NaN against a number";
  return std::to_string(ulps) + (ulps == 1 ? " ulp" : " ulps");
}

std::string controls_text(const num::FloatControls& c) {
  std::string flushed;
  for (auto [on, name] :
       {std::pair{c.flush_f16, "f16"}, {c.flush_f32, "f32"}, {c.flush_f64, "f64"}})
    if (on)
      flushed += std::string(flushed.empty() ? "" : ", ") + name;
  return (flushed.empty() ? std::string("denormals preserved")
                          : "flushes " + flushed + " denormals") +
         "; signed zero, inf and NaN " +
         (c.preserve_signed_zero_inf_nan ? "preserved" : "not preserved");
}

void violation_text(std::ostringstream& out, const BufferReport& b, const Violation& v) {
  out << "    [" << v.index << "]";
  const char* sep = " ";
  for (const InputValue& in : v.inputs) {
    out << sep << in.name << " = " << format_value(in.type, in.bits);
    sep = ", ";
  }
  out << "\n      reference " << format_value(b.type, v.reference) << ", device "
      << format_value(b.type, v.device) << ": " << ulps_text(v.ulps)
      << "; allowed: " << describe(v.bound, b.type) << "\n";
  if (v.models) {
    out << "      models:";
    for (interp::RoundingModel m : interp::kAllRoundingModels)
      out << (m == interp::RoundingModel::TwoStep ? " " : ", ") << interp::name(m) << " "
          << format_value(b.type, (*v.models)[static_cast<size_t>(m)]);
    out << "\n";
  }
}

// Which rounding model the device followed at the unbarriered sites, and what none explains.
void models_text(std::ostringstream& out, const BufferReport& b, bool exact_models) {
  const ModelCounts& m = b.models;
  out << "  rounding models at unbarriered sites (" << m.elements << " elements):";
  const char* sep = " ";
  for (interp::RoundingModel model : interp::kAllRoundingModels)
    if (uint64_t n = m.first[static_cast<size_t>(model)]) {
      out << sep << interp::name(model) << " on " << n;
      sep = ", ";
    }
  out << " (each under the first model it equals; equal to each:";
  sep = " ";
  for (interp::RoundingModel model : interp::kAllRoundingModels) {
    out << sep << interp::name(model) << " " << m.equal[static_cast<size_t>(model)];
    sep = ", ";
  }
  out << "); fits: ";
  const auto fits = m.fits();
  sep = "";
  for (interp::RoundingModel model : fits) {
    out << sep << interp::name(model);
    sep = ", ";
  }
  out << (fits.empty() ? "no single model" : "") << "\n";
  // "within bound, unexplained: N", never "N within bound": that phrase counts passed elements.
  out << "  explained by a model: " << m.explained
      << " differing elements; within bound, unexplained: " << m.unexplained
      << (exact_models && m.unexplained ? " (violations)" : "")
      << "; largest |difference| / bound: ";
  if (m.max_bound_ratio) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3g", *m.max_bound_ratio);
    out << ratio << "\n";
  } else {
    out << "none (nothing differs)\n";
  }
  if (!m.first_unexplained.empty()) {
    out << "  first " << m.first_unexplained.size() << " of " << m.unexplained
        << " elements within bound, unexplained:\n";
    for (const Violation& v : m.first_unexplained)
      violation_text(out, b, v);
  }
}

} // namespace

std::string to_text(const Report& r) {
  std::ostringstream out;
  out << "kernel " << r.kernel << ": " << r.reference << " against " << r.device << "\n";
  std::istringstream budget(policy::to_string(r.budget));
  std::string line;
  for (bool first = true; std::getline(budget, line); first = false)
    out << (first ? "budget: " : "        ") << line << "\n";
  if (!r.budget.holds_any())
    out << "        (no opt-in: every element must be bit-exact)\n";
  out << "float controls: " << controls_text(r.controls) << "\n";
  if (r.intervals)
    out << "math precision: " << r.math_precision
        << " (each element must lie in the interval its ops' documented errors propagate to)\n";
  if (r.exact_models)
    out << "exact models: an element at an unbarriered site must equal a rounding model\n";
  for (const BufferReport& b : r.buffers) {
    out << b.name << " (" << ir::name(b.type) << "[" << b.size << "]): " << b.exact << " exact, "
        << b.within_bound << " within bound, " << b.violations << " violations";
    if (b.unchecked)
      out << ", " << b.unchecked << " unchecked";
    if (r.intervals)
      out << ", " << b.within_interval << " within interval, " << b.undecided << " undecided";
    out << "; largest difference " << ulps_text(b.max_ulps);
    if (b.nan_mismatches)
      out << " (and " << b.nan_mismatches << " NaN against a number)";
    out << "\n";
    if (r.intervals && b.max_interval_ratio) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3g", *b.max_interval_ratio);
      out << "  largest |device - reference| / (interval end - reference): " << ratio << "\n";
    }
    out << "  elements by distance from the reference ("
        << (float_format(b.type) ? "ulps of " + std::string(ir::name(b.type)) : "integer units")
        << "):\n"
        << histogram_text(b.histogram, "  ");
    if (b.models.elements)
      models_text(out, b, r.exact_models);
    if (!b.first_violations.empty()) {
      out << "  first " << b.first_violations.size() << " of " << b.violations
          << " violations (inputs shown at the same index; scalars as given):\n";
      for (const Violation& v : b.first_violations)
        violation_text(out, b, v);
    }
  }
  if (r.undecided_lanes)
    out << "undecided: " << r.undecided_lanes
        << " lanes took a branch or loop the intervals could not decide\n";
  for (const std::string& n : r.notes)
    out << "note: " << n << "\n";
  for (const Inconclusive& i : r.inconclusive)
    out << "inconclusive: " << i.buffer << ": " << i.reason << "\n";
  std::string why = std::to_string(r.inconclusive.size()) + " inconclusive buffer" +
                    (r.inconclusive.size() == 1 ? "" : "s");
  if (r.violations())
    out << "result: FAILED (" << r.violations() << " violations"
        << (r.inconclusive.empty() ? "" : ", " + why) << ")\n";
  else if (r.inconclusive.empty())
    out << "result: OK\n";
  else if (r.inconclusive_accepted)
    out << "result: OK, inconclusive accepted (" << why << ")\n";
  else
    out << "result: INCONCLUSIVE (" << why << ")\n";
  return out.str();
}

} // namespace halfway::diff
