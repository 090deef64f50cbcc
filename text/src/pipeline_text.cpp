#include "pipeline_text.hpp"

#include "literal.hpp"

namespace halfway::text {
namespace {

struct ArgVisitor {
  const Source& source;
  PipelineText::Arg& out;

  void operator()(const ast::Word& w) const {
    out.buffer = w.text;
    out.where = source.context(w.offset);
  }
  void operator()(const ast::Literal& l) const {
    out.where = source.context(l.offset);
    if (l.type.empty() && (l.text == "true" || l.text == "false")) {
      out.type = ir::ScalarType::Bool;
    } else if (l.type.empty()) {
      // The suggestion guesses from the spelling: a float's has a point, exponent, inf or nan.
      const bool looks_float = l.text.find_first_of(".eEin") != std::string::npos;
      source.fail(l.offset, "constant " + l.text + " needs a type suffix in a launch, e.g. " +
                                l.text + (looks_float ? ":f32" : ":u32"));
    } else {
      out.type = scalar_type(source, ast::Word{{l.offset}, l.type});
    }
    out.bits = literal_bits(source, l, out.type);
  }
};

struct ItemVisitor {
  const Source& source;
  PipelineText& out;

  void operator()(const ast::PipeBuffer& b) const {
    out.buffers.push_back({b.name.text, scalar_type(source, b.type), b.size, b.kind.text == "temp",
                           source.context(b.offset)});
  }
  void operator()(const ast::PipeLaunch& l) const {
    PipelineText::Launch launch;
    launch.kernel = l.kernel;
    launch.groups = {l.gx, l.gy, l.gz};
    launch.where = source.context(l.offset);
    for (const ast::PipeArg& a : l.args) {
      PipelineText::Arg arg;
      boost::apply_visitor(ArgVisitor{source, arg}, a);
      launch.args.push_back(std::move(arg));
    }
    out.launches.push_back(std::move(launch));
  }
};

} // namespace

PipelineText lower_pipeline(const Source& source, const ast::Pipeline& p) {
  PipelineText out;
  out.name = p.name;
  out.where = source.context(p.offset);
  for (const ast::PipeItem& item : p.items)
    boost::apply_visitor(ItemVisitor{source, out}, item);
  return out;
}

} // namespace halfway::text
