#include "program.hpp"

#include "accum.hpp"
#include "exact.hpp"

#include <algorithm>
#include <map>

namespace halfway::interp {

namespace {

NodeClass classify(ir::Op op) {
  switch (op) {
  case ir::Op::Const:
  case ir::Op::ParamGet:
  case ir::Op::BufferLen:
  case ir::Op::GroupSize:
  case ir::Op::NumGroups:
    return NodeClass::Fixed;
  case ir::Op::GlobalId:
  case ir::Op::LocalId:
  case ir::Op::GroupId:
    return NodeClass::Lane;
  case ir::Op::LocalGet:
    return NodeClass::LocalAlias;
  case ir::Op::Load:
  case ir::Op::Convert:
  case ir::Op::Bitcast:
  case ir::Op::Pack:
  case ir::Op::Unpack:
  case ir::Op::Add:
  case ir::Op::Sub:
  case ir::Op::Mul:
  case ir::Op::Div:
  case ir::Op::Rem:
  case ir::Op::Neg:
  case ir::Op::Abs:
  case ir::Op::Min:
  case ir::Op::Max:
  case ir::Op::Clamp:
  case ir::Op::Fma:
  case ir::Op::Sqrt:
  case ir::Op::Rsqrt:
  case ir::Op::Exp:
  case ir::Op::Exp2:
  case ir::Op::Log:
  case ir::Op::Log2:
  case ir::Op::Sin:
  case ir::Op::Cos:
  case ir::Op::Tan:
  case ir::Op::Tanh:
  case ir::Op::Pow:
  case ir::Op::Erf:
  case ir::Op::Atan2:
  case ir::Op::Atan:
  case ir::Op::Floor:
  case ir::Op::Ceil:
  case ir::Op::Fract:
  case ir::Op::Copysign:
  case ir::Op::Eq:
  case ir::Op::Ne:
  case ir::Op::Lt:
  case ir::Op::Le:
  case ir::Op::Gt:
  case ir::Op::Ge:
  case ir::Op::And:
  case ir::Op::Or:
  case ir::Op::Xor:
  case ir::Op::Not:
  case ir::Op::Shl:
  case ir::Op::Shr:
  case ir::Op::Select:
    return NodeClass::Computed;
  }
  ir::invalid_op(op);
}

class Compiler {
public:
  explicit Compiler(Program& p) : p_(p), k_(*p.kernel), seen_(k_.exprs.size(), 0) {}

  // The computed nodes under `roots`, operands first, each once.
  std::vector<uint32_t> schedule(std::initializer_list<ir::ExprId> roots) {
    std::vector<uint32_t> out;
    ++stamp_;
    for (ir::ExprId r : roots)
      if (r != ir::kNone)
        visit(r, out);
    return out;
  }

  std::vector<CStmt> block(const ir::Body& stmts) {
    std::vector<CStmt> out;
    for (const ir::Stmt& s : stmts) {
      CStmt c;
      c.stmt = &s;
      if (s.kind == ir::StmtKind::For) {
        c.eval = schedule({s.a});
        c.bound = schedule({s.b});
        c.step = schedule({s.c});
      } else if (s.kind == ir::StmtKind::Store) {
        c.eval = schedule({s.a, s.c, s.d, s.b}); // ir::stmt_exprs' order
      } else {
        c.eval = schedule({s.a, s.b, s.c});
      }
      if (s.kind == ir::StmtKind::Barrier) {
        p_.has_barrier = true;
        c.barrier = ++p_.barriers;
      }
      c.body = block(s.body);
      c.else_body = block(s.else_body);
      out.push_back(std::move(c));
    }
    return out;
  }

private:
  void visit(ir::ExprId id, std::vector<uint32_t>& out) {
    if (seen_[id] == stamp_)
      return;
    seen_[id] = stamp_;
    if (p_.cls[id] != NodeClass::Computed)
      return;
    const ir::Expr& e = k_.expr(id);
    for (int i = 0; i < e.nargs; ++i)
      visit(e.args[i], out);
    out.push_back(id);
  }

  Program& p_;
  const ir::Kernel& k_;
  std::vector<uint32_t> seen_; // the schedule that last visited each node
  uint32_t stamp_ = 0;
};

} // namespace

Program compile(const ir::VerifiedKernel& kernel, const Options& options) {
  Program p;
  const ir::Kernel& k = kernel.kernel();
  p.kernel = &k;
  p.options = options;
  p.wg_lanes = k.workgroup_lanes();
  p.registers = static_cast<uint32_t>(k.exprs.size() + k.locals.size());
  p.nodes.resize(k.exprs.size());
  p.cls.resize(k.exprs.size());
  for (ir::ExprId id = 0; id < k.exprs.size(); ++id) {
    const ir::Expr& e = k.expr(id);
    p.cls[id] = classify(e.op);
    if (p.cls[id] == NodeClass::Lane)
      p.lane_nodes.push_back(id);
  }
  auto reg_of = [&](ir::ExprId id) {
    const ir::Expr& e = k.expr(id);
    return e.op == ir::Op::LocalGet ? p.local_reg(e.ref) : id;
  };
  for (ir::ExprId id = 0; id < k.exprs.size(); ++id) {
    const ir::Expr& e = k.expr(id);
    Node& n = p.nodes[id];
    n.id = id;
    n.expr = &e;
    n.op = e.op;
    n.type = e.type;
    n.nargs = e.nargs;
    n.arg_type = e.nargs ? k.expr(e.args[0]).type : e.type;
    for (int i = 0; i < e.nargs; ++i)
      n.arg[i] = reg_of(e.args[i]);
    n.reg = reg_of(id);
  }
  for (Node& n : p.nodes)
    if (p.cls[n.id] == NodeClass::Computed)
      n.eval = select_eval(p, n);

  if (options.shadow || options.narrowing == NarrowingModel::SingleRounding) {
    std::map<ir::ExprId, bool> done;
    for (const ir::NarrowingSite& site : ir::narrowing_sites(k)) {
      if (done[site.convert])
        continue;
      done[site.convert] = true;
      auto s = make_exact_site(p, site);
      if (!s->single && !s->shadow)
        continue;
      Node& n = p.nodes[site.convert];
      s->convert = n.eval;
      n.site = s.get();
      n.eval = eval_site;
      p.sites.push_back(std::move(s));
    }
  }

  p.body = Compiler(p).block(k.body);
  if (options.shadow)
    p.accum = make_acc_plan(k, p.nodes, p.body);
  // After the accumulation plan: a loop whose statement it tracks keeps the general path.
  plan_dot_loops(p);
  // Kernels without barriers or shared memory cannot tell whether their workgroups run one by
  // one or side by side, so run about 1024 lanes per lockstep batch, as long as the registers
  // (8 bytes per lane each) stay within 16 MiB per worker.
  if (!p.has_barrier && k.shared.empty()) {
    // A kernel with no expressions and no locals has no registers.
    const uint64_t fit =
        (uint64_t{16} << 20) / (uint64_t{8} * std::max<uint32_t>(p.registers, 1) * p.wg_lanes);
    p.batch_groups = static_cast<uint32_t>(
        std::clamp<uint64_t>(std::min<uint64_t>(1024 / p.wg_lanes, fit), 1, 1024));
  }
  return p;
}

} // namespace halfway::interp
