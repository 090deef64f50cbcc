#pragma once
// `halfway reduce` checks its kernels in a child process, for the reason `halfway fuzz` runs its
// campaign in one (fuzz_process.hpp): a device that crashes on a kernel must make that kernel's
// check a finding, "the device crashed (SIGSEGV)", rather than end the reduction. Reducing such a
// crash is how a driver bug becomes a small report. The child makes the device, then checks each
// kernel the parent sends it (as text, with its setup) and answers with the kernelgen::Check.
// When it dies by a signal, the check in flight is that crash, and the next check starts a new
// child.

#include "child_process.hpp"
#include "halfway/ir/kernel.hpp"
#include "halfway/kernelgen/campaign.hpp"

#include <memory>
#include <string>

namespace halfway::cli {

class CheckProcess {
public:
  // `device` is a name for rt::make_device. Nothing in this process may have made a device
  // before: a child inherits the process, and a driver's state is not safe to share across
  // fork(). The policy's opt-ins recorded before a check are the child's too.
  explicit CheckProcess(std::string device);
  ~CheckProcess();
  CheckProcess(const CheckProcess&) = delete;
  CheckProcess& operator=(const CheckProcess&) = delete;

  // kernelgen::check of `kernel` on the device, in the child. An error of the child's (it cannot
  // make the device) is thrown here, as it would have been in this process.
  kernelgen::Check check(const ir::Kernel& kernel, const kernelgen::RunSetup& setup);

  // Checks that crashed the device so far.
  uint64_t crashes() const { return crashes_; }

private:
  void start();
  std::string device_;
  std::unique_ptr<child::Child> child_;
  uint64_t crashes_ = 0;
};

} // namespace halfway::cli
