#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// Fused GroupNorm + SiLU over x laid out [batch][channels][hw] (NCHW with H·W flattened), f32:
// for each (batch n, group g) of `channels / groups` channels, mean and variance over the group's
// channels·hw values, then y = silu((x − mean)·rsqrt(var + eps)·gamma[c] + beta[c]) with
// silu(v) = v / (1 + exp(−v)). One 256-lane workgroup per (n, g), group index n·groups + g (a 1-D
// launch of batch·groups·256 lanes); each lane strides over the group's values, and the sum, then
// the sum of squared deviations, meet in tree reductions in shared memory. The variance is the
// two-pass one (deviations from the mean), as numerically careful GroupNorm kernels compute it.
// `channels` must be a multiple of `groups`; batch is len(x) / (channels·hw).
//
// group_norm() is the same kernel without the SiLU (y = the normalised value v), and silu() the
// SiLU alone as an elementwise kernel: run one after the other through a temporary they compute
// what group_norm_silu() does, and the fusion pass (specs/fusion.md) turns that two-kernel
// pipeline back into one kernel.
namespace detail {
inline Kernel group_norm_kernel(const std::string& name, bool with_silu) {
  static constexpr uint32_t kLanes = 256;
  return kernel(name, {kLanes}, {"x", "gamma", "beta", "y", "channels", "groups", "hw", "eps"},
                [with_silu](In<float> x, In<float> gamma, In<float> beta, Out<float> y,
                            Scalar<uint32_t> channels, Scalar<uint32_t> groups, Scalar<uint32_t> hw,
                            Scalar<float> eps) {
                  Shared<float> red("red", kLanes);
                  Var lid(local_id(0), "lid");
                  Var per_group(select(groups > 0u, channels / max(groups, 1u), 0u), "per_group");
                  Var count(per_group * hw, "count");
                  Var instances(select(count > 0u, y.size() / max(count, 1u), 0u), "instances");
                  Var gi(group_id(0), "gi");
                  Var live(gi < instances, "live");
                  Var first_channel((gi % max(groups, 1u)) * per_group, "first_channel");
                  Var base(gi * count, "base");
                  Var n(convert<float>(count), "n");

                  // One tree reduction of `red` (every lane stored its partial sum), leaving the
                  // total in red[0]; the barriers are outside any lane-dependent branch.
                  Var stride(0u, "stride");
                  auto reduce = [&] {
                    Barrier();
                    stride = kLanes / 2;
                    While([&] { return stride > 0u; },
                          [&] {
                            If(lid < stride, [&] { red[lid] = red[lid] + red[lid + stride]; });
                            Barrier();
                            stride = stride >> 1u;
                          });
                  };

                  Var sum(0.0f, "sum");
                  If(live, [&] {
                    For(lid, count, kLanes, [&](Value<uint32_t> i) { sum = sum + x[base + i]; });
                  });
                  red[lid] = sum;
                  reduce();
                  Var mean(red[0u] / n, "mean");
                  Barrier(); // every lane has read the sum before the deviations overwrite it

                  Var sq(0.0f, "sq");
                  If(live, [&] {
                    For(lid, count, kLanes, [&](Value<uint32_t> i) {
                      Var d(x[base + i] - mean, "d");
                      sq = sq + d * d;
                    });
                  });
                  red[lid] = sq;
                  reduce();
                  Var inv_std(rsqrt(red[0u] / n + eps), "inv_std");

                  If(live, [&] {
                    For(lid, count, kLanes, [&](Value<uint32_t> i) {
                      Var c(first_channel + i / hw, "c");
                      Var v((x[base + i] - mean) * inv_std * gamma[c] + beta[c], "v");
                      if (with_silu)
                        y[base + i] = v / (1.0f + exp(-v));
                      else
                        y[base + i] = v;
                    });
                  });
                });
}
} // namespace detail

inline Kernel group_norm_silu() {
  return detail::group_norm_kernel("group_norm_silu", true);
}
inline Kernel group_norm() {
  return detail::group_norm_kernel("group_norm", false);
}

// y[i] = silu(x[i]) = x[i] / (1 + exp(-x[i])), elementwise.
inline Kernel silu() {
  return kernel("silu", {256}, {"x", "y"}, [](In<float> x, Out<float> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] {
      Var v(x[i], "v");
      y[i] = v / (1.0f + exp(-v));
    });
  });
}

} // namespace halfway::examples
