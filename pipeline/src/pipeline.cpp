#include "halfway/pipeline/pipeline.hpp"

#include "halfway/support/error.hpp"

#include <bit>
#include <set>

namespace halfway::pipeline {

LaunchArg LaunchArg::f32(float v) {
  return bits(std::bit_cast<uint32_t>(v));
}

const BufferDecl* Pipeline::find_buffer(std::string_view name) const {
  for (const BufferDecl& b : buffers) {
    if (b.name == name)
      return &b;
  }
  return nullptr;
}

const BufferDecl* Pipeline::bound(const Launch& launch, uint32_t param) const {
  if (param >= launch.args.size() || !launch.kernel->params[param].is_buffer())
    return nullptr;
  return find_buffer(launch.args[param].buffer);
}

std::string describe(const Pipeline& p, size_t launch, std::optional<uint32_t> param) {
  const Launch& l = p.launches[launch];
  std::string out = "pipeline '" + p.name + "', launch " + std::to_string(launch + 1) + " (" +
                    l.kernel.name() + ")";
  if (param)
    out += ", parameter " + l.kernel->params[*param].name;
  return out;
}

void check(const Pipeline& p) {
  auto fail = [&](const std::string& message, const std::string& buffer = {}) {
    ErrorContext ctx;
    ctx.buffer = buffer;
    throw Error(ErrorKind::Usage, message, ctx);
  };
  std::set<std::string, std::less<>> names;
  for (const BufferDecl& b : p.buffers) {
    if (b.name.empty())
      fail("pipeline '" + p.name + "' declares a buffer without a name");
    if (!names.insert(b.name).second)
      fail("pipeline '" + p.name + "' declares buffer '" + b.name + "' twice", b.name);
    if (b.size == 0)
      fail("pipeline '" + p.name + "': buffer '" + b.name + "' has no elements", b.name);
  }
  std::set<std::string, std::less<>> written;
  for (size_t i = 0; i < p.launches.size(); ++i) {
    const Launch& l = p.launches[i];
    const ir::Kernel& k = l.kernel.kernel();
    if (l.args.size() != k.params.size())
      fail(describe(p, i) + ": " + std::to_string(l.args.size()) + " arguments for " +
           std::to_string(k.params.size()) + " parameters");
    if (l.grid.total_groups() == 0)
      fail(describe(p, i) + ": the grid has no workgroups");
    for (uint32_t j = 0; j < k.params.size(); ++j) {
      const ir::Param& param = k.params[j];
      const LaunchArg& arg = l.args[j];
      if (!param.is_buffer()) {
        if (!arg.buffer.empty())
          fail(describe(p, i, j) + " is a scalar, but buffer '" + arg.buffer + "' is bound to it",
               arg.buffer);
        continue;
      }
      if (arg.buffer.empty())
        fail(describe(p, i, j) + " is a buffer, but a scalar is bound to it");
      const BufferDecl* b = p.find_buffer(arg.buffer);
      if (!b)
        fail(describe(p, i, j) + ": unknown buffer '" + arg.buffer + "'", arg.buffer);
      if (b->type != param.type)
        fail(describe(p, i, j) + " has element type " + std::string(ir::name(param.type)) +
                 ", buffer '" + b->name + "' " + std::string(ir::name(b->type)),
             b->name);
      if (b->temporary && param.access == ir::Access::Read && !written.contains(b->name))
        fail(describe(p, i, j) + " reads temporary '" + b->name + "' before any launch writes it",
             b->name);
    }
    for (uint32_t j = 0; j < k.params.size(); ++j) {
      if (k.params[j].is_buffer() && k.params[j].access != ir::Access::Read)
        written.insert(l.args[j].buffer);
    }
  }
}

} // namespace halfway::pipeline
