#pragma once
#include "halfway/dsl.hpp"

namespace halfway::examples {

// Flash-attention-lite, f32: q, k, v and o are [heads][seq][64] (head_dim 64); o[h][i] =
// Σ_j softmax_j(scale·q[h][i]·k[h][j])·v[h][j], over every key j (no mask). One lane per (head,
// query), lane h·seq + i (a 1-D launch of heads·seq lanes; heads = len(o) / (64·seq)). The lane
// walks the keys once with an online softmax: a running maximum m and sum l, and a 64-float
// private accumulator rescaled by exp(m_old − m_new) whenever the maximum grows, so the scores are
// never stored. As flash-attention code does, the first key starts the state (m = its score, l = 1,
// acc = its values) rather than m = −inf: the result is the same bit for bit (exp(−inf) = 0 and
// exp(0) = 1 made the first step exact), but no exp of −inf is evaluated, where a device's
// documented exp precision (3 + 2|x| ulps on Vulkan) bounds nothing and a comparison within it
// could not decide the lane. With seq = 0 there is no key and o is left as it was.
//
// attention_with(exp_of) builds the same kernel with exp_of(x) in place of exp(x): the checker's
// tests use it for a fake device whose exp is off by a chosen number of ulps.
template <class Exp> Kernel attention_with(Exp exp_of) {
  static constexpr uint32_t kDim = 64;
  return kernel(
      "attention", {64}, {"q", "k", "v", "o", "seq", "scale"},
      [exp_of](In<float> q, In<float> k, In<float> v, Out<float> o, Scalar<uint32_t> seq,
               Scalar<float> scale) {
        Var lane(global_id(0), "lane");
        If(lane < o.size() / kDim, [&] {
          If(seq > 0u, [&] {
            Private<float, kDim> acc("acc");
            Var head(lane / seq, "head");
            Var qbase(lane * kDim, "qbase");
            Var kv0(head * seq * kDim, "kv0");
            Var dot(0.0f, "dot");
            For(Value<uint32_t>(0u), kDim,
                [&](Value<uint32_t> d) { dot = dot + q[qbase + d] * k[kv0 + d]; });
            Var m(dot * scale, "m");
            Var l(1.0f, "l");
            For(Value<uint32_t>(0u), kDim, [&](Value<uint32_t> d) { acc[d] = v[kv0 + d]; });
            For(Value<uint32_t>(1u), seq, [&](Value<uint32_t> j) {
              Var kbase(kv0 + j * kDim, "kbase");
              dot = 0.0f;
              For(Value<uint32_t>(0u), kDim,
                  [&](Value<uint32_t> d) { dot = dot + q[qbase + d] * k[kbase + d]; });
              Var s(dot * scale, "s");
              Var m_new(max(m, s), "m_new");
              Var corr(exp_of(m - m_new), "corr");
              Var p(exp_of(s - m_new), "p");
              l = l * corr + p;
              For(Value<uint32_t>(0u), kDim,
                  [&](Value<uint32_t> d) { acc[d] = acc[d] * corr + p * v[kbase + d]; });
              m = m_new;
            });
            For(Value<uint32_t>(0u), kDim, [&](Value<uint32_t> d) { o[qbase + d] = acc[d] / l; });
          });
        });
      });
}

inline Kernel attention() {
  return attention_with([](const Value<float>& x) { return exp(x); });
}

} // namespace halfway::examples
