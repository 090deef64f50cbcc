// halfway: run, diff, emit and inspect kernels from the command line. Every failure is one
// halfway::Error printed on stderr with exit status 2.
#include "commands.hpp"
#include "halfway/ir/error.hpp"
#include "launch_setup.hpp"

#include <iostream>
#include <map>

int main(int argc, char** argv) {
  using namespace halfway::cli;
  CLI::App app{"halfway: GPU kernels whose low-precision results can be trusted"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, Runner>> runners;
  for (auto adder : {add_run, add_diff, add_emit, add_sites, add_devices, add_demo, add_ops}) {
    Runner r = adder(app);
    runners.emplace_back(app.get_subcommands({}).back(), std::move(r));
  }
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    apply_opt_in_flags(args); // --accept-…[=K]:REASON, which CLI11 cannot parse
    std::reverse(args.begin(), args.end()); // CLI11 takes a vector in reverse order
    app.parse(args);
    for (auto& [sub, run] : runners)
      if (sub->parsed()) return run();
    return 2;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const halfway::Error& e) {
    std::cerr << "halfway: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "halfway: internal error: " << e.what() << "\n";
    return 2;
  }
}
