#include "halfway/pipeline/fuse.hpp"

#include "analysis.hpp"
#include "coverage.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/support/error.hpp"
#include "rewrite.hpp"

#include <algorithm>
#include <optional>
#include <variant>

namespace halfway::pipeline {
namespace {

using analysis::LaunchView;
using ir::StmtKind;

// A refusal's reason, thrown inside the pass and caught per pair.
struct Refusal {
  std::string reason;
};

std::string quoted(std::string_view name) {
  return "'" + std::string(name) + "'";
}

// The parameters of `l` bound to `buffer`.
std::vector<uint32_t> params_bound(const Launch& l, std::string_view buffer) {
  std::vector<uint32_t> out;
  for (uint32_t j = 0; j < l.args.size(); ++j) {
    if (l.kernel->params[j].is_buffer() && l.args[j].buffer == buffer)
      out.push_back(j);
  }
  return out;
}

bool writes(const ir::Param& p) {
  return p.is_buffer() && p.access != ir::Access::Read;
}
bool reads(const ir::Param& p) {
  return p.is_buffer() && p.access != ir::Access::Write;
}

// The temporary t: the one buffer A writes and B reads, with the pipeline-level conditions on it.
std::string find_temporary(const Pipeline& p, size_t ia) {
  const Launch& a = p.launches[ia];
  const Launch& b = p.launches[ia + 1];
  std::vector<std::string> through;
  for (uint32_t j = 0; j < b.args.size(); ++j) {
    const ir::Param& pb = b.kernel->params[j];
    if (!reads(pb))
      continue;
    for (uint32_t ja : params_bound(a, b.args[j].buffer)) {
      if (writes(a.kernel->params[ja]) &&
          std::find(through.begin(), through.end(), b.args[j].buffer) == through.end())
        through.push_back(b.args[j].buffer);
    }
  }
  if (through.empty())
    throw Refusal{"B reads no buffer that A writes"};
  if (through.size() > 1) {
    std::string list;
    for (const auto& t : through)
      list += (list.empty() ? "" : ", ") + quoted(t);
    throw Refusal{"B reads " + std::to_string(through.size()) + " buffers that A writes (" + list +
                  "); the pass fuses through one"};
  }
  const std::string t = through.front();
  const BufferDecl* decl = p.find_buffer(t);
  if (!decl->temporary)
    throw Refusal{"temporary read outside: " + quoted(t) +
                  " is not a temporary, so the caller reads it after the pipeline"};
  for (size_t i = 0; i < p.launches.size(); ++i) {
    if (i == ia || i == ia + 1)
      continue;
    for (uint32_t j : params_bound(p.launches[i], t)) {
      const ir::Param& other = p.launches[i].kernel->params[j];
      if (writes(other))
        throw Refusal{"two writers: " + quoted(t) + " is also written by " + describe(p, i)};
      throw Refusal{"temporary read outside: " + quoted(t) + " is also read by " + describe(p, i)};
    }
  }
  if (params_bound(a, t).size() != 1 || params_bound(b, t).size() != 1)
    throw Refusal{quoted(t) + " is bound to more than one parameter of A or B"};
  const ir::Param& pa = a.kernel->params[params_bound(a, t).front()];
  const ir::Param& pb = b.kernel->params[params_bound(b, t).front()];
  if (pa.access != ir::Access::Write)
    throw Refusal{"A reads " + quoted(t) + " as well as writing it"};
  if (pb.access != ir::Access::Read)
    throw Refusal{"two writers: B writes " + quoted(t) + " as well as A"};
  // B's writes must not reach anything A touches: lanes of the fused kernel would see them in an
  // order the unfused pipeline never had.
  for (uint32_t j = 0; j < b.args.size(); ++j) {
    if (writes(b.kernel->params[j]) && !params_bound(a, b.args[j].buffer).empty())
      throw Refusal{"B writes " + quoted(b.args[j].buffer) + ", which A also accesses"};
  }
  return t;
}

// B must be elementwise over its own global index: one-dimensional, no shared or private
// memory, no barrier, atomic or return, no coordinate but global_id(0), and every load and store
// of a buffer at the own index.
void check_elementwise(const LaunchView& b, uint32_t t) {
  const ir::Kernel& k = b.kernel();
  auto refuse = [&](const std::string& why) {
    throw Refusal{"B (" + k.name + ") is not elementwise: " + why};
  };
  if (!b.one_dimensional())
    refuse("its grid or workgroup is not one-dimensional");
  if (!k.shared.empty() || !k.privates.empty())
    refuse("it uses shared or private arrays");
  for (const analysis::Site& site : analysis::sites(b)) {
    const ir::Stmt& s = *site.stmt;
    if (s.kind == StmtKind::Barrier)
      refuse("it has a barrier");
    if (s.kind == StmtKind::Atomic)
      refuse("it has an atomic");
    if (s.kind == StmtKind::Return)
      refuse("it returns early");
    if (s.kind == StmtKind::Store && !b.is_own_index(s.a))
      refuse("it stores " + k.params[s.mem].name + "[" + ir::print_expr(k, s.a) +
             "], not at its own index");
    for (ir::ExprId root : ir::stmt_exprs(s)) {
      for (ir::ExprId e : analysis::subexprs(k, root)) {
        const ir::Expr& x = k.expr(e);
        if (ir::is_builtin(x.op) && !(x.op == ir::Op::GlobalId && x.imm == 0))
          refuse("it reads " + ir::print_expr(k, e));
        if (x.op == ir::Op::Load && !b.is_own_index(x.args[0])) {
          if (x.ref == t)
            throw Refusal{"B reads a neighbour: " + ir::print_expr(k, e) +
                          " is not at its own index"};
          refuse("it reads " + ir::print_expr(k, e) + ", not at its own index");
        }
      }
    }
  }
}

// The one store of A to t.
const ir::Stmt& the_store(const ir::Kernel& k, uint32_t t) {
  std::vector<const ir::Stmt*> stores;
  ir::for_each_stmt(k.body, [&](const ir::Stmt& s) {
    if ((s.kind == StmtKind::Store || s.kind == StmtKind::Atomic) && s.space == ir::Space::Buffer &&
        s.mem == t) {
      if (s.kind == StmtKind::Atomic)
        throw Refusal{"A updates " + quoted(k.params[t].name) + " with an atomic"};
      stores.push_back(&s);
    }
  });
  if (stores.empty())
    throw Refusal{"A never stores to " + quoted(k.params[t].name)};
  if (stores.size() > 1)
    throw Refusal{"two writers: A stores to " + quoted(k.params[t].name) + " in " +
                  std::to_string(stores.size()) + " places"};
  return *stores.front();
}

bool has_return(const ir::Kernel& k) {
  bool found = false;
  ir::for_each_stmt(k.body,
                    [&](const ir::Stmt& s) { found = found || s.kind == StmtKind::Return; });
  return found;
}

std::optional<uint64_t> bound_of(const std::vector<analysis::Site>& sites, const ir::Stmt* s,
                                 uint64_t lanes) {
  for (const auto& site : sites) {
    if (site.stmt == s)
      return site.bound ? std::min(*site.bound, lanes) : lanes;
  }
  return std::nullopt;
}

// Whether every statement of B that loads t runs only below t's length.
bool loads_in_bounds(const LaunchView& b, uint32_t t, uint64_t size) {
  for (const auto& site : analysis::sites(b)) {
    for (ir::ExprId root : ir::stmt_exprs(*site.stmt)) {
      for (ir::ExprId e : analysis::subexprs(b.kernel(), root)) {
        const ir::Expr& x = b.kernel().expr(e);
        uint64_t bound = site.bound ? std::min(*site.bound, b.lanes()) : b.lanes();
        if (x.op == ir::Op::Load && x.space == ir::Space::Buffer && x.ref == t && bound > size)
          return false;
      }
    }
  }
  return true;
}

// `let local = value;` or `local = value;`.
ir::Stmt set_local(StmtKind kind, uint32_t local, ir::ExprId value) {
  ir::Stmt s;
  s.kind = kind;
  s.local = local;
  s.a = value;
  return s;
}

struct Built {
  FusionKind kind;
  Launch launch;
  std::string proof;
};

std::vector<std::string> leaves(const policy::Registry& registry, const std::string& name) {
  auto parts = registry.fused_parts(name);
  return parts ? *parts : std::vector<std::string>{name};
}

Built fuse_pair(const Pipeline& p, size_t ia, const std::string& t, const std::string& name) {
  const Launch& la = p.launches[ia];
  const Launch& lb = p.launches[ia + 1];
  const LaunchView a(p, la), b(p, lb);
  const ir::Kernel& ka = a.kernel();
  const ir::Kernel& kb = b.kernel();
  const uint32_t ta = params_bound(la, t).front(), tb = params_bound(lb, t).front();
  const BufferDecl& tdecl = *p.find_buffer(t);

  // len(t) becomes a u32 constant in the fused kernel.
  if (tdecl.size > 0xffffffffull)
    throw Refusal{quoted(t) + " has more than 2^32 - 1 elements"};
  check_elementwise(b, tb);
  const ir::Stmt& store = the_store(ka, ta);

  const bool same_shape =
      a.one_dimensional() && la.grid.groups == lb.grid.groups && ka.workgroup == kb.workgroup;
  const bool elementwise = same_shape && a.is_own_index(store.a) && !has_return(ka);
  if (elementwise) {
    auto bound = bound_of(analysis::sites(a), &store, a.lanes());
    if (!bound || *bound > tdecl.size)
      throw Refusal{"A's store to " + quoted(t) + " is not proven in bounds: no guard " +
                    ir::print_expr(ka, store.a) + " < len(" + t + ") and more lanes than elements"};
    if (!loads_in_bounds(b, tb, tdecl.size))
      throw Refusal{"B's loads of " + quoted(t) + " are not proven in bounds"};
  } else {
    if (a.data_dependent(store.a))
      throw Refusal{"A's store index " + ir::print_expr(ka, store.a) + " into " + quoted(t) +
                    " depends on memory (data-dependent store index)"};
    if (ka.expr(store.a).type != ir::ScalarType::U32)
      throw Refusal{"A's store index into " + quoted(t) + " has type " +
                    std::string(ir::name(ka.expr(store.a).type)) + ", not u32"};
    if (!b.one_dimensional() || b.lanes() < tdecl.size)
      throw Refusal{"grid mismatch: B's grid has " + std::to_string(b.lanes()) + " lanes for " +
                    quoted(t) + "'s " + std::to_string(tdecl.size) + " elements"};
    const auto sites = analysis::sites(b);
    for (const auto& site : sites) {
      const ir::Stmt& s = *site.stmt;
      if (s.kind != StmtKind::Store)
        continue;
      uint64_t covers = site.bound ? std::min(*site.bound, b.lanes()) : b.lanes();
      uint64_t size = b.size(s.mem);
      if (covers != tdecl.size || size != tdecl.size)
        throw Refusal{"grid mismatch: B stores " + kb.params[s.mem].name + " over " +
                      std::to_string(std::min(covers, size)) + " elements, " + quoted(t) + " has " +
                      std::to_string(tdecl.size)};
    }
    // B now runs only where A stores: an element of t that A's launch never stores would leave
    // B's output unwritten where the unfused B computed it from the temporary's zero.
    if (auto why = coverage::refute(a, store, ta, t, tdecl.size))
      throw Refusal{*why};
  }

  rewrite::Target out;
  out.kernel.name = name;
  out.kernel.workgroup = ka.workgroup;
  out.kernel.shared = ka.shared;
  out.kernel.privates = ka.privates;
  for (const auto& s : ka.shared)
    out.names.insert(s.name);
  for (const auto& s : ka.privates)
    out.names.insert(s.name);
  std::vector<LaunchArg> args;
  rewrite::Copy ca(ka, out), cb(kb, out);
  for (uint32_t j = 0; j < ka.params.size(); ++j) {
    if (j == ta)
      continue;
    ca.params[j] = out.add_param(ka.params[j]);
    args.push_back(la.args[j]);
  }
  for (uint32_t j = 0; j < kb.params.size(); ++j) {
    if (j == tb)
      continue;
    const ir::Param& pb = kb.params[j];
    // A buffer both kernels only read is one parameter of the fused kernel.
    for (uint32_t ja : params_bound(la, lb.args[j].buffer)) {
      if (pb.is_buffer() && pb.access == ir::Access::Read &&
          ka.params[ja].access == ir::Access::Read)
        cb.params[j] = ca.params[ja];
    }
    if (cb.params[j] == ir::kNone) {
      cb.params[j] = out.add_param(pb);
      args.push_back(lb.args[j]);
    }
  }
  ca.add_locals();
  cb.add_locals();
  const ir::ScalarType type = tdecl.type;
  cb.t = tb;
  cb.t_size = tdecl.size;
  ca.t = ta;
  ca.t_size = tdecl.size;
  if (elementwise) {
    // t lives in a local, zero like the temporary it replaces, assigned where A stored it.
    const uint32_t value = out.add_local(t, type);
    cb.t_local = value;
    ca.on_t_store = [&](const ir::Stmt& s, ir::Body& body) {
      body.push_back(set_local(StmtKind::Assign, value, ca.expr(s.b)));
    };
    out.kernel.body.push_back(
        set_local(StmtKind::Let, value, out.kernel.add(ir::Expr{ir::Op::Const, type})));
    for (ir::Stmt& s : ca.block(ka.body))
      out.kernel.body.push_back(std::move(s));
    for (ir::Stmt& s : cb.block(kb.body))
      out.kernel.body.push_back(std::move(s));
  } else {
    // A's store t[e] = v becomes: let index = e; let t = v; B's body at index with t's value.
    const uint32_t index = out.add_local(kb.name + "_index", ir::ScalarType::U32);
    const uint32_t value = out.add_local(t, type);
    cb.t_local = value;
    cb.index_local = index;
    ca.on_t_store = [&](const ir::Stmt& s, ir::Body& body) {
      body.push_back(set_local(StmtKind::Let, index, ca.expr(s.a)));
      body.push_back(set_local(StmtKind::Let, value, ca.expr(s.b)));
      for (ir::Stmt& x : cb.block(kb.body))
        body.push_back(std::move(x));
    };
    out.kernel.body = ca.block(ka.body);
  }
  try {
    const std::string size = std::to_string(tdecl.size);
    std::string proof = elementwise ? "each lane reads only the element of " + quoted(t) +
                                          " it wrote, and the local starts zero like the temporary"
                                    : "A's launch stores each of the " + size + " elements of " +
                                          quoted(t) + " once";
    return {elementwise ? FusionKind::Elementwise : FusionKind::Epilogue,
            Launch{ir::verify(std::move(out.kernel)), std::move(args), la.grid}, std::move(proof)};
  } catch (const Error& e) {
    throw Error(ErrorKind::Internal, "fusing " + describe(p, ia) + " with " + describe(p, ia + 1) +
                                         " made a kernel that does not verify: " + e.message());
  }
}

} // namespace

std::string_view name(FusionKind kind) {
  return kind == FusionKind::Elementwise ? "elementwise" : "epilogue";
}

namespace {
// The characters that structure a fused name; inside a part each is written after a backslash.
bool structural(char c) {
  return c == '\\' || c == '+' || c == '(' || c == ')';
}
} // namespace

std::string fused_name(const std::vector<std::string>& parts) {
  std::string out = "fused(";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0)
      out += '+';
    for (char c : parts[i]) {
      if (structural(c))
        out += '\\';
      out += c;
    }
  }
  return out + ")";
}

