#include "halfway/runtime/interp_device.hpp"

#include "halfway/policy/policy.hpp"

namespace halfway::rt {

InterpreterDevice::InterpreterDevice(policy::Registry* registry, interp::NarrowingModel model)
    : registry_(registry ? registry : &policy::global_registry()), model_(model) {
  bool single = model == interp::NarrowingModel::SingleRounding;
  info_.name = single ? "interp-single-rounding" : "interp";
  info_.description =
      single ? "reference interpreter, single-rounding model: every barriered narrowing site is "
               "rounded once from its exact value, as the most-fusing device would"
             : "reference interpreter: every f32 op rounds to binary32, every narrowing rounds "
               "that result again (two-step); correctly rounded math; bounds, race and barrier "
               "checks always on";
  info_.may_fuse = single;
  // Generous but finite: the verifier's workgroup cap in every dimension, and the interpreter's
  // own shared-memory cap (interp.hpp); grid and buffers are bounded by host memory.
  info_.max_shared_bytes = interp::kMaxSharedBytes;
  info_.max_workgroup_size = {ir::kMaxWorkgroupLanes, ir::kMaxWorkgroupLanes,
                              ir::kMaxWorkgroupLanes};
  info_.max_workgroup_invocations = ir::kMaxWorkgroupLanes;
}

LaunchResult InterpreterDevice::launch(const ir::VerifiedKernel& kernel, const Grid& grid,
                                       std::span<const Arg> args, const LaunchOptions& options) {
  check_limits(kernel.kernel(), grid, args, info_);
  const Cancel cancel = options.make_cancel();
  interp::Options o;
  o.cancel = &cancel;
  o.deterministic = options.deterministic;
  o.threads = options.threads;
  o.narrowing = model_;
  o.controls = info_.controls;
  LaunchResult r;
  r.budget = registry_->budget(kernel.name());
  auto stats = interp::run(kernel, grid, args, o);
  r.wall_ms = stats.wall_ms;
  r.device_ms = stats.wall_ms;
  return r;
}

} // namespace halfway::rt
