#include "halfway/runtime/cancel.hpp"

#include "halfway/runtime/device.hpp"

#include <cstdio>

namespace halfway::rt {

Error Cancel::error(const std::string& kernel, const std::string& device) const {
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.3f", elapsed_s());
  if (interrupted())
    return Error(ErrorKind::Interrupted,
                 "launch on device " + device + " interrupted after " + elapsed + " s",
                 {.kernel = kernel});
  char limit[32] = "?";
  if (has_deadline())
    std::snprintf(limit, sizeof limit, "%.3f",
                  std::chrono::duration<double>(deadline - start).count());
  return Error(ErrorKind::Timeout,
               "launch on device " + device + " timed out after " + elapsed + " s (limit " + limit +
                   " s)",
               {.kernel = kernel});
}

Cancel LaunchOptions::make_cancel() const {
  Cancel c;
  c.flag = cancel;
  if (timeout.count() > 0)
    c.deadline = c.start + timeout;
  return c;
}

} // namespace halfway::rt
