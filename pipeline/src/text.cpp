#include "halfway/pipeline/text.hpp"

#include "halfway/ir/printer.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/support/error.hpp"

#include <set>
#include <sstream>

namespace halfway::pipeline {

void register_fused_names(const std::vector<std::string>& names, policy::Registry* registry) {
  policy::Registry& reg = registry ? *registry : policy::global_registry();
  for (const auto& name : names) {
    if (auto parts = fused_parts(name)) {
      if (auto r = reg.register_fused(name, *parts); !r)
        throw Error(ErrorKind::Usage, "kernel '" + name + "' cannot be read as a fused kernel: " +
                                          policy::fuse_error_message(r.error()));
    }
  }
}

Pipeline from_text(const text::KernelFile& file, std::string_view name,
                   policy::Registry* registry) {
  const text::PipelineText& t = file.pipeline(name);
  auto fail = [](const std::string& message, const ErrorContext& where) {
    throw Error(ErrorKind::Usage, message, where);
  };
  Pipeline p;
  p.name = t.name;
  for (const auto& b : t.buffers)
    p.buffers.push_back({b.name, b.type, b.size, b.temporary});
  std::vector<std::string> names;
  for (const auto& l : t.launches) {
    ir::VerifiedKernel k = [&] {
      try {
        return file.verify(l.kernel);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Usage)
          throw;
        ErrorContext where = l.where;
        throw Error(ErrorKind::Usage, "pipeline '" + t.name + "': " + e.message(), where);
      }
    }();
    if (l.args.size() != k->params.size())
      fail("pipeline '" + t.name + "': kernel " + k.name() + " takes " +
               std::to_string(k->params.size()) + " arguments, the launch gives " +
               std::to_string(l.args.size()),
           l.where);
    Launch launch{k, {}, {l.groups}};
    for (size_t j = 0; j < l.args.size(); ++j) {
      const text::PipelineText::Arg& a = l.args[j];
      const ir::Param& param = k->params[j];
      if (a.buffer.empty() && !param.is_buffer() && a.type != param.type)
        fail("pipeline '" + t.name + "': parameter " + param.name + " of " + k.name() + " is " +
                 std::string(ir::name(param.type)) + ", the constant given is " +
                 std::string(ir::name(a.type)),
             a.where);
      launch.args.push_back(a.buffer.empty() ? LaunchArg::bits(a.bits) : LaunchArg::of(a.buffer));
    }
    names.push_back(k.name());
    p.launches.push_back(std::move(launch));
  }
  try {
    check(p);
  } catch (const Error& e) {
    throw Error(e.kind(), e.message(), t.where);
  }
  register_fused_names(names, registry);
  return p;
}

std::string print(const Pipeline& p) {
  std::ostringstream out;
  std::set<std::string> printed;
  for (const Launch& l : p.launches) {
    if (printed.insert(l.kernel.name()).second)
      out << ir::print(l.kernel.kernel()) << "\n";
  }
  out << "pipeline " << ir::quoted_name(p.name) << " {\n";
  for (const BufferDecl& b : p.buffers)
    out << "  " << (b.temporary ? "temp " : "buffer ") << b.name << ": " << ir::name(b.type) << "["
        << b.size << "];\n";
  for (const Launch& l : p.launches) {
    out << "  launch " << ir::quoted_name(l.kernel.name()) << "(";
    for (size_t j = 0; j < l.args.size(); ++j) {
      out << (j ? ", " : "");
      if (l.kernel->params[j].is_buffer())
        out << l.args[j].buffer;
      else
        out << ir::print_constant(l.kernel->params[j].type, l.args[j].scalar);
    }
    const auto& g = l.grid.groups;
    out << ") groups(" << g[0] << ", " << g[1] << ", " << g[2] << ");\n";
  }
  out << "}\n";
  return out.str();
}

} // namespace halfway::pipeline
