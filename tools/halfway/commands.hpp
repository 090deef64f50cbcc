#pragma once
// Each subcommand registers itself on the CLI11 app and returns the function that runs it, whose
// result is the exit status: 0 success, 1 a differential violation, 2 any error (main prints it).
#include <CLI/CLI.hpp>
#include <functional>

namespace halfway::cli {

using Runner = std::function<int()>;

Runner add_bench(CLI::App& app);
Runner add_completion(CLI::App& app);
Runner add_demo(CLI::App& app);
Runner add_devices(CLI::App& app);
Runner add_diff(CLI::App& app);
Runner add_emit(CLI::App& app);
Runner add_fuse(CLI::App& app);
Runner add_fuzz(CLI::App& app);
Runner add_ops(CLI::App& app);
Runner add_plot(CLI::App& app);
Runner add_reduce(CLI::App& app);
Runner add_run(CLI::App& app);
Runner add_sites(CLI::App& app);

} // namespace halfway::cli
