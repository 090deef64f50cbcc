#include "halfway/runtime/vulkan_api/device_info.hpp"

#include "halfway/runtime/vulkan_api/result.hpp"
#include "halfway/support/error.hpp"

#include <sstream>
#include <vulkan/vulkan_core.h>

namespace halfway::vk {

const char* device_type_name(DeviceType type) {
  switch (type) {
  case DeviceType::Discrete:
    return "discrete";
  case DeviceType::Integrated:
    return "integrated";
  case DeviceType::Virtual:
    return "virtual";
  case DeviceType::Cpu:
    return "cpu";
  case DeviceType::Other:
    return "other";
  }
  return "other";
}

const char* independence_name(Independence independence) {
  switch (independence) {
  case Independence::Only32Bit:
    return "32-bit only";
  case Independence::All:
    return "all";
  case Independence::None:
    return "none";
  }
  return "none";
}

std::string api_version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string summary(const DeviceInfo& info) {
  std::string out = std::to_string(info.index) + ": " + info.name + " [" +
                    device_type_name(info.type) + ", " +
                    (info.driver_name.empty() ? "unknown driver" : info.driver_name) + ", Vulkan " +
                    api_version_string(info.api_version) + "]";
  if (!info.usable())
    out += " (unusable: " + info.unusable_reason + ")";
  return out;
}

namespace {

std::string mib(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

std::string triple(const std::array<uint32_t, 3>& v) {
  return std::to_string(v[0]) + " x " + std::to_string(v[1]) + " x " + std::to_string(v[2]);
}

void describe_width(std::ostringstream& out, const char* name, const FloatControlsWidth& w) {
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  out << "    " << name << ": denorm preserve " << yes(w.denorm_preserve) << ", flush to zero "
      << yes(w.denorm_flush_to_zero) << ", RTE " << yes(w.rounding_mode_rte) << ", RTZ "
      << yes(w.rounding_mode_rtz) << ", signed zero/inf/nan preserve "
      << yes(w.signed_zero_inf_nan_preserve) << '\n';
}

} // namespace

std::string describe(const DeviceInfo& info) {
  std::ostringstream out;
  out << summary(info) << '\n';
  out << "  driver: " << info.driver_name << " (" << info.driver_info << "), driver id "
      << info.driver_id << ", vendor 0x" << std::hex << info.vendor_id << " device 0x"
      << info.device_id << std::dec << '\n';
  out << "  features: " << describe_features(info.features) << '\n';
  const FloatControls& fc = info.float_controls;
  out << "  float controls (denorm independence "
      << independence_name(fc.denorm_behavior_independence) << ", rounding independence "
      << independence_name(fc.rounding_mode_independence) << "):\n";
  describe_width(out, "f16", fc.f16);
  describe_width(out, "f32", fc.f32);
  describe_width(out, "f64", fc.f64);
  const Limits& l = info.limits;
  out << "  limits: work groups " << triple(l.max_compute_work_group_count) << ", group size "
      << triple(l.max_compute_work_group_size) << ", " << l.max_compute_work_group_invocations
      << " invocations, " << l.max_compute_shared_memory_size << " B shared, storage buffer range "
      << mib(l.max_storage_buffer_range) << ", " << l.max_push_constants_size
      << " B push constants, subgroup " << l.subgroup_size << '\n';
  out << "  timestamps: ";
  if (l.timestamp_valid_bits == 0)
    out << "none on the compute queue\n";
  else
    out << l.timestamp_period << " ns per tick, " << l.timestamp_valid_bits << " valid bits\n";
  out << "  memory: " << (info.unified_memory ? "unified (buffers mapped)" : "discrete (staged)");
  for (const auto& heap : info.heaps)
    out << "; heap " << mib(heap.size) << (heap.device_local ? " device-local" : "")
        << (heap.host_visible ? " host-visible" : "");
  out << '\n';
  return out.str();
}

void require_features(const DeviceInfo& info, const Features& needs, const std::string& kernel) {
  ErrorContext context = kernel_context(kernel);
  if (!info.usable())
    throw Error(ErrorKind::Unsupported,
                "device " + info.name + " cannot run kernels: " + info.unusable_reason, context);
  std::vector<std::string> missing = missing_features(info.features, needs);
  if (missing.empty())
    return;
  std::string list;
  for (std::size_t i = 0; i < missing.size(); ++i) {
    if (i)
      list += i + 1 == missing.size() ? " and " : ", ";
    list += missing[i];
  }
  throw Error(ErrorKind::Unsupported,
              "needs " + list + "; device " + info.name + " lacks " +
                  (missing.size() == 1 ? "it" : "them"),
              context);
}

} // namespace halfway::vk
