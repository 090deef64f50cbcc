#include "halfway/diff/compare.hpp"
#include "halfway/diff/report.hpp"

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
  for (const BufferReport& b : r.buffers) {
    out << b.name << " (" << ir::name(b.type) << "[" << b.size << "]): " << b.exact << " exact, "
        << b.within_bound << " within bound, " << b.violations << " violations";
    if (b.unchecked)
      out << ", " << b.unchecked << " unchecked";
    out << "; largest difference " << ulps_text(b.max_ulps);
    if (b.nan_mismatches)
      out << " (and " << b.nan_mismatches << " NaN against a number)";
    out << "\n";
    out << "  elements by distance from the reference ("
        << (float_format(b.type) ? "ulps of " + std::string(ir::name(b.type)) : "integer units")
        << "):\n"
        << histogram_text(b.histogram, "  ");
    if (!b.first_violations.empty()) {
      out << "  first " << b.first_violations.size() << " of " << b.violations
          << " violations (inputs shown at the same index; scalars as given):\n";
      for (const Violation& v : b.first_violations)
        violation_text(out, b, v);
    }
  }
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
