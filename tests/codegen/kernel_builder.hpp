#pragma once
// A small IR builder for test kernels the DSL examples do not cover (used by tests/codegen and
// tests/vulkan).

#include "halfway/ir/verifier.hpp"

#include <initializer_list>
#include <string>

namespace halfway::codegen::spirv {

using ir::ScalarType;

struct KernelBuilder {
  ir::Kernel k;
  explicit KernelBuilder(std::string name, uint32_t lanes = 64) {
    k.name = std::move(name);
    k.workgroup = {lanes, 1, 1};
  }
  uint32_t buffer(const std::string& name, ScalarType t, ir::Access a) {
    k.params.push_back({name, ir::Param::Kind::Buffer, t, a});
    return static_cast<uint32_t>(k.params.size() - 1);
  }
  uint32_t scalar(const std::string& name, ScalarType t) {
    k.params.push_back({name, ir::Param::Kind::Scalar, t, ir::Access::Read});
    return static_cast<uint32_t>(k.params.size() - 1);
  }
  ir::ExprId node(ir::Op op, ScalarType t, std::initializer_list<ir::ExprId> args = {}) {
    ir::Expr e;
    e.op = op;
    e.type = t;
    for (ir::ExprId a : args)
      e.args[e.nargs++] = a;
    return k.add(e);
  }
  ir::ExprId constant(ScalarType t, uint64_t bits) {
    ir::Expr e;
    e.op = ir::Op::Const;
    e.type = t;
    e.imm = bits;
    return k.add(e);
  }
  ir::ExprId gid() { return builtin(ir::Op::GlobalId, 0); }
  ir::ExprId builtin(ir::Op op, uint32_t dim) {
    ir::Expr e;
    e.op = op;
    e.type = ScalarType::U32;
    e.imm = dim;
    return k.add(e);
  }
  // let name: t = value; returns the local's id.
  uint32_t let(const std::string& name, ScalarType t, ir::ExprId value) {
    k.locals.push_back({name, t});
    ir::Stmt s;
    s.kind = ir::StmtKind::Let;
    s.local = static_cast<uint32_t>(k.locals.size() - 1);
    s.a = value;
    k.body.push_back(std::move(s));
    return static_cast<uint32_t>(k.locals.size() - 1);
  }
  ir::ExprId local(uint32_t id) {
    ir::Expr e;
    e.op = ir::Op::LocalGet;
    e.type = k.locals[id].type;
    e.ref = id;
    return k.add(e);
  }
  ir::ExprId load(uint32_t param, ir::ExprId index) {
    ir::Expr e;
    e.op = ir::Op::Load;
    e.type = k.params[param].type;
    e.ref = param;
    e.nargs = 1;
    e.args[0] = index;
    return k.add(e);
  }
  ir::ExprId param(uint32_t p) {
    ir::Expr e;
    e.op = ir::Op::ParamGet;
    e.type = k.params[p].type;
    e.ref = p;
    return k.add(e);
  }
  ir::ExprId convert(ScalarType t, ir::ExprId a, ir::RoundingMode r = ir::RoundingMode::NearestEven,
                     bool sat = false) {
    ir::Expr e;
    e.op = ir::Op::Convert;
    e.type = t;
    e.nargs = 1;
    e.args[0] = a;
    e.rounding = r;
    e.saturate = sat;
    return k.add(e);
  }
  void store(uint32_t param, ir::ExprId index, ir::ExprId value) {
    ir::Stmt s;
    s.kind = ir::StmtKind::Store;
    s.mem = param;
    s.a = index;
    s.b = value;
    k.body.push_back(std::move(s));
  }
  ir::VerifiedKernel done() { return ir::verify(std::move(k)); }
};

} // namespace halfway::codegen::spirv
