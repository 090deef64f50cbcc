#include "halfway/dsl/builder.hpp"

#include "halfway/support/error.hpp"

namespace halfway::dsl {

namespace {
thread_local Builder* current_builder = nullptr;
} // namespace

Builder::Builder(std::string name) : previous_(current_builder) {
  kernel_.name = std::move(name);
  blocks_.push_back(&kernel_.body);
  current_builder = this;
}

Builder::~Builder() {
  current_builder = previous_;
}

Builder& Builder::current() {
  if (!current_builder)
    throw Error(ErrorKind::Usage,
                "a halfway DSL operation was used outside a kernel body; build kernels with "
                "halfway::kernel(name, workgroup, body)");
  return *current_builder;
}

ir::ExprId Builder::constant(ir::ScalarType type, uint64_t bits) {
  ir::Expr e;
  e.op = ir::Op::Const;
  e.type = type;
  e.imm = bits;
  return add(e);
}

ir::ExprId Builder::unary(ir::Op op, ir::ScalarType type, ir::ExprId a) {
  ir::Expr e;
  e.op = op;
  e.type = type;
  e.nargs = 1;
  e.args[0] = a;
  return add(e);
}

ir::ExprId Builder::binary(ir::Op op, ir::ScalarType type, ir::ExprId a, ir::ExprId b) {
  ir::Expr e;
  e.op = op;
  e.type = type;
  e.nargs = 2;
  e.args[0] = a;
  e.args[1] = b;
  return add(e);
}

ir::ExprId Builder::convert(ir::ExprId a, ir::ScalarType to, ir::RoundingMode r, bool saturate) {
  if (type_of(a) == to)
    return a;
  ir::Expr e;
  e.op = ir::Op::Convert;
  e.type = to;
  e.nargs = 1;
  e.args[0] = a;
  e.rounding = r;
  e.saturate = saturate;
  return add(e);
}

uint32_t Builder::new_local(ir::ScalarType type, const std::string& name) {
  std::string unique = name.empty() ? "t" + std::to_string(temp_counter_++) : name;
  for (uint32_t n = 1; local_names_.count(unique); ++n)
    unique =
        (name.empty() ? "t" + std::to_string(temp_counter_++) : name + "_" + std::to_string(n));
  local_names_.insert(unique);
  kernel_.locals.push_back({std::move(unique), type});
  return static_cast<uint32_t>(kernel_.locals.size() - 1);
}

uint32_t Builder::add_param(ir::Param p) {
  kernel_.params.push_back(std::move(p));
  return static_cast<uint32_t>(kernel_.params.size() - 1);
}

uint32_t Builder::add_shared(ir::SharedArray s) {
  kernel_.shared.push_back(std::move(s));
  return static_cast<uint32_t>(kernel_.shared.size() - 1);
}

uint32_t Builder::add_private(ir::PrivateArray a) {
  kernel_.privates.push_back(std::move(a));
  return static_cast<uint32_t>(kernel_.privates.size() - 1);
}

void Builder::emit(ir::Stmt s) {
  blocks_.back()->push_back(std::move(s));
}

} // namespace halfway::dsl
