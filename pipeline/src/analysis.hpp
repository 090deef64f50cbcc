#pragma once
// What the fusion pass proves about one launch from its kernel's IR: which expressions are the
// lane's own global index, which statements run only below a bound on it, and which values depend
// on memory.

#include "halfway/pipeline/pipeline.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace halfway::pipeline::analysis {

// A launch seen by the pass: the kernel, and the pipeline buffer size of each buffer parameter.
class LaunchView {
public:
  LaunchView(const Pipeline& p, const Launch& l);

  const ir::Kernel& kernel() const { return *k_; }
  const Launch& launch() const { return *l_; }
  // Whether the grid and workgroup are one-dimensional; lanes() is then the lane count.
  bool one_dimensional() const;
  uint64_t lanes() const;
  uint64_t size(uint32_t param) const { return sizes_[param]; }

  // global_id(0), or a local defined as global_id(0) and never assigned again.
  bool is_own_index(ir::ExprId e) const;
  // The bound b that a condition proves on the own index (own < b), if it is one of
  // lt(own, len(Q)), lt(own, N), gt(len(Q), own), gt(N, own), or an `and` holding one.
  std::optional<uint64_t> guard_bound(ir::ExprId cond) const;
  // Whether an expression's value may depend on memory (a load, an atomic's result, or a local
  // assigned from one or under a condition that does).
  bool data_dependent(ir::ExprId e) const;
  // Whether a local may hold a value that depends on memory (data_dependent's rule for locals).
  bool tainted(uint32_t local) const { return tainted_locals_[local]; }
  // Whether an expression's value may depend on float arithmetic (a float-typed node, or a local
  // assigned from one or under a condition that does): devices may round it differently.
  bool float_dependent(ir::ExprId e) const;
  bool float_tainted(uint32_t local) const { return float_locals_[local]; }

private:
  using Leaf = bool (*)(const ir::Expr&);
  // The locals that depend, to a fixed point, on nodes for which `leaf` holds (and on atomics'
  // results when `atomics`).
  std::vector<bool> taint(bool atomics, Leaf leaf);
  bool depends(const std::vector<bool>& tainted, Leaf leaf, ir::ExprId e) const;

  const Launch* l_;
  const ir::Kernel* k_;
  std::vector<uint64_t> sizes_;
  std::vector<bool> own_locals_;
  std::vector<bool> tainted_locals_;
  std::vector<bool> float_locals_;
};

// Every statement of `k` in program order with the tightest bound that the `if` conditions around
// it prove on the own index (none when no condition does).
struct Site {
  const ir::Stmt* stmt;
  std::optional<uint64_t> bound;
};
std::vector<Site> sites(const LaunchView& v);

// Every expression reachable from `root`, each once.
std::vector<ir::ExprId> subexprs(const ir::Kernel& k, ir::ExprId root);

} // namespace halfway::pipeline::analysis
