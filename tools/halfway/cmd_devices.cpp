// `halfway devices`: every device this build can make, with its float controls, features and
// math-precision profile (the op table's device precision column, for a Vulkan device).
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/ir/ops.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"

#include <memory>
#include <sstream>

namespace halfway::cli {

namespace {

// The ops whose float results the profile does not round correctly, with their precision.
std::vector<const ir::OpInfo*> imprecise_ops(ir::MathProfile profile) {
  std::vector<const ir::OpInfo*> out;
  if (profile == ir::MathProfile::CorrectlyRounded)
    return out;
  for (size_t i = 0; i < ir::kOpCount; ++i) {
    const ir::OpInfo& o = ir::info(static_cast<ir::Op>(i));
    if (o.device.rule != ir::PrecisionRule::Exact &&
        o.device.rule != ir::PrecisionRule::CorrectlyRounded)
      out.push_back(&o);
  }
  return out;
}

std::string profile_text(ir::MathProfile profile) {
  std::ostringstream out;
  out << "  math precision: " << ir::name(profile);
  if (profile == ir::MathProfile::CorrectlyRounded) {
    out << " (every op, bit-exact with the reference)\n";
    return out.str();
  }
  out << " (Vulkan's precision table; add, sub, mul and conversions correctly rounded):\n";
  for (const ir::OpInfo* o : imprecise_ops(profile))
    out << "    " << o->name << ": " << o->device_precision << "\n";
  return out.str();
}

std::string profile_json(ir::MathProfile profile) {
  std::ostringstream out;
  out << "{\"profile\": " << json_quote(ir::name(profile)) << ", \"ops\": {";
  bool first = true;
  for (const ir::OpInfo* o : imprecise_ops(profile)) {
    out << (first ? "" : ", ") << json_quote(o->name) << ": " << json_quote(o->device_precision);
    first = false;
  }
  out << "}}";
  return out.str();
}

} // namespace

Runner add_devices(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "devices", "List the devices with their float-control and math-precision profiles");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json,
                "Print one JSON document: {\"command\", \"results\": [one object per device], "
                "\"error\"}");
  return [json] {
    std::ostringstream out;
    Output& o = Output::get();
    for (const auto& name : rt::device_names()) {
      try {
        auto d = rt::make_device(name);
        const auto& info = d->info();
        out << name << ": " << info.name << "\n  " << info.description << "\n"
            << "  float controls: f16 denormals "
            << (info.controls.flush_f16 ? "flushed" : "preserved") << ", f32 "
            << (info.controls.flush_f32 ? "flushed" : "preserved") << ", f64 "
            << (info.controls.flush_f64 ? "flushed" : "preserved") << "; signed zero/inf/NaN "
            << (info.controls.preserve_signed_zero_inf_nan ? "preserved" : "not guaranteed")
            << "\n  may fuse a multiply(-add) into a narrowing: " << (info.may_fuse ? "yes" : "no")
            << "\n"
            << profile_text(info.math);
        if (*json)
          o.result("{\"device\": " + json_quote(name) + ", \"name\": " + json_quote(info.name) +
                   ", \"available\": true, \"may_fuse\": " + (info.may_fuse ? "true" : "false") +
                   ", \"math_precision\": " + profile_json(info.math) + "}");
      } catch (const Error& e) {
        out << name << ": unavailable: " << e.what() << "\n";
        if (*json)
          o.result("{\"device\": " + json_quote(name) +
                   ", \"available\": false, \"reason\": " + json_quote(e.what()) + "}");
      }
    }
    if (!*json)
      o.text(out.str());
    return 0;
  };
}

} // namespace halfway::cli
