#pragma once
// Each subcommand registers itself on the CLI11 app and returns the exit status of its run:
// 0 success, 1 a differential violation, 2 any error (the message is printed by main).
#include <CLI/CLI.hpp>
#include <functional>

namespace halfway::cli {

using Runner = std::function<int()>;

Runner add_demo(CLI::App& app);
Runner add_ops(CLI::App& app);

} // namespace halfway::cli
