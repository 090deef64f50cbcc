#pragma once
// The kernel under construction. halfway::kernel() makes one Builder, makes it current for the
// duration of the kernel's body lambda, and every DSL call appends to it. "Current" is a
// thread-local pointer that only lives while a kernel is being built (it is how a free function
// like global_id(0) or If(...) knows which kernel to extend); it is not program state.

#include "halfway/ir/kernel.hpp"

#include <string>
#include <unordered_set>
#include <vector>

namespace halfway::dsl {

class Builder {
public:
  explicit Builder(std::string name);
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // The builder of the kernel being built on this thread; throws a usage Error outside one.
  static Builder& current();

  ir::Kernel& kernel() { return kernel_; }
  ir::ExprId add(const ir::Expr& e) { return kernel_.add(e); }
  ir::ExprId constant(ir::ScalarType type, uint64_t bits);
  ir::ExprId unary(ir::Op op, ir::ScalarType type, ir::ExprId a);
  ir::ExprId binary(ir::Op op, ir::ScalarType type, ir::ExprId a, ir::ExprId b);
  // A conversion node when `from` and `to` differ, else `a` itself.
  ir::ExprId convert(ir::ExprId a, ir::ScalarType to,
                     ir::RoundingMode r = ir::RoundingMode::NearestEven, bool saturate = false);
  ir::ScalarType type_of(ir::ExprId e) const { return kernel_.exprs[e].type; }

  // A fresh local; an empty name gets "t<N>". Names are unique in the kernel: a name already
  // taken (a Var declared in a C++ loop, say) gets the first free suffix "_1", "_2", ...
  uint32_t new_local(ir::ScalarType type, const std::string& name = "");
  uint32_t add_param(ir::Param p);
  uint32_t add_shared(ir::SharedArray s);
  uint32_t add_private(ir::PrivateArray a);

  // Appends to the innermost open block.
  void emit(ir::Stmt s);
  // Runs `body` with `block` as the innermost open block.
  template <class F> void in_block(ir::Body& block, F&& body) {
    blocks_.push_back(&block);
    body();
    blocks_.pop_back();
  }
  ir::Body& current_block() { return *blocks_.back(); }

  ir::Kernel take() { return std::move(kernel_); }

private:
  ir::Kernel kernel_;
  std::vector<ir::Body*> blocks_;
  Builder* previous_;
  uint32_t temp_counter_ = 0;
  std::unordered_set<std::string> local_names_;
};

} // namespace halfway::dsl
