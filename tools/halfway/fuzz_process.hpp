#pragma once
// `halfway fuzz` runs its campaign in a child process, so that a device that crashes on a
// generated kernel (a Vulkan driver dereferencing a null pointer while it compiles valid SPIR-V)
// becomes a finding rather than the end of the campaign. The child runs the kernels and sends
// back, over a pipe, which comparison it is about to make, each finding and its running counts;
// the parent calls the options' callbacks with them. When the child dies by a signal, the parent
// records the comparison in flight as an unexplained finding ("the device crashed (SIGSEGV)"),
// with the kernel's text, and starts a new child at the next kernel. The results are those
// kernelgen::run_campaign would give in-process, crashes aside.

#include "child_process.hpp"
#include "halfway/kernelgen/campaign.hpp"

namespace halfway::cli {

using child::AlreadyReported;

// Must be called before anything in this process made a device: the child inherits the
// process, and a driver's state is not safe to share across fork().
kernelgen::CampaignResult run_campaign_in_child(const kernelgen::CampaignOptions& options);

} // namespace halfway::cli
