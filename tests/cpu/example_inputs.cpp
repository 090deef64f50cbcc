#include "example_inputs.hpp"

#include "tie_inputs.hpp"
#include "workload_inputs.hpp"

#include <bit>
#include <random>

namespace halfway::cpu_test {

namespace {

using ir::ScalarType;

// Tie-stressing floats, specials and plain random values, interleaved.
std::vector<float> mixed_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> ties = tie_floats(n, seed + 1), specials = special_floats();
  std::uniform_real_distribution<float> d(-8, 8);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = i % 7 == 3 ? specials[(i / 7) % specials.size()] : i % 2 ? ties[i] : d(rng);
  return v;
}

rt::HostBuffer random_bits(ScalarType t, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  rt::HostBuffer b(t, n);
  for (size_t i = 0; i < n; ++i)
    b.set_bits(i, rng());
  return b;
}

rt::HostBuffer floats_of(ScalarType t, const std::vector<float>& v, uint64_t seed) {
  switch (t) {
  case ScalarType::F32:
    return make_buffer(t, v);
  case ScalarType::F64: {
    std::vector<double> d(v.begin(), v.end());
    for (size_t i = 0; i < d.size(); i += 3)
      d[i] *= 1.0 + std::ldexp(1.0, -30); // off the f32 grid
    return make_buffer(t, d);
  }
  default:
    return random_bits(t, v.size(), seed); // f16, bf16: every pattern is a value
  }
}

} // namespace

Launch example_inputs(const ir::VerifiedKernel& kv, uint64_t seed) {
  const ir::Kernel& k = kv.kernel();
  Launch in(k);
  const std::string& name = k.name;
  if (name == "narrow_f16") {
    const size_t n = 20000 + 13;
    MulAddInputs t = tie_mul_add(n, seed);
    std::vector<float> specials = special_floats();
    for (size_t i = 0; i < specials.size(); ++i)
      for (size_t j = 0; j < 3; ++j) {
        size_t at = (i * 3 + j) * 17;
        (j == 0 ? t.a : j == 1 ? t.b : t.c)[at] = specials[i];
      }
    in.buffer(k, "a") = make_buffer(ScalarType::F32, t.a);
    in.buffer(k, "b") = make_buffer(ScalarType::F32, t.b);
    in.buffer(k, "c") = make_buffer(ScalarType::F32, t.c);
    in.buffer(k, "out16") = rt::HostBuffer(ScalarType::F16, n);
    in.grid = rt::Grid::for_lanes(k, n);
  } else if (name == "saxpy") {
    const size_t n = 10000 + 7;
    in.buffer(k, "x") = make_buffer(ScalarType::F32, mixed_floats(n, seed));
    in.buffer(k, "y") = make_buffer(ScalarType::F32, mixed_floats(n, seed + 2));
    in.set_scalar(k, "a", std::bit_cast<uint32_t>(1.75f));
    in.grid = rt::Grid::for_lanes(k, n);
  } else if (name.rfind("linear<", 0) == 0) {
    const size_t n = 10000 + 5;
    ScalarType wt = k.params[k.find_param("w")].type;
    in.buffer(k, "x") = make_buffer(ScalarType::F32, mixed_floats(n, seed));
    in.buffer(k, "w") = floats_of(wt, mixed_floats(n, seed + 3), seed + 4);
    in.buffer(k, "y") = rt::HostBuffer(ScalarType::F32, n);
    in.set_scalar(k, "b", std::bit_cast<uint32_t>(-0.375f));
    in.grid = rt::Grid::for_lanes(k, n);
  } else if (name == "reduce_sum") {
    const size_t n = 256 * 37 + 11;
    rt::Grid grid = rt::Grid::for_lanes(k, n);
    in.buffer(k, "x") = make_buffer(ScalarType::F32, mixed_floats(n, seed));
    in.buffer(k, "out") = rt::HostBuffer(ScalarType::F32, grid.total_groups());
    in.grid = grid;
  } else {
    // The workloads: shaped, realistic, tie-stressing inputs (examples/workload_inputs.hpp).
    examples::WorkloadInputs w = examples::workload_inputs(k, examples::Scale::Test, seed);
    for (auto& [param, buffer] : w.buffers)
      in.buffer(k, param) = std::move(buffer);
    for (const auto& [param, bits] : w.scalars)
      in.set_scalar(k, param, bits);
    in.grid = w.grid;
  }
  return in;
}

} // namespace halfway::cpu_test
