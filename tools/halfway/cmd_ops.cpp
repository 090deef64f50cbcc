// `halfway ops`: the op table as Markdown (specs/op-table.md is this output).
#include "cli_util.hpp"
#include "commands.hpp"
#include "halfway/ir/op_table_doc.hpp"
#include "halfway/support/error.hpp"

namespace halfway::cli {

Runner add_ops(CLI::App& app) {
  app.add_subcommand("ops", "Print the op table (types, rounding, device precision) as Markdown");
  return [] {
    Output::get().text(ir::op_table_markdown());
    return 0;
  };
}

} // namespace halfway::cli
