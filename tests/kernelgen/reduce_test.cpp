// The reducer's grid pass on its own (a predicate stands in for a device): it shrinks the grid
// and the workgroup along x, y and z, only as far as the failure persists.
#include "halfway/kernelgen/reduce.hpp"
#include "halfway/text/kernel_file.hpp"

#include <gtest/gtest.h>

namespace halfway::kernelgen {
namespace {

// One store per lane over a 3-D grid of workgroups 4 x 2 x 2.
ir::Kernel three_d() {
  return text::KernelFile(R"(kernel grid3 workgroup(4, 2, 2) {
  param y: buffer<u32, write>;
  y[add(global_id(0), mul(mul(num_groups(0), group_size(0)), add(global_id(1), mul(mul(num_groups(1), group_size(1)), global_id(2)))))] = global_id(2);
})",
                          "grid3.hk")
      .kernels()[0];
}

ReduceOptions grid_only() {
  ReduceOptions o;
  o.expressions = false;
  return o;
}

TEST(ReduceGrid, ShrinksEveryDimensionAndTheWorkgroup) {
  // A failure that any grid shows: everything shrinks to one lane of a 1 x 1 x 1 workgroup.
  Lanes seen_max{0, 0, 0};
  const Reduced r = reduce(
      three_d(), {8, 4, 6},
      [&](const ir::VerifiedKernel&, const Lanes& l) {
        for (size_t d = 0; d < 3; ++d)
          seen_max[d] = std::max(seen_max[d], l[d]);
        return true;
      },
      grid_only());
  EXPECT_EQ(r.lanes, (Lanes{1, 1, 1}));
  EXPECT_EQ(r.kernel.workgroup, (std::array<uint32_t, 3>{1, 1, 1}));
  EXPECT_LE(seen_max[1], 4u); // never grows a dimension
  EXPECT_LE(seen_max[2], 6u);
}

TEST(ReduceGrid, StopsWhereTheFailureNeedsLanes) {
  // The failure needs 2 lanes along y and 4 along z: x goes to one lane, y to one workgroup of
  // 2 lanes (the workgroup's y extent stays 2), z keeps its 6 lanes (one workgroup along z is 2
  // lanes, too few, and its extent cannot halve while the grid has several workgroups there).
  const Reduced r = reduce(
      three_d(), {8, 4, 6},
      [](const ir::VerifiedKernel&, const Lanes& l) { return l[1] >= 2 && l[2] >= 4; },
      grid_only());
  EXPECT_EQ(r.lanes[0], 1u);
  EXPECT_EQ(r.lanes[1], 2u);
  EXPECT_EQ(r.lanes[2], 6u);
  EXPECT_EQ(r.kernel.workgroup[0], 1u);
  EXPECT_EQ(r.kernel.workgroup[1], 2u);
  EXPECT_EQ(r.kernel.workgroup[2], 2u);
  // Every lane count stays a multiple of the workgroup's extent.
  for (size_t d = 0; d < 3; ++d)
    EXPECT_EQ(r.lanes[d] % r.kernel.workgroup[d], 0u) << d;
}

} // namespace
} // namespace halfway::kernelgen
