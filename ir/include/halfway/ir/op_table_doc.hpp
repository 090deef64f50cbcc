#pragma once
// The op table rendered as Markdown: specs/op-table.md is this text (a test keeps them equal),
// and `halfway ops` prints it.
#include <string>

namespace halfway::ir {
std::string op_table_markdown();
}
