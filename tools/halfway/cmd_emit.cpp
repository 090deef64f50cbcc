// `halfway emit FILE.hk --kernel K --ir|--llvm|--spirv`: the code each stage produces, under the
// kernel's current budget (opt-in flags apply).
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/support/error.hpp"
#include "launch_setup.hpp"

#ifdef HALFWAY_HAVE_LLVM_CODEGEN
#include "halfway/codegen/llvm/emit.hpp"
#endif
#ifdef HALFWAY_HAVE_SPIRV_CODEGEN
#include "halfway/codegen/spirv/codegen.hpp"
#endif

namespace halfway::cli {

namespace {
struct EmitOptions {
  KernelChoice choice;
  bool ir = false, llvm = false, spirv = false, optimized = false;
};

[[maybe_unused]] [[noreturn]] void not_built(const std::string& kernel, const char* what) {
  throw Error(ErrorKind::Unsupported, std::string(what) + " is not part of this build",
              {.kernel = kernel});
}
} // namespace

Runner add_emit(CLI::App& app) {
  auto* sub = app.add_subcommand("emit", "Print a kernel's IR, LLVM IR or SPIR-V disassembly");
  auto o = std::make_shared<EmitOptions>();
  o->choice.add_options(*sub);
  auto* group = sub->add_option_group("stage");
  group->add_flag("--ir", o->ir, "The IR and its narrowing sites");
  group->add_flag("--llvm", o->llvm, "The LLVM IR the CPU device compiles");
  group->add_flag("--spirv", o->spirv, "The SPIR-V disassembly the Vulkan device runs");
  group->require_option(1);
  sub->add_flag("--optimized", o->optimized, "With --llvm: after the O3 pipeline");
  return [o] {
    auto kernel = o->choice.load();
    auto budget = policy::budget(kernel.name());
    if (o->ir) {
      Output::get().text(ir::print(kernel.kernel()) + "\n" +
                         ir::describe_sites(kernel.kernel(), budget.single_rounding));
      return 0;
    }
    if (o->llvm) {
#ifdef HALFWAY_HAVE_LLVM_CODEGEN
      Output::get().text(codegen::llvm::emit_llvm_ir(
          kernel, budget, {},
          o->optimized ? codegen::llvm::EmitStage::Optimized : codegen::llvm::EmitStage::Lowered));
      return 0;
#else
      not_built(kernel.name(), "the LLVM backend");
#endif
    }
#ifdef HALFWAY_HAVE_SPIRV_CODEGEN
    auto shader = codegen::spirv::generate(kernel, budget);
    Output::get().text(codegen::spirv::disassemble(shader.words));
    return 0;
#else
    not_built(kernel.name(), "the SPIR-V backend");
#endif
  };
}

} // namespace halfway::cli
