// `halfway devices`: every device this build can make, with its float controls and features.
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/ir/error.hpp"
#include "halfway/runtime/device.hpp"

#include <sstream>

namespace halfway::cli {

Runner add_devices(CLI::App& app) {
  app.add_subcommand("devices", "List the devices with their float-control profiles and features");
  return [] {
    std::ostringstream out;
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
            << "\n";
      } catch (const Error& e) {
        out << name << ": unavailable: " << e.what() << "\n";
      }
    }
    Output::get().text(out.str());
    return 0;
  };
}

} // namespace halfway::cli
