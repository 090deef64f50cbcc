#pragma once
// Lane uniformity: which values every lane of a workgroup (or of the whole launch) holds alike,
// and which statements all of a workgroup's lanes reach together. The one implementation of
// the rules of specs/ir.md ("Uniformity"): the verifier asks it whether a barrier is in uniform
// control flow, the CPU code generator which locals it may compute once per workgroup.
//
// Rules, as levels Grid < Workgroup < Lane (a value's level is the join of what it depends on):
//  - constants, parameters, group_size, num_groups, len: Grid; group_id: Workgroup;
//    global_id, local_id: Lane.
//  - a load from a private array: Lane (every lane has its own copy). A load from a `read`
//    buffer or a shared array: the join of its indices (a shared array is at least Workgroup).
//    Nothing writes a `read` buffer during a launch; shared memory is per workgroup, a barrier
//    makes its writes visible to every lane, and a read racing with a write is an error.
//    A load from a buffer the kernel may write (`write`, `read_write`): Lane, because the
//    barrier orders only shared memory, so lanes (and other workgroups) may see the element
//    at different times. An atomic's result: Lane.
//  - a local: the join of every value assigned to it and of the control under which it is
//    assigned (flow-insensitive, iterated to a fixpoint).
//  - control: the join of the enclosing if conditions, while conditions and for bounds; of a
//    for loop's variable (assigned a lane-variant value in its body, the loop runs a
//    lane-dependent number of iterations); of the control of any break, continue or return
//    that leaves an enclosing loop early; and, after a return, of the control it was taken
//    under (for the rest of the kernel).
// The analysis is conservative: what it calls uniform is uniform.
//
// Besides the level, each value carries whether it depends (through data or control) on a
// value read from memory. The CPU code generator does not move such a computation ahead of the
// lane code before it, which may store to the element it reads.

#include "halfway/ir/kernel.hpp"

#include <string_view>
#include <unordered_map>
#include <vector>

namespace halfway::ir {

enum class Uniformity : uint8_t {
  Grid,      // the same in every lane of the launch
  Workgroup, // the same in every lane of a workgroup
  Lane,      // may differ between lanes of a workgroup
};
std::string_view name(Uniformity u);

// A value's (or a statement's control's) uniformity and whether it depends on memory.
struct UniformValue {
  Uniformity level = Uniformity::Grid;
  bool memory = false;

  UniformValue join(UniformValue o) const {
    return {level < o.level ? o.level : level, memory || o.memory};
  }
  bool operator==(const UniformValue&) const = default;
};

// What the level of a load means.
//  - Visible (the rules above): whether every lane sees the same value.
//  - Address: whether every lane reads the same element, whatever the memory (a private array
//    is still Lane), and an id of a dimension whose workgroup has one lane is as uniform as the
//    group id (local_id: Grid, global_id: Workgroup). This is what an optimiser that hoists
//    loop-invariant loads and folds constants may treat as one value for all lanes: the CPU code
//    generator asks it to predict which values LLVM's vectoriser calls uniform.
enum class LoadLevel : uint8_t { Visible, Address };

class UniformityAnalysis {
public:
  // Runs the analysis to its fixpoint. `k` must outlive this object.
  explicit UniformityAnalysis(const Kernel& k, LoadLevel loads = LoadLevel::Visible);

  UniformValue expr(ExprId id) const;
  UniformValue local(uint32_t local) const { return locals_[local]; }
  // The first barrier, in program order, that only part of a workgroup may reach (control
  // Lane), or null.
  const Stmt* divergent_barrier() const { return divergent_barrier_; }

private:
  void flow(const Body& block, UniformValue control);
  void assign(uint32_t local, UniformValue v);
  void leave(const Stmt* loop, UniformValue v);

  const Kernel& k_;
  LoadLevel loads_;
  std::vector<UniformValue> locals_;
  // Found by the last pass, whose control of every statement is the fixpoint's. (Nothing keeps
  // the control of each statement: a map of them was 12 times the text of a dense kernel.)
  const Stmt* divergent_barrier_ = nullptr;
  std::unordered_map<const Stmt*, UniformValue> left_early_; // loops some lanes leave early
  std::vector<const Stmt*> loops_;
  UniformValue returned_; // the control of the returns taken so far in this pass
  bool changed_ = false;
};

} // namespace halfway::ir
