#pragma once
// The reference interpreter as an rt::Device, so that the CLI, the demo and the differential
// checker can treat it like any other device. Its limits (DeviceInfo, checked by rt::check_limits
// before every launch): interp::kMaxSharedBytes (64 MiB) of shared memory per workgroup, and up
// to ir::kMaxWorkgroupLanes lanes per workgroup in any shape. Launches honour LaunchOptions'
// timeout and cancel flag (interp.hpp, "Cancellation").

#include "halfway/interp/interp.hpp"
#include "halfway/runtime/device.hpp"

namespace halfway::rt {

class InterpreterDevice : public Device {
public:
  explicit InterpreterDevice(policy::Registry* registry = nullptr,
                             interp::NarrowingModel model = interp::NarrowingModel::TwoStep);
  const DeviceInfo& info() const override { return info_; }
  LaunchResult launch(const ir::VerifiedKernel& kernel, const Grid& grid, std::span<const Arg> args,
                      const LaunchOptions& options = {}) override;

private:
  policy::Registry* registry_;
  interp::NarrowingModel model_;
  DeviceInfo info_;
};

} // namespace halfway::rt
