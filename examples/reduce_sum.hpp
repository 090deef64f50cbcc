#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// The end of a workgroup reduction: after each lane stored its value to tile[lid], a tree of
// halving steps in shared memory (a barrier before each), and lane 0 writes the workgroup's sum to
// out[group_id(0)]. `lanes` is the workgroup size, a power of two.
template <class Tile, class Lid, class Out>
void workgroup_tree_sum(Tile& tile, const Lid& lid, Out& out, uint32_t lanes) {
  Barrier();
  Var stride(lanes / 2, "stride");
  While([&] { return stride > 0u; },
        [&] {
          If(lid < stride, [&] { tile[lid] = tile[lid] + tile[lid + stride]; });
          Barrier();
          stride = stride >> 1u;
        });
  If(lid == 0u, [&] { out[group_id(0)] = tile[0u]; });
}

// Each workgroup of 256 lanes sums its 256 elements of x in shared memory (a tree of halving
// steps, a barrier between steps) and writes one partial sum per workgroup to out.
inline Kernel reduce_sum() {
  constexpr uint32_t kLanes = 256;
  return kernel("reduce_sum", {kLanes}, {"x", "out"}, [](In<float> x, Out<float> out) {
    Shared<float> tile("tile", kLanes);
    Var gid(global_id(0), "gid");
    Var lid(local_id(0), "lid");
    tile[lid] = select(gid < x.size(), x[min(gid, x.size() - 1u)], 0.0f);
    workgroup_tree_sum(tile, lid, out, kLanes);
  });
}

// Each lane sums `per_lane` consecutive elements (the accumulation relaxed accumulation
// vectorises), then the workgroup adds its 256 partial sums in shared memory as reduce_sum does
// and lane 0 writes the workgroup's sum. The CPU benchmark's reduction (bench/cpu), and the
// kernel the CPU backend's loop interleaving is tested on; not among all() (no bundled text).
inline Kernel reduce_chunks() {
  static constexpr uint32_t kLanes = 256; // (static: the lambda reads it without a capture)
  return kernel("reduce_chunks", {kLanes}, {"x", "out", "per_lane"},
                [](In<float> x, Out<float> out, Scalar<uint32_t> per_lane) {
                  Shared<float> tile("tile", kLanes);
                  Var lid(local_id(0), "lid");
                  Var base((group_id(0) * kLanes + lid) * per_lane, "base");
                  Var acc(0.0f, "acc");
                  For(0u, per_lane, [&](Value<uint32_t> j) { acc = acc + x[base + j]; });
                  tile[lid] = acc;
                  workgroup_tree_sum(tile, lid, out, kLanes);
                });
}

} // namespace halfway::examples
