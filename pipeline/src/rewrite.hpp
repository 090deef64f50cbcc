#pragma once
// Copying one kernel's statements into the kernel being fused, with its parameters, locals and
// the temporary renamed on the way.

#include "halfway/ir/kernel.hpp"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace halfway::pipeline::rewrite {

// The fused kernel under construction, and every name it uses (parameters, arrays and locals
// share one namespace in the verifier's eyes).
struct Target {
  ir::Kernel kernel;
  std::set<std::string> names;

  // `base`, or `base` with _2, _3, ... appended until unused; recorded as used.
  std::string fresh(const std::string& base);
  uint32_t add_local(const std::string& base, ir::ScalarType type);
  uint32_t add_param(ir::Param p);
};

// One source kernel's copy into the target.
struct Copy {
  const ir::Kernel& src;
  Target& dst;
  std::vector<uint32_t> params;     // source parameter -> target parameter (t: unused)
  std::vector<uint32_t> locals;     // source local -> target local (add_locals)
  uint32_t t = ir::kNone;           // the temporary's source parameter
  uint32_t t_local = ir::kNone;     // loads of t read this target local instead
  uint64_t t_size = 0;              // len(t)
  uint32_t index_local = ir::kNone; // when set, global_id(0) reads this target local
  // What a store to t becomes; appends to `out`.
  std::function<void(const ir::Stmt&, ir::Body&)> on_t_store;

  Copy(const ir::Kernel& source, Target& target);
  // Declares a target local for every source local; after the parameters, so that parameters
  // keep their names and locals give way.
  void add_locals();
  ir::ExprId expr(ir::ExprId e);
  ir::Body block(const ir::Body& in);

private:
  std::map<ir::ExprId, ir::ExprId> memo_;
};

} // namespace halfway::pipeline::rewrite