std::optional<std::vector<std::string>> fused_parts(std::string_view name) {
  constexpr std::string_view open = "fused(";
  if (name.size() <= open.size() + 1 || !name.starts_with(open) || name.back() != ')')
    return std::nullopt;
  const std::string_view body = name.substr(open.size(), name.size() - open.size() - 1);
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '\\') {
      // Only the structural characters are escaped, so that every fused name has one spelling.
      if (i + 1 == body.size() || !structural(body[i + 1]))
        return std::nullopt;
      parts.back() += body[++i];
    } else if (c == '+') {
      parts.emplace_back();
    } else if (c == '(' || c == ')') {
      return std::nullopt;
    } else {
      parts.back() += c;
    }
  }
  for (const auto& part : parts) {
    if (part.empty())
      return std::nullopt;
  }
  return parts;
}

namespace {

// Fuses launches i and i + 1 of `p` in place, or throws a Refusal.
Fused fuse_adjacent(Pipeline& p, size_t i, policy::Registry& reg) {
  const std::string a = p.launches[i].kernel.name(), b = p.launches[i + 1].kernel.name();
  const std::string t = find_temporary(p, i);
  std::vector<std::string> parts = leaves(reg, a);
  for (auto& part : leaves(reg, b))
    parts.push_back(std::move(part));
  const std::string name = fused_name(parts);
  Built built = fuse_pair(p, i, t, name);
  if (auto registered = reg.register_fused(name, parts); !registered)
    throw Refusal{"the precision policy refuses the name " + quoted(name) + ": " +
                  policy::fuse_error_message(registered.error())};
  p.launches[i] = std::move(built.launch);
  p.launches.erase(p.launches.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  std::erase_if(p.buffers, [&](const BufferDecl& d) { return d.name == t; });
  return {built.kind, a, b, t, name, std::move(built.proof)};
}

// The first launch after i + 1 that reads a buffer launch i writes: the consumer that fusion
// across the launches in between would bring next to launch i.
std::optional<size_t> later_consumer(const Pipeline& p, size_t i) {
  const Launch& a = p.launches[i];
  for (size_t j = i + 2; j < p.launches.size(); ++j) {
    const Launch& l = p.launches[j];
    for (uint32_t k = 0; k < l.args.size(); ++k) {
      if (!reads(l.kernel->params[k]))
        continue;
      for (uint32_t ka : params_bound(a, l.args[k].buffer)) {
        if (writes(a.kernel->params[ka]))
          return j;
      }
    }
  }
  return std::nullopt;
}

// Launch j may run right after launch i, before the launches in between, when none of those
// writes a buffer j reads or accesses a buffer j writes: j then reads the same values, and
// nothing in between sees, or overwrites, what j writes.
void check_commutes(const Pipeline& p, size_t i, size_t j) {
  const Launch& b = p.launches[j];
  for (size_t m = i + 1; m < j; ++m) {
    const Launch& l = p.launches[m];
    for (uint32_t k = 0; k < b.args.size(); ++k) {
      const ir::Param& pb = b.kernel->params[k];
      if (!pb.is_buffer())
        continue;
      for (uint32_t km : params_bound(l, b.args[k].buffer)) {
        if (writes(pb) || writes(l.kernel->params[km]))
          throw Refusal{"not adjacent, and " + describe(p, m) + " " +
                        (writes(l.kernel->params[km]) ? "writes " : "reads ") +
                        quoted(b.args[k].buffer) + ", which " + b.kernel.name() +
                        (writes(pb) ? " writes" : " reads")};
      }
    }
  }
}

} // namespace

FuseResult fuse(const Pipeline& input, policy::Registry* registry) {
  check(input);
  policy::Registry& reg = registry ? *registry : policy::global_registry();
  FuseResult result{input, {}, {}};
  Pipeline& p = result.pipeline;
  for (size_t i = 0; i + 1 < p.launches.size();) {
    const std::string a = p.launches[i].kernel.name(), b = p.launches[i + 1].kernel.name();
    try {
      result.fused.push_back(fuse_adjacent(p, i, reg));
      continue;
    } catch (const Refusal& r) {
      result.refused.push_back({a, b, i, r.reason});
    }
    // A consumer further on is fused across the launches in between when it may run before them.
    if (auto j = later_consumer(p, i)) {
      const std::string c = p.launches[*j].kernel.name();
      try {
        check_commutes(p, i, *j);
        Pipeline moved = p;
        std::rotate(moved.launches.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    moved.launches.begin() + static_cast<std::ptrdiff_t>(*j),
                    moved.launches.begin() + static_cast<std::ptrdiff_t>(*j) + 1);
        Fused f = fuse_adjacent(moved, i, reg);
        const size_t between = *j - i - 1;
        f.proof += "; " + c + " moved up past " + std::to_string(between) +
                   (between == 1 ? " launch that writes nothing it reads and touches"
                                 : " launches that write nothing it reads and touch") +
                   " nothing it writes";
        p = std::move(moved);
        result.fused.push_back(std::move(f));
        continue;
      } catch (const Refusal& r) {
        result.refused.push_back({a, c, i, r.reason});
      }
    }
    ++i;
  }
  return result;
}

} // namespace halfway::pipeline
