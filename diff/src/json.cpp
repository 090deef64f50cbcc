#include "halfway/diff/compare.hpp"
#include "halfway/diff/report.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace halfway::diff {

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  // Invalid UTF-8 would make the document invalid: replace such bytes with U+FFFD.
  std::string valid;
  valid.reserve(out.size());
  for (size_t i = 0; i < out.size();) {
    unsigned char c = static_cast<unsigned char>(out[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= out.size();
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(out[i + k]) >> 6) == 2;
    if (ok) {
      valid.append(out, i, len);
      i += len;
    } else {
      valid += "\xef\xbf\xbd";
      ++i;
    }
  }
  return valid + "\"";
}

namespace {

std::string ulps_json(uint64_t ulps) {
  return ulps == std::numeric_limits<uint64_t>::max() ? "null" : std::to_string(ulps);
}

std::string value_json(ir::ScalarType type, uint64_t bits) {
  return "{\"bits\": " + json_quote(bits_text(type, bits)) +
         ", \"value\": " + json_quote(value_text(type, bits)) + "}";
}

std::string reason_json(const std::optional<std::string>& reason) {
  return std::string("{\"held\": ") + (reason ? "true" : "false") +
         ", \"reason\": " + (reason ? json_quote(*reason) : "null") + "}";
}

std::string bound_json(const Bound& b, ir::ScalarType type) {
  std::ostringstream out;
  out << "{\"kind\": " << json_quote(name(b.kind));
  if (b.kind == Bound::Kind::DevicePrecision) {
    out << ", \"lo\": " << value_json(type, b.lo) << ", \"hi\": " << value_json(type, b.hi);
  } else if (b.kind == Bound::Kind::SingleRounding) {
    char e[32], x[32];
    std::snprintf(e, sizeof e, "%.17g", b.error);
    std::snprintf(x, sizeof x, "%.17g", b.exact);
    out << ", \"shape\": " << json_quote(ir::name(b.shape))
        << ", \"lo\": " << value_json(type, b.lo) << ", \"hi\": " << value_json(type, b.hi)
        << ", \"error\": " << json_quote(e) << ", \"exact\": " << json_quote(x);
  } else if (b.kind == Bound::Kind::RelaxedAccumulation) {
    char e[32], s[32];
    std::snprintf(e, sizeof e, "%.17g", b.error);
    std::snprintf(s, sizeof s, "%.17g", b.abs_sum);
    out << ", \"steps\": " << b.steps << ", \"terms\": " << b.terms
        << ", \"abs_sum\": " << json_quote(s) << ", \"error\": " << json_quote(e)
        << ", \"narrowed\": " << (b.narrowed ? "true" : "false");
  }
  out << "}";
  return out.str();
}

std::string violation_json(const BufferReport& b, const Violation& v) {
  std::ostringstream out;
  out << "{\"index\": " << v.index << ", \"inputs\": [";
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    const InputValue& in = v.inputs[i];
    out << (i ? ", " : "") << "{\"name\": " << json_quote(in.name)
        << ", \"type\": " << json_quote(ir::name(in.type))
        << ", \"scalar\": " << (in.scalar ? "true" : "false")
        << ", \"bits\": " << json_quote(bits_text(in.type, in.bits))
        << ", \"value\": " << json_quote(value_text(in.type, in.bits)) << "}";
  }
  out << "], \"reference\": " << value_json(b.type, v.reference)
      << ", \"device\": " << value_json(b.type, v.device) << ", \"ulps\": " << ulps_json(v.ulps)
      << ", \"bound\": " << bound_json(v.bound, b.type) << ", \"models\": ";
  if (v.models) {
    out << "{";
    for (interp::RoundingModel m : interp::kAllRoundingModels)
      out << (m == interp::RoundingModel::TwoStep ? "" : ", ") << json_quote(interp::name(m))
          << ": " << value_json(b.type, (*v.models)[static_cast<size_t>(m)]);
    out << "}";
  } else {
    out << "null";
  }
  out << "}";
  return out.str();
}

// A ratio: null when none, the string "inf" (JSON has no infinity: a string, like the values).
std::string ratio_json(const std::optional<double>& ratio) {
  if (!ratio)
    return "null";
  if (std::isinf(*ratio))
    return "\"inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", *ratio);
  return buf;
}

std::string counts_json(const std::array<uint64_t, interp::kRoundingModels>& counts) {
  std::string out = "{";
  for (interp::RoundingModel m : interp::kAllRoundingModels)
    out += (m == interp::RoundingModel::TwoStep ? "" : ", ") + json_quote(interp::name(m)) + ": " +
           std::to_string(counts[static_cast<size_t>(m)]);
  return out + "}";
}

