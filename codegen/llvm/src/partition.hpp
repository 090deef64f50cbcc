#pragma once
// Splits a kernel body at its barriers into parts (lower.hpp, "Execution model").
//
//   Lanes   a maximal run of statements without barriers: run for every lane in turn.
//   If      an if containing a barrier: its condition is uniform, evaluated once per workgroup.
//   While   a while containing a barrier: likewise, its condition before every iteration.
//   For     a for containing a barrier: its bounds and loop variable are workgroup values.
//   Uniform a let or assignment of a uniform local (storage.hpp) lifted out of the lanes: run
//           once per workgroup, between the Lanes parts before and after it.
// A barrier statement itself only ends the Lanes part before it: lanes run to completion one
// after another, so every lane has finished the code before the barrier when any lane starts the
// code after it.

#include "halfway/ir/kernel.hpp"

#include <set>
#include <vector>

namespace halfway::codegen::llvm::detail {

struct Part {
  enum class Kind : uint8_t { Lanes, If, While, For, Uniform };
  Kind kind = Kind::Lanes;
  uint32_t id = 0;                    // unique per part; the condition's id for If/While/For
  std::vector<const ir::Stmt*> stmts; // Lanes
  const ir::Stmt* stmt = nullptr;     // If/While/For/Uniform
  std::vector<Part> body, else_body;  // If/While/For
};

bool contains_barrier(const ir::Stmt& s);
// True when `s` contains a break, continue or return that can leave the statement.
bool escapes(const ir::Stmt& s);
std::vector<Part> partition(const ir::Body& body, const std::set<const ir::Stmt*>& hoisted = {});

} // namespace halfway::codegen::llvm::detail
