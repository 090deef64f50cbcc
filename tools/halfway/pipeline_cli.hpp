#pragma once
// Pipelines on the command line (specs/fusion.md): `halfway run` and `halfway diff` take
// --pipeline P (or a file whose one pipeline is meant when no --kernel is given) and hand over
// to these.
#include "halfway/diff/diff.hpp"
#include "halfway/pipeline/run.hpp"
#include "halfway/text/kernel_file.hpp"
#include "launch_setup.hpp"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace halfway::cli {

struct PipelineChoice {
  std::string name;
  const CLI::Option* option = nullptr;

  void add_option(CLI::App& sub);
  // Whether the command is about a pipeline: --pipeline was given, or no --kernel was and the
  // file holds exactly one pipeline.
  bool wanted(const KernelChoice& choice, const text::KernelFile& file) const;
};

// The pipeline's buffers: every buffer some launch reads before any launch writes it is filled
// from --inputs (random, ties: the first three f32 inputs of one length as multiply-add ties,
// zeros) and --seed; the others start zeroed.
pipeline::Buffers pipeline_inputs(const pipeline::Pipeline& p, const LaunchSetup& setup);

// `halfway run --pipeline`: every launch in order on one device, then the first `show` elements
// of every buffer a launch writes.
int run_pipeline(const text::KernelFile& file, const std::string& name, const std::string& device,
                 const LaunchSetup& setup, size_t show, bool json);

// `halfway diff --pipeline`: each launch is compared with the reference interpreter by the
// checker (diff::run), on the reference's buffers as the earlier launches left them, so that
// every launch is judged on the same inputs on every device. One report per launch and device.
int diff_pipeline(const text::KernelFile& file, const std::string& name,
                  const std::vector<std::string>& devices, const LaunchSetup& setup,
                  const diff::Options& options, bool json);

} // namespace halfway::cli
