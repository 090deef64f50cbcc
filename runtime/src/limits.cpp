// Device limits, checked before a launch touches anything: a kernel that does not fit a device
// is a named error, never a silently truncated dispatch or an overrun of shared memory.
#include "halfway/runtime/device.hpp"

namespace halfway::rt {

namespace {

std::string dims(const std::array<uint32_t, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

[[noreturn]] void limit(const ir::Kernel& k, const DeviceInfo& device, const std::string& what,
                        const std::string& buffer = {}) {
  ErrorContext c;
  c.kernel = k.name;
  c.buffer = buffer;
  throw Error(ErrorKind::Limit, what + " on device " + device.name, c);
}

} // namespace

std::optional<uint64_t> shared_bytes(const ir::Kernel& k) {
  uint64_t total = 0;
  for (const ir::SharedArray& a : k.shared) {
    uint64_t align = ir::bytes(a.type);
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(uint64_t{a.size}, align, &bytes))
      return std::nullopt;
    uint64_t start = (total + align - 1) / align * align;
    if (start < total || __builtin_add_overflow(start, bytes, &total))
      return std::nullopt;
  }
  return total;
}

void check_limits(const ir::Kernel& k, const Grid& grid, std::span<const Arg> args,
                  const DeviceInfo& device) {
  std::optional<uint64_t> shared = shared_bytes(k);
  if (!shared || *shared > device.max_shared_bytes)
    limit(k, device,
          "shared memory of " + (shared ? std::to_string(*shared) : std::string("over 2^64")) +
              " bytes exceeds the limit of " + std::to_string(device.max_shared_bytes) + " bytes");
  for (int d = 0; d < 3; ++d)
    if (k.workgroup[d] > device.max_workgroup_size[d])
      limit(k, device,
            "workgroup size " + dims(k.workgroup) + " exceeds the limit of " +
                std::to_string(device.max_workgroup_size[d]) + " along " + "xyz"[d]);
  uint64_t lanes = uint64_t{k.workgroup[0]} * k.workgroup[1] * k.workgroup[2];
  if (lanes > device.max_workgroup_invocations)
    limit(k, device,
          "workgroup of " + std::to_string(lanes) + " invocations exceeds the limit of " +
              std::to_string(device.max_workgroup_invocations));
  for (int d = 0; d < 3; ++d)
    if (grid.groups[d] > device.max_groups[d])
      limit(k, device,
            "grid of " + std::to_string(grid.groups[d]) + " workgroups along " + "xyz"[d] +
                " exceeds the limit of " + std::to_string(device.max_groups[d]));
  for (size_t i = 0; i < args.size() && i < k.params.size(); ++i) {
    if (!k.params[i].is_buffer() || !args[i].buffer)
      continue;
    uint64_t bytes = args[i].buffer->size_bytes();
    if (bytes > device.max_buffer_bytes)
      limit(k, device,
            "buffer " + k.params[i].name + " of " + std::to_string(bytes) +
                " bytes exceeds the limit of " + std::to_string(device.max_buffer_bytes) +
                " bytes per binding",
            k.params[i].name);
  }
}

} // namespace halfway::rt
