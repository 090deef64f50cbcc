#pragma once
// The interval shadow (specs/device-precision.md): with Options::intervals, every register of every
// lane also holds the interval of the values a device conforming to Options::profile could have
// there, propagated op by op from the op table's device precision column (ir::DevicePrecision),
// with outward rounding. Loads read the interval a store left in the buffer or shared element
// (a point for elements the launch did not write). A comparison, branch condition, index or bit
// reinterpretation the interval cannot decide makes the value (or the lane) undecided.

#include "exec.hpp"

#include <cstdint>
#include <vector>

namespace halfway::interp {

using Iv = ValueInterval;

class IntervalState {
public:
  explicit IntervalState(const Program& p, uint32_t capacity);

  Iv* reg(uint32_t r) { return regs_.data() + static_cast<size_t>(r) * capacity_; }
  // Whether a register's intervals are kept (computed nodes and locals), or are points of the
  // register's value (constants, parameters, builtins).
  bool kept(uint32_t r) const { return kept_[r] != 0; }
  ir::ScalarType type(uint32_t r) const { return types_[r]; }
  uint8_t* lane_undecided() { return lanes_.data(); }
  std::vector<Iv>& shared(uint32_t id) { return shared_[id]; }
  // Private array `id`'s intervals, lane-major: lane l's element e is at l * size + e.
  std::vector<Iv>& private_array(uint32_t id) { return private_[id]; }

  void begin_batch(uint32_t lanes);

private:
  uint32_t capacity_;
  std::vector<Iv> regs_;
  std::vector<uint8_t> kept_;
  std::vector<ir::ScalarType> types_;
  std::vector<uint8_t> lanes_; // per lane: a branch or loop condition was undecided
  std::vector<std::vector<Iv>> shared_;
  std::vector<std::vector<Iv>> private_;
};

// After node n's own evaluation, on the active lanes.
void interval_node(Exec& x, const Node& n);
// A local assigned from a register.
void interval_assign(Exec& x, uint32_t local, uint32_t from_reg, const LaneMask& m);
// A branch or loop condition: lanes where it is undecided become undecided lanes.
void interval_condition(Exec& x, uint32_t cond_reg, const LaneMask& m);
// `for`: the comparison of the loop local with its bound, and the step.
void interval_for_compare(Exec& x, uint32_t local_reg, uint32_t bound_reg, const LaneMask& m);
void interval_for_step(Exec& x, uint32_t local_reg, uint32_t step_reg, const LaneMask& m);
// After a store or atomic statement executed: the element intervals it left.
void interval_store(Exec& x, const CStmt& s, const LaneMask& m);
void interval_atomic(Exec& x, const CStmt& s, const LaneMask& m);

} // namespace halfway::interp
