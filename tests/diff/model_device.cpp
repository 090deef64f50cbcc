#include "model_device.hpp"

#include "halfway/numerics/formats.hpp"

namespace halfway::diff::test {

InterpDevice::InterpDevice(std::string name, interp::NarrowingModel model,
                           const policy::Registry& registry, num::FloatControls applied,
                           Corrupt corrupt, std::optional<num::FloatControls> advertised)
    : model_(model), registry_(registry), controls_(applied), corrupt_(std::move(corrupt)) {
  info_.name = std::move(name);
  info_.description = "the reference interpreter standing in for a device (tests only)";
  info_.controls = advertised.value_or(applied);
  info_.may_fuse = model == interp::NarrowingModel::SingleRounding;
}

rt::LaunchResult InterpDevice::launch(const ir::VerifiedKernel& kernel, const rt::Grid& grid,
                                      std::span<const rt::Arg> args,
                                      const rt::LaunchOptions& options) {
  interp::Options o;
  o.deterministic = options.deterministic;
  o.threads = options.threads;
  o.controls = controls_;
  o.narrowing = model_;
  interp::Stats stats = interp::run(kernel, grid, args, o);
  if (corrupt_)
    corrupt_(kernel.kernel(), args);
  rt::LaunchResult r;
  r.wall_ms = stats.wall_ms;
  r.budget = registry_.budget(kernel.name());
  return r;
}

InterpDevice strict_device(const policy::Registry& registry, num::FloatControls controls) {
  return InterpDevice("strict", interp::NarrowingModel::TwoStep, registry, controls);
}

InterpDevice model_device(const policy::Registry& registry, num::FloatControls controls) {
  return InterpDevice("model", interp::NarrowingModel::SingleRounding, registry, controls);
}

InterpDevice::Corrupt shift_one_ulp(size_t every) {
  return [every](const ir::Kernel& k, std::span<const rt::Arg> args) {
    for (size_t p = 0; p < args.size(); ++p) {
      if (!k.params[p].is_buffer() || k.params[p].access == ir::Access::Read ||
          k.params[p].type != ir::ScalarType::F16)
        continue;
      rt::HostBuffer& b = *args[p].buffer;
      for (size_t i = 0; i < b.size(); i += every) {
        uint64_t v = b.get_bits(i);
        if ((v & 0x7fff) < 0x7c00)
          b.set_bits(i, v + 1);
      }
    }
  };
}

} // namespace halfway::diff::test
