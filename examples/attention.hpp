#pragma once
#include "halfway/dsl.hpp"

#include <limits>
#include <string>
#include <vector>

namespace halfway::examples {

// Flash-attention-lite, f32: q, k, v and o are [heads][seq][64] (head_dim 64); o[h][i] =
// Σ_j softmax_j(scale·q[h][i]·k[h][j])·v[h][j], over every key j (no mask). One lane per (head,
// query), lane h·seq + i (a 1-D launch of heads·seq lanes; heads = len(o) / (64·seq)). The lane
// walks the keys once with an online softmax: a running maximum m and sum l, and a 64-float
// accumulator rescaled by exp(m_old − m_new) whenever the maximum grows, so the scores are never
// stored. The accumulator is 64 lane-private locals (acc0 … acc63), written out from C++: the IR
// has no private arrays yet.
inline Kernel attention() {
  static constexpr uint32_t kDim = 64;
  return kernel("attention", {64}, {"q", "k", "v", "o", "seq", "scale"},
                [](In<float> q, In<float> k, In<float> v, Out<float> o, Scalar<uint32_t> seq,
                   Scalar<float> scale) {
                  Var lane(global_id(0), "lane");
                  If(lane < o.size() / kDim, [&] {
                    Var head(lane / max(seq, 1u), "head");
                    Var qbase(lane * kDim, "qbase");
                    Var kv0(head * seq * kDim, "kv0");
                    Var m(-std::numeric_limits<float>::infinity(), "m");
                    Var l(0.0f, "l");
                    // Reserved up front: growing a vector would copy its Vars, and copying a Var
                    // declares a new local.
                    std::vector<Var<float>> acc;
                    acc.reserve(kDim);
                    for (uint32_t d = 0; d < kDim; ++d)
                      acc.emplace_back(0.0f, "acc" + std::to_string(d));
                    For(0u, seq, [&](Value<uint32_t> j) {
                      Var kbase(kv0 + j * kDim, "kbase");
                      Var dot(0.0f, "dot");
                      For(Value<uint32_t>(0u), kDim,
                          [&](Value<uint32_t> d) { dot = dot + q[qbase + d] * k[kbase + d]; });
                      Var s(dot * scale, "s");
                      Var m_new(max(m, s), "m_new");
                      Var corr(exp(m - m_new), "corr");
                      Var p(exp(s - m_new), "p");
                      l = l * corr + p;
                      for (uint32_t d = 0; d < kDim; ++d)
                        acc[d] = acc[d] * corr + p * v[kbase + d];
                      m = m_new;
                    });
                    for (uint32_t d = 0; d < kDim; ++d)
                      o[qbase + d] = acc[d] / l;
                  });
                });
}

} // namespace halfway::examples
