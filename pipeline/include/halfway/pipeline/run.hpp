#pragma once
// Running a pipeline on one device: each launch in order, through the device interface every
// backend implements, so a pipeline runs wherever a kernel does.

#include "halfway/pipeline/pipeline.hpp"
#include "halfway/runtime/device.hpp"

#include <map>
#include <string>
#include <vector>

namespace halfway::pipeline {

// The pipeline's buffers that are not temporaries, by name: the caller fills the inputs and reads
// the outputs after run().
using Buffers = std::map<std::string, rt::HostBuffer, std::less<>>;

// A zeroed buffer for every non-temporary buffer of `p`.
Buffers make_buffers(const Pipeline& p);

struct RunResult {
  std::vector<rt::LaunchResult> launches; // one per launch, in order
  double wall_ms = 0;                     // the whole run, temporaries' allocation included
};

// Checks `p` (check()) and that `io` holds every non-temporary buffer with its declared type and
// length (a Usage error naming the buffer otherwise), allocates the temporaries zeroed, and
// launches every kernel in order on `device`. A failing launch throws its error with the launch
// named in front; buffers written by earlier launches keep what they wrote.
RunResult run(const Pipeline& p, rt::Device& device, Buffers& io,
              const rt::LaunchOptions& options = {});

} // namespace halfway::pipeline
