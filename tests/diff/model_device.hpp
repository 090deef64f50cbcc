#pragma once
// Stand-ins for real devices in the checker's own tests, all built on the interpreter:
//  - the strict device: the two-step model, i.e. a device that keeps every barrier;
//  - the model device: the single-rounding model, i.e. the most-fusing device, which rounds every
//    unbarriered narrowing once from its exact value whatever the budget says (a compiler that
//    fuses regardless of NoContraction, like RADV's v_fma_mixlo_f16 peephole);
//  - either one with a `corrupt` step applied to its outputs, for deliberately wrong devices.
// `applied` float controls are what the interpreter computes with; info() advertises `advertised`
// (the applied ones unless given), so that a device can lie about them or flush only its stores.

#include "halfway/interp/interp.hpp"
#include "halfway/policy/registry.hpp"
#include "halfway/runtime/device.hpp"

#include <functional>
#include <optional>
#include <string>

namespace halfway::diff::test {

class InterpDevice : public rt::Device {
public:
  // Called after a successful launch with the kernel and the device's own arguments.
  using Corrupt = std::function<void(const ir::Kernel&, std::span<const rt::Arg>)>;

  InterpDevice(std::string name, interp::NarrowingModel model, const policy::Registry& registry,
               num::FloatControls applied = {}, Corrupt corrupt = nullptr,
               std::optional<num::FloatControls> advertised = std::nullopt);

  const rt::DeviceInfo& info() const override { return info_; }
  // Advertise another math profile (the interpreter still computes correctly rounded math; a
  // `corrupt` step can then move results as a device of that profile may).
  void set_math(ir::MathProfile profile) { info_.math = profile; }
  rt::LaunchResult launch(const ir::VerifiedKernel& kernel, const rt::Grid& grid,
                          std::span<const rt::Arg> args,
                          const rt::LaunchOptions& options = {}) override;

private:
  rt::DeviceInfo info_;
  interp::NarrowingModel model_;
  const policy::Registry& registry_;
  num::FloatControls controls_;
  Corrupt corrupt_;
};

InterpDevice strict_device(const policy::Registry& registry, num::FloatControls controls = {});
InterpDevice model_device(const policy::Registry& registry, num::FloatControls controls = {});

// Adds one ulp (one step of the bit pattern away from zero) to every `every`-th element of every
// f16 output buffer, NaNs and infinities excepted.
InterpDevice::Corrupt shift_one_ulp(size_t every);

} // namespace halfway::diff::test
