#pragma once
// Example pipelines (specs/fusion.md): GroupNorm then SiLU as two kernels through a temporary,
// and a chain of three elementwise kernels through f16 temporaries. The fusion pass turns each
// into one kernel; the tests, the benchmark and `halfway demo` run both forms.
#include "group_norm_silu.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/pipeline/run.hpp"
#include "workload_inputs.hpp"

namespace halfway::examples {

// GroupNorm over x [batch][channels][hw] into the temporary t, then y = silu(t).
inline pipeline::Pipeline group_norm_then_silu(uint32_t batch, uint32_t channels, uint32_t groups,
                                               uint32_t hw) {
  const uint64_t n = uint64_t{batch} * channels * hw;
  using pipeline::LaunchArg;
  pipeline::Pipeline p;
  p.name = "group_norm_then_silu";
  p.buffers = {{"x", ir::ScalarType::F32, n, false},
               {"gamma", ir::ScalarType::F32, channels, false},
               {"beta", ir::ScalarType::F32, channels, false},
               {"t", ir::ScalarType::F32, n, true},
               {"y", ir::ScalarType::F32, n, false}};
  p.launches.push_back({group_norm(),
                        {LaunchArg::of("x"), LaunchArg::of("gamma"), LaunchArg::of("beta"),
                         LaunchArg::of("t"), LaunchArg::u32(channels), LaunchArg::u32(groups),
                         LaunchArg::u32(hw), LaunchArg::f32(1e-5f)},
                        {{uint32_t{batch} * groups, 1, 1}}});
  p.launches.push_back(
      {silu(), {LaunchArg::of("t"), LaunchArg::of("y")}, rt::Grid::for_lanes(silu().kernel(), n)});
  return p;
}

// The inputs of group_norm_then_silu, as workload_inputs makes them for group_norm_silu.
inline pipeline::Buffers group_norm_inputs(const pipeline::Pipeline& p, uint64_t seed = 1) {
  pipeline::Buffers io = pipeline::make_buffers(p);
  io.at("x") = detail_inputs::f32_buffer(detail_inputs::stress(io.at("x").size(), seed, -3, 3));
  io.at("gamma") = detail_inputs::f32_buffer(
      detail_inputs::uniform(io.at("gamma").size(), seed + 1, 0.5f, 1.5f));
  io.at("beta") = detail_inputs::f32_buffer(
      detail_inputs::uniform(io.at("beta").size(), seed + 2, -0.5f, 0.5f));
  return io;
}

// Three elementwise kernels through two f16 temporaries, each narrowing a multiply-add (the sites
// where single rounding is observable): t1[i] = narrow<f16>(a[i]*b[i] + c[i]),
// t2[i] = narrow<f16>(t1[i]*s + c[i]), y[i] = t2[i]*t2[i] + a[i] in f32.
inline Kernel chain_mad() {
  return kernel("chain_mad", {64}, {"a", "b", "c", "t1"},
                [](In<float> a, In<float> b, In<float> c, Out<f16> t1) {
                  Var i(global_id(0), "i");
                  If(i < t1.size(), [&] { t1[i] = narrow<f16>(a[i] * b[i] + c[i]); });
                });
}
inline Kernel chain_scale() {
  return kernel("chain_scale", {64}, {"t1", "c", "t2", "s"},
                [](In<f16> t1, In<float> c, Out<f16> t2, Scalar<float> s) {
                  Var i(global_id(0), "i");
                  If(i < t2.size(), [&] { t2[i] = narrow<f16>(to_f32(t1[i]) * s + c[i]); });
                });
}
inline Kernel chain_square() {
  return kernel("chain_square", {64}, {"t2", "a", "y"}, [](In<f16> t2, In<float> a, Out<float> y) {
    Var i(global_id(0), "i");
    If(i < y.size(), [&] {
      Var v(to_f32(t2[i]), "v");
      y[i] = v * v + a[i];
    });
  });
}

inline pipeline::Pipeline elementwise_chain(uint64_t n) {
  using pipeline::LaunchArg;
  pipeline::Pipeline p;
  p.name = "elementwise_chain";
  p.buffers = {{"a", ir::ScalarType::F32, n, false}, {"b", ir::ScalarType::F32, n, false},
               {"c", ir::ScalarType::F32, n, false}, {"t1", ir::ScalarType::F16, n, true},
               {"t2", ir::ScalarType::F16, n, true}, {"y", ir::ScalarType::F32, n, false}};
  const rt::Grid grid = rt::Grid::for_lanes(chain_mad().kernel(), n);
  p.launches.push_back(
      {chain_mad(),
       {LaunchArg::of("a"), LaunchArg::of("b"), LaunchArg::of("c"), LaunchArg::of("t1")},
       grid});
  p.launches.push_back(
      {chain_scale(),
       {LaunchArg::of("t1"), LaunchArg::of("c"), LaunchArg::of("t2"), LaunchArg::f32(1.5f)},
       grid});
  p.launches.push_back(
      {chain_square(), {LaunchArg::of("t2"), LaunchArg::of("a"), LaunchArg::of("y")}, grid});
  return p;
}

// The inputs of elementwise_chain: a, b, c as f32 multiply-adds within an f32 ulp of an f16 tie
// (diff::inputs::mul_add_ties), so that any change in how t1 is rounded shows.
inline pipeline::Buffers elementwise_chain_inputs(const pipeline::Pipeline& p, uint64_t seed) {
  pipeline::Buffers io = pipeline::make_buffers(p);
  auto ties = diff::inputs::mul_add_ties(io.at("a").size(), ir::ScalarType::F16, seed);
  io.at("a") = std::move(ties.a);
  io.at("b") = std::move(ties.b);
  io.at("c") = std::move(ties.c);
  return io;
}

} // namespace halfway::examples