std::string models_json(const BufferReport& b) {
  const ModelCounts& m = b.models;
  std::ostringstream out;
  out << "{\"elements\": " << m.elements << ", \"first\": " << counts_json(m.first)
      << ", \"equal\": " << counts_json(m.equal) << ", \"fits\": [";
  const auto fits = m.fits();
  for (size_t i = 0; i < fits.size(); ++i)
    out << (i ? ", " : "") << json_quote(interp::name(fits[i]));
  out << "], \"explained\": " << m.explained << ", \"unexplained\": " << m.unexplained
      << ", \"max_bound_ratio\": " << ratio_json(m.max_bound_ratio) << ", \"first_unexplained\": [";
  for (size_t j = 0; j < m.first_unexplained.size(); ++j)
    out << (j ? ", " : "") << violation_json(b, m.first_unexplained[j]);
  out << "]}";
  return out.str();
}

std::string histogram_json(const UlpHistogram& h) {
  std::ostringstream out;
  out << "{\"buckets\": [";
  for (size_t k = 0; k < h.used(); ++k)
    out << (k ? ", " : "") << "{\"label\": " << json_quote(UlpHistogram::label(k))
        << ", \"lo\": " << UlpHistogram::lo(k) << ", \"hi\": " << UlpHistogram::hi(k)
        << ", \"count\": " << h.counts[k] << "}";
  out << "], \"nan_mismatch\": " << h.nan_mismatch << "}";
  return out.str();
}

} // namespace

std::string to_json(const Report& r) {
  std::ostringstream out;
  out << "{\"kernel\": " << json_quote(r.kernel) << ", \"reference\": " << json_quote(r.reference)
      << ", \"device\": " << json_quote(r.device) << ", \"groups\": [" << r.groups[0] << ", "
      << r.groups[1] << ", " << r.groups[2] << "], \"ok\": " << (r.ok() ? "true" : "false")
      << ", \"violations\": " << r.violations()
      << ", \"budget\": {\"single_rounding\": " << reason_json(r.budget.single_rounding)
      << ", \"relaxed_accumulation\": " << reason_json(r.budget.relaxed_accumulation) << "}"
      << ", \"float_controls\": {\"flush_f16\": " << (r.controls.flush_f16 ? "true" : "false")
      << ", \"flush_f32\": " << (r.controls.flush_f32 ? "true" : "false")
      << ", \"flush_f64\": " << (r.controls.flush_f64 ? "true" : "false")
      << ", \"preserve_signed_zero_inf_nan\": "
      << (r.controls.preserve_signed_zero_inf_nan ? "true" : "false") << "}, \"inconclusive\": [";
  for (size_t i = 0; i < r.inconclusive.size(); ++i)
    out << (i ? ", " : "") << "{\"buffer\": " << json_quote(r.inconclusive[i].buffer)
        << ", \"reason\": " << json_quote(r.inconclusive[i].reason) << "}";
  out << "], \"inconclusive_accepted\": " << (r.inconclusive_accepted ? "true" : "false")
      << ", \"buffers\": [";
  for (size_t i = 0; i < r.buffers.size(); ++i) {
    const BufferReport& b = r.buffers[i];
    out << (i ? ", " : "") << "{\"name\": " << json_quote(b.name) << ", \"param\": " << b.param
        << ", \"type\": " << json_quote(ir::name(b.type)) << ", \"size\": " << b.size
        << ", \"exact\": " << b.exact << ", \"within_bound\": " << b.within_bound
        << ", \"violations\": " << b.violations << ", \"unchecked\": " << b.unchecked
        << ", \"within_interval\": " << b.within_interval << ", \"undecided\": " << b.undecided
        << ", \"max_interval_ratio\": " << ratio_json(b.max_interval_ratio)
        << ", \"max_ulps\": " << b.max_ulps << ", \"nan_mismatches\": " << b.nan_mismatches
        << ", \"reference_nan\": " << b.reference_nan << ", \"unchanged\": " << b.unchanged
        << ", \"histogram\": " << histogram_json(b.histogram) << ", \"first_violations\": [";
    for (size_t j = 0; j < b.first_violations.size(); ++j)
      out << (j ? ", " : "") << violation_json(b, b.first_violations[j]);
    // "models": the per-model counts in the short form readers such as `halfway plot` take.
    out << "], \"rounding_models\": " << models_json(b)
        << ", \"models\": " << (b.models.elements ? counts_json(b.models.equal) : "null") << "}";
  }
  out << "], \"exact_models\": " << (r.exact_models ? "true" : "false")
      << ", \"math_precision\": " << json_quote(r.math_precision)
      << ", \"intervals\": " << (r.intervals ? "true" : "false")
      << ", \"undecided_lanes\": " << r.undecided_lanes << ", \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i)
    out << (i ? ", " : "") << json_quote(r.notes[i]);
  out << "]}";
  return out.str();
}

} // namespace halfway::diff
