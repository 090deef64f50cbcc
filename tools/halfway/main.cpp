// halfway: run, diff, emit and inspect kernels from the command line. Results go to stdout, logs
// and errors to stderr; every failure is one halfway::Error with exit status 2 (and, with --json,
// a result document holding the error).
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/support/error.hpp"
#include "halfway/version.hpp"
#include "launch_setup.hpp"

#include <algorithm>
#include <iostream>
#include <new>

int main(int argc, char** argv) {
  using namespace halfway::cli;
  using halfway::ErrorKind;
  std::vector<std::string> args(argv + 1, argv + argc);

  // --json of run, diff, devices and fuse covers every failure, argument errors included: decide
  // it up front.
  std::string command;
  for (const auto& a : args)
    if (!a.empty() && a[0] != '-') {
      command = a;
      break;
    }
  bool json = (command == "run" || command == "diff" || command == "bench" ||
               command == "devices" || command == "fuse") &&
              std::find(args.begin(), args.end(), "--json") != args.end();
  Output& out = Output::get();
  out.set_json(json, command);

  int verbosity = 0;
  for (const auto& a : args) {
    if (a == "--verbose" || a == "-v")
      ++verbosity;
    if (a == "-vv")
      verbosity += 2;
    if (a == "--quiet" || a == "-q")
      verbosity = -1;
  }
  setup_logging(verbosity);

  // Named, so that every usage line starts with the program: "Usage: halfway run [OPTIONS] file".
  CLI::App app{"halfway: GPU kernels whose low-precision results can be trusted", "halfway"};
  app.require_subcommand(1);
  app.fallthrough();
  app.set_help_all_flag("--help-all", "Help for every subcommand");
  app.set_version_flag("--version", std::string("halfway ") + halfway::version_string,
                       "Print the version and exit");
  int verbose_count = 0;
  bool quiet = false;
  app.add_flag("--verbose,-v", verbose_count,
               "More log lines on stderr (debug; twice: trace). HALFWAY_LOG=trace|debug|info|"
               "warn|error|off sets the level too; NO_COLOR turns colours off");
  app.add_flag("--quiet,-q", quiet, "Only errors on stderr");
  app.footer("Exit status: 0 success, 1 a differential violation (diff, demo), 2 any error.");
  std::vector<std::pair<CLI::App*, Runner>> runners;
  for (auto adder : {add_run, add_bench, add_diff, add_emit, add_sites, add_fuse, add_devices,
                     add_demo, add_ops, add_plot, add_fuzz, add_reduce, add_completion}) {
    Runner r = adder(app);
    runners.emplace_back(app.get_subcommands({}).back(), std::move(r));
  }
  try {
    install_interrupt_handler();
    install_crash_report();
    rewrite_opt_in_flags(args); // --accept-…[=K]:REASON, which CLI11 cannot parse as written
    std::reverse(args.begin(), args.end()); // CLI11 takes a vector in reverse order
    app.parse(args);
    int status = 2;
    for (auto& [sub, run] : runners)
      if (sub->parsed()) {
        status = run();
        break;
      }
    out.finish();
    return status;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Printed by us rather than by CLI11, so that the arguments it quotes are escaped.
    out.fail(ErrorKind::Usage, e.what(), {});
    if (!json)
      std::cerr << "Run with --help for more information.\n";
    return 2;
  } catch (const halfway::Error& e) {
    out.fail(e.kind(), e.message(), e.context());
    return 2;
  } catch (const std::bad_alloc&) {
    out.fail(ErrorKind::Device, "out of host memory", {});
    return 2;
  } catch (const std::exception& e) {
    out.fail(ErrorKind::Internal, e.what(), {});
    return 2;
  }
}
