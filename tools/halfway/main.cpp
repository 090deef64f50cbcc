// halfway: run, diff, emit and inspect kernels from the command line. Every failure is one
// halfway::Error printed on stderr with exit status 2.
#include "commands.hpp"
#include "halfway/ir/error.hpp"

#include <iostream>
#include <map>

int main(int argc, char** argv) {
  CLI::App app{"halfway: GPU kernels whose low-precision results can be trusted"};
  app.require_subcommand(1);
  std::map<CLI::App*, halfway::cli::Runner> runners;
  auto add = [&](auto adder) {
    size_t before = app.get_subcommands({}).size();
    halfway::cli::Runner r = adder(app);
    runners[app.get_subcommands({})[before]] = std::move(r);
  };
  add(halfway::cli::add_demo);
  add(halfway::cli::add_ops);
  try {
    app.parse(argc, argv);
    for (auto& [sub, run] : runners)
      if (sub->parsed())
        return run();
    return 2;
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const halfway::Error& e) {
    std::cerr << "halfway: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "halfway: internal error: " << e.what() << "\n";
    return 2;
  }
}
