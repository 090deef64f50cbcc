// `halfway sites FILE.hk [--kernel K]`: each narrowing site with its decision and the rule that
// made it, and the kernel's budget under the current policy (opt-in flags apply here too).
#include "commands.hpp"
#include "halfway/ir/error.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/text/kernel_file.hpp"

#include <iostream>

namespace halfway::cli {

Runner add_sites(CLI::App& app) {
  auto* sub = app.add_subcommand("sites", "List the narrowing sites of the kernels in a .hk file, "
                                          "each with its decision, and each kernel's budget");
  auto file = std::make_shared<std::string>();
  auto kernel = std::make_shared<std::string>();
  sub->add_option("file", *file, "A .hk kernel file")->required();
  sub->add_option("--kernel,-k", *kernel, "Only this kernel");
  return [file, kernel] {
    text::KernelFile f = text::parse_file(*file);
    std::vector<ir::VerifiedKernel> kernels;
    if (kernel->empty())
      kernels = f.verify_all();
    else
      kernels.push_back(f.verify(*kernel));
    for (size_t i = 0; i < kernels.size(); ++i) {
      const auto& k = kernels[i];
      std::cout << (i ? "\n" : "") << "kernel " << k.name() << "\n"
                << ir::describe_sites(k.kernel()) << "budget:\n"
                << policy::to_string(policy::budget(k.name())) << "\n";
    }
    return 0;
  };
}

} // namespace halfway::cli
