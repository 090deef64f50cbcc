#include "coverage.hpp"

#include "halfway/interp/interp.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/support/error.hpp"

#include <algorithm>
#include <deque>

namespace halfway::pipeline::coverage {
namespace {

using ir::StmtKind;

// Why A's slice would not be A: a statement dropped for its data dependence that could change
// whether, or how often, the store runs.
struct Escape {
  std::string reason;
};

// A copy of A that keeps only what decides where and how often the store to t runs. Everything
// kept depends on the launch alone (the grid, the scalar arguments and the buffer lengths, all
// fixed by the pipeline), so running the slice once enumerates the store's indices for every
// possible content of the buffers. The store itself becomes an atomic increment of a u32 counter
// per element of t.
class Slicer {
public:
  Slicer(const analysis::LaunchView& a, const ir::Stmt& store, uint32_t t)
      : a_(a), store_(&store), t_(t), out_(a.kernel()) {}

  ir::Kernel build() {
    ir::Kernel& k = out_;
    k.name = a_.kernel().name + "_coverage";
    k.params[t_].type = ir::ScalarType::U32;
    k.params[t_].access = ir::Access::ReadWrite;
    // The other buffers are bound empty: the slice loads nothing, and their lengths are the
    // pipeline's, as constants.
    for (ir::Expr& e : k.exprs) {
      if (e.op == ir::Op::BufferLen && e.space == ir::Space::Buffer && e.ref != t_) {
        const uint64_t size = a_.size(e.ref);
        e = ir::Expr{ir::Op::Const, ir::ScalarType::U32};
        e.imm = size;
      }
    }
    one_ = k.add(ir::Expr{ir::Op::Const, ir::ScalarType::U32});
    k.exprs[one_].imm = 1;
    k.body = block(a_.kernel().body);
    return std::move(out_);
  }

private:
  ir::ExprId zero(ir::ScalarType type) { return out_.add(ir::Expr{ir::Op::Const, type}); }

  ir::Stmt shallow(const ir::Stmt& s) {
    ir::Stmt c = s;
    c.body.clear();
    c.else_body.clear();
    return c;
  }

  // A dropped statement's subtree: the store, a `return`, or a `break`/`continue` leaving it
  // (loops counts the loops inside the subtree around the statement) would make the slice run
  // the store where A may not.
  void check_dropped(const ir::Body& block, int loops, const std::string& why) {
    for (const ir::Stmt& s : block) {
      if (&s == store_)
        throw Escape{"its store runs under " + why};
      if (s.kind == StmtKind::Return)
        throw Escape{"a return under " + why + " may skip the store"};
      if ((s.kind == StmtKind::Break || s.kind == StmtKind::Continue) && loops == 0)
        throw Escape{std::string(s.kind == StmtKind::Break ? "a break" : "a continue") + " under " +
                     why + " may skip the store"};
      const int inner = loops + (s.kind == StmtKind::For || s.kind == StmtKind::While ? 1 : 0);
      check_dropped(s.body, inner, why);
      check_dropped(s.else_body, inner, why);
    }
  }

  // Whether the slice cannot compute a value as every device would: it depends on memory, or on
  // float arithmetic, which devices may round differently from the interpreter.
  bool unknown(ir::ExprId e) const { return a_.data_dependent(e) || a_.float_dependent(e); }
  bool unknown_local(uint32_t local) const { return a_.tainted(local) || a_.float_tainted(local); }

  std::string condition(const char* what, ir::ExprId e) {
    const std::string kind = a_.data_dependent(e)
                                 ? std::string("a data-dependent ") + what
                                 : std::string("a ") + what + " computed in floats";
    return kind + " (" + ir::print_expr(a_.kernel(), e) + ", line " +
           std::to_string(a_.kernel().expr(e).line) + ")";
  }

