#pragma once
// Helpers of the CPU device tests: one launch's buffers and scalars, run on the interpreter (the
// oracle) and on a device from the same inputs, and compared bit for bit.

#include "halfway/interp/interp.hpp"
#include "halfway/runtime/buffer.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace halfway::cpu_test {

// The inputs of one launch: a buffer per buffer parameter, a bit pattern per scalar parameter.
struct Launch {
  std::vector<rt::HostBuffer> buffers; // indexed by parameter; empty for scalars
  std::vector<uint64_t> scalars;       // indexed by parameter; 0 for buffers
  std::vector<bool> is_buffer;
  rt::Grid grid;

  explicit Launch(const ir::Kernel& k, rt::Grid g = {});
  Launch() = default;
  Launch(Launch&&) = default;
  Launch& operator=(Launch&&) = default;
  Launch clone() const;
  std::vector<rt::Arg> args();
  rt::HostBuffer& buffer(const ir::Kernel& k, std::string_view param);
  void set_scalar(const ir::Kernel& k, std::string_view param, uint64_t bits);
};

template <class T> rt::HostBuffer make_buffer(ir::ScalarType type, const std::vector<T>& values) {
  rt::HostBuffer b(type, values.size());
  if (!values.empty())
    std::memcpy(b.data(), values.data(), b.size_bytes());
  return b;
}
template <class T> std::vector<T> contents(const rt::HostBuffer& b) {
  std::vector<T> out(b.size());
  if (!out.empty())
    std::memcpy(out.data(), b.data(), b.size_bytes());
  return out;
}

// Empty when every buffer is bit-identical; else a description of the first differences.
std::string compare_bits(const ir::Kernel& k, const Launch& want, const Launch& got,
                         size_t max_reports = 5);

// The interpreter's outputs for `in` (strict two-step narrowing unless `model` says otherwise).
Launch run_interp(const ir::VerifiedKernel& k, const Launch& in,
                  interp::NarrowingModel model = interp::NarrowingModel::TwoStep);
Launch run_device(rt::Device& device, const ir::VerifiedKernel& k, const Launch& in,
                  const rt::LaunchOptions& options = {});

// The error a run throws, or nullopt when it succeeds (the interpreter runs deterministically).
std::optional<Error> interp_error(const ir::VerifiedKernel& k, const Launch& in);
std::optional<Error> device_error(rt::Device& device, const ir::VerifiedKernel& k, const Launch& in,
                                  const rt::LaunchOptions& options = {});

} // namespace halfway::cpu_test
