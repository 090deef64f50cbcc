#pragma once
// From a pipeline block's syntax to PipelineText: types and constants resolved, places recorded.

#include "ast.hpp"
#include "halfway/text/pipeline_text.hpp"
#include "source.hpp"

namespace halfway::text {

// Throws Error(Parse) at the place of an unknown type or a constant without a type suffix.
PipelineText lower_pipeline(const Source& source, const ast::Pipeline& p);

} // namespace halfway::text