  ir::Body block(const ir::Body& in) {
    ir::Body out;
    for (const ir::Stmt& s : in) {
      switch (s.kind) {
      case StmtKind::Let:
        // A memory-dependent local stays declared (zero) so that the slice verifies; nothing
        // kept reads it.
        out.push_back(shallow(s));
        if (unknown_local(s.local))
          out.back().a = zero(a_.kernel().locals[s.local].type);
        break;
      case StmtKind::Assign:
        if (!unknown_local(s.local))
          out.push_back(shallow(s));
        break;
      case StmtKind::Store:
        if (&s == store_) {
          ir::Stmt inc;
          inc.kind = StmtKind::Atomic;
          inc.space = ir::Space::Buffer;
          inc.atomic = ir::AtomicOp::Add;
          inc.mem = t_;
          inc.a = s.a;
          inc.b = one_;
          inc.line = s.line;
          out.push_back(std::move(inc));
        }
        break;
      case StmtKind::Atomic:
        // An atomic's result depends on memory; a local it declares stays declared.
        if (s.local != ir::kNone) {
          ir::Stmt let;
          let.kind = StmtKind::Let;
          let.local = s.local;
          let.a = zero(a_.kernel().locals[s.local].type);
          let.line = s.line;
          out.push_back(std::move(let));
        }
        break;
      case StmtKind::Barrier:
        // The slice touches no shared memory, so its lanes need no synchronisation.
        break;
      case StmtKind::If:
        if (unknown(s.a)) {
          check_dropped(s.body, 0, condition("condition", s.a));
          check_dropped(s.else_body, 0, condition("condition", s.a));
        } else {
          out.push_back(shallow(s));
          out.back().body = block(s.body);
          out.back().else_body = block(s.else_body);
        }
        break;
      case StmtKind::For:
        if (unknown_local(s.local)) {
          const ir::ExprId bound = unknown(s.a) ? s.a : unknown(s.b) ? s.b : s.c;
          check_dropped(s.body, 1, condition("loop bound", bound));
        } else {
          out.push_back(shallow(s));
          out.back().body = block(s.body);
        }
        break;
      case StmtKind::While:
        if (unknown(s.a)) {
          check_dropped(s.body, 1, condition("loop condition", s.a));
        } else {
          out.push_back(shallow(s));
          out.back().body = block(s.body);
        }
        break;
      case StmtKind::Break:
      case StmtKind::Continue:
      case StmtKind::Return:
        out.push_back(shallow(s));
        break;
      }
    }
    return out;
  }

  const analysis::LaunchView& a_;
  const ir::Stmt* store_;
  uint32_t t_;
  ir::Kernel out_;
  ir::ExprId one_ = ir::kNone;
};

// At most this many lockstep steps enumerate a launch (a step is one statement for a batch of
// lanes); a producer that needs more is refused rather than stalling the pass.
constexpr uint64_t kMaxSteps = uint64_t{1} << 28;

} // namespace

std::optional<std::string> refute(const analysis::LaunchView& a, const ir::Stmt& store, uint32_t t,
                                  const std::string& t_name, uint64_t size) {
  const std::string prefix = "A may not write every element of '" + t_name + "': ";
  if (a.float_dependent(store.a))
    return prefix + "its store index " + ir::print_expr(a.kernel(), store.a) +
           " is computed in floats, which a device may round otherwise than the proof";
  for (uint32_t j = 0; j < a.kernel().params.size(); ++j) {
    if (a.kernel().params[j].is_buffer() && a.size(j) > 0xffffffffull)
      return prefix + "buffer " + a.kernel().params[j].name + " has 2^32 elements or more";
  }
  ir::Kernel slice;
  try {
    slice = Slicer(a, store, t).build();
  } catch (const Escape& e) {
    return prefix + e.reason;
  }
  const Launch& l = a.launch();
  std::deque<rt::HostBuffer> buffers; // stable addresses for the Args
  std::vector<rt::Arg> args;
  for (uint32_t j = 0; j < slice.params.size(); ++j) {
    const ir::Param& param = slice.params[j];
    if (!param.is_buffer()) {
      args.push_back(rt::Arg::bits(l.args[j].scalar));
      continue;
    }
    buffers.emplace_back(param.type, j == t ? size : 0);
    args.push_back(rt::Arg::of(buffers.back()));
  }
  rt::HostBuffer& counts =
      buffers[static_cast<size_t>(std::count_if(slice.params.begin(), slice.params.begin() + t,
                                                [](const ir::Param& p) { return p.is_buffer(); }))];
  interp::Options options;
  options.max_steps = kMaxSteps;
  try {
    interp::run(ir::verify(std::move(slice)), l.grid, args, options);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::OutOfBounds) {
      const auto& at = e.context().index;
      return "A's store index " + ir::print_expr(a.kernel(), store.a) + " into '" + t_name +
             "' reaches past its end" +
             (at ? " (index " + std::to_string(*at) + " of " + std::to_string(size) + ")" : "");
    }
    return prefix + "enumerating its store indices failed: " + e.message();
  }
  const auto* n = reinterpret_cast<const uint32_t*>(counts.data());
  uint64_t missed = 0, first_missed = 0, twice = 0, first_twice = 0;
  for (uint64_t i = 0; i < size; ++i) {
    if (n[i] == 0 && missed++ == 0)
      first_missed = i;
    if (n[i] > 1 && twice++ == 0)
      first_twice = i;
  }
  if (missed > 0)
    return prefix + "its launch never stores " + t_name + "[" + std::to_string(first_missed) +
           "] (" + std::to_string(missed) + " of " + std::to_string(size) +
           " elements), where the unfused B reads the temporary's zero and the fused kernel "
           "would write nothing";
  if (twice > 0)
    return "two writers: A's launch stores '" + t_name + "'[" + std::to_string(first_twice) + "] " +
           std::to_string(n[first_twice]) + " times (" + std::to_string(twice) +
           " elements more than once)";
  return std::nullopt;
}

} // namespace halfway::pipeline::coverage
