// `halfway sites FILE.hk [--kernel K]`: each narrowing site with its decision and the rule that
// made it, and the kernel's budget under the current policy (opt-in flags apply here too).
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/pipeline/fused_budget.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"
#include "launch_setup.hpp"

#include <sstream>

namespace halfway::cli {

Runner add_sites(CLI::App& app) {
  auto* sub = app.add_subcommand("sites", "List the narrowing sites of the kernels in a .hk file, "
                                          "each with its decision, and each kernel's budget");
  auto choice = std::make_shared<KernelChoice>();
  choice->add_options(*sub, /*optional_kernel=*/true);
  return [choice] {
    text::KernelFile f = choice->load_file();
    std::vector<ir::VerifiedKernel> kernels;
    if (choice->kernel.empty())
      kernels = f.verify_all();
    else
      kernels.push_back(f.verify(choice->kernel));
    std::ostringstream out;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const auto& k = kernels[i];
      const policy::Budget budget = policy::budget(k.name());
      out << (i ? "\n" : "") << "kernel " << k.name() << "\n"
          << ir::describe_sites(k.kernel(), budget.single_rounding)
          << pipeline::describe_fused(k.name(), policy::global_registry()) << "budget:\n"
          << policy::to_string(budget) << "\n";
    }
    Output::get().text(out.str());
    return 0;
  };
}

} // namespace halfway::cli
