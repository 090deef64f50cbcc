// `halfway demo`: the README's main job. Runs every bundled example on the interpreter and on
// every available device and prints a comparison table.
#include "commands.hpp"
#include "examples.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/ir/printer.hpp"

#include <iostream>

namespace halfway::cli {

Runner add_demo(CLI::App& app) {
  auto* sub = app.add_subcommand("demo", "Run the bundled example kernels on every device and "
                                         "compare them with the reference interpreter");
  auto show_ir = std::make_shared<bool>(false);
  sub->add_flag("--ir", *show_ir, "Also print each example's IR and narrowing sites");
  return [show_ir] {
    auto kernels = examples::all();
    std::cout << "halfway demo: " << kernels.size() << " example kernels\n\n";
    for (const auto& k : kernels) {
      std::cout << ir::print(k.kernel()) << ir::describe_sites(k.kernel()) << "\n";
    }
    std::cout << "Not built yet: the reference interpreter and the cpu and vulkan devices; the "
                 "comparison table appears once they are.\n";
    return 0;
  };
}

} // namespace halfway::cli
