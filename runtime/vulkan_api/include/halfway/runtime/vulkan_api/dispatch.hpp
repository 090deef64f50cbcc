#pragma once
// Shaping a dispatch and reporting its time.
//
// Vulkan only guarantees 65,535 workgroups per dimension (lavapipe has exactly that), while a
// 16M-element kernel with 64 lanes per group needs 262,144. plan_groups() folds a linear group
// count into a 2D grid; the shader linearises it back as
//     group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x
// and returns when group >= total (the grid may hold up to y-1 extra groups). The total must
// therefore reach the shader, usually as a push constant.

#include "halfway/support/error.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace halfway::vk {

struct GroupGrid {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

// The grid for `total_groups`: {total, 1, 1} when it fits in one
// dimension, else y = ceil(total / max_x) rows of x = ceil(total / y) groups, so x * y >= total
// and fewer than y groups are wasted. Throws Error(Unsupported), naming `kernel`, when even
// max_x * max_y groups are too few.
GroupGrid plan_groups(uint64_t total_groups, const std::array<uint32_t, 3>& max_group_count,
                      const std::string& kernel = {});

struct LaunchTiming {
  // Host time from recording the command buffer to the fence signalling: what a caller waits.
  uint64_t wall_ns = 0;
  // GPU timestamps around the dispatch; nullopt where the queue has no timestamps.
  std::optional<uint64_t> device_ns;
  // The wait was stopped (DispatchWait::expired held) and the dispatch then ended early.
  bool stopped = false;
};

// How Device::dispatch waits for a dispatch it may have to end early. The fence is waited on in
// slices; after each, `expired` is asked. Once it holds, `stop` is called (it asks the running
// shader to end, e.g. by raising the control buffer's cancel word) and the dispatch is expected to
// finish within `grace`. One that does not is still waited for, up to
// DeviceOptions::fence_timeout_ns: returning earlier would free buffers a running shader may still
// write (lavapipe runs in-process). Past that the device is marked lost and dispatch throws
// Error(Device); on real GPUs the driver's watchdog usually ends such a dispatch first, with
// VK_ERROR_DEVICE_LOST, which is equally final for that Device.
struct DispatchWait {
  std::function<bool()> expired;
  std::function<void()> stop;
  std::chrono::milliseconds slice{50};
  std::chrono::milliseconds grace{1000};
};

} // namespace halfway::vk
