#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// Each workgroup of 256 lanes sums its 256 elements of x in shared memory (a tree of halving
// steps, a barrier between steps) and writes one partial sum per workgroup to out.
inline Kernel reduce_sum() {
  constexpr uint32_t kLanes = 256;
  return kernel("reduce_sum", {kLanes}, {"x", "out"}, [](In<float> x, Out<float> out) {
    Shared<float> tile("tile", kLanes);
    Var gid(global_id(0), "gid");
    Var lid(local_id(0), "lid");
    tile[lid] = select(gid < x.size(), x[min(gid, x.size() - 1u)], 0.0f);
    Barrier();
    Var stride(kLanes / 2, "stride");
    While([&] { return stride > 0u; },
          [&] {
            If(lid < stride, [&] { tile[lid] = tile[lid] + tile[lid + stride]; });
            Barrier();
            stride = stride >> 1u;
          });
    If(lid == 0u, [&] { out[group_id(0)] = tile[0u]; });
  });
}

} // namespace halfway::examples
