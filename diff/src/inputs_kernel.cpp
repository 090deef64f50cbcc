// Buffers and arguments for a whole kernel.
#include "halfway/diff/compare.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/support/error.hpp"

namespace halfway::diff::inputs {

std::string_view name(Kind kind) {
  switch (kind) {
  case Kind::Random:
    return "random";
  case Kind::Ties:
    return "ties";
  case Kind::Edges:
    return "edges";
  case Kind::Zeros:
    return "zeros";
  case Kind::Iota:
    return "iota";
  }
  return "random";
}

std::optional<Kind> parse_kind(std::string_view text) {
  for (Kind k : {Kind::Random, Kind::Ties, Kind::Edges, Kind::Zeros, Kind::Iota})
    if (name(k) == text)
      return k;
  return std::nullopt;
}

namespace {

ir::ScalarType tie_target(const ir::Kernel& k) {
  for (const ir::NarrowingSite& s : ir::narrowing_sites(k))
    if (s.from == ir::ScalarType::F32 &&
        (s.to == ir::ScalarType::F16 || s.to == ir::ScalarType::BF16))
      return s.to;
  return ir::ScalarType::F16;
}

void fill_edges(rt::HostBuffer& b, ir::ScalarType target) {
  std::vector<uint64_t> values = special_bits(b.type());
  if (float_format(b.type()) && ir::info(b.type()).precision > ir::info(target).precision) {
    std::vector<uint64_t> edges = boundary_bits(b.type(), target);
    values.insert(values.end(), edges.begin(), edges.end());
  }
  fill_cycle(b, values);
}

} // namespace

KernelInputs make_inputs(const ir::Kernel& k, size_t n, Kind kind, uint64_t seed,
                         const std::map<std::string, uint64_t>& scalars) {
  for (const auto& [name, bits] : scalars) {
    const uint32_t p = k.find_param(name);
    if (p == ir::kNone || k.params[p].is_buffer())
      throw Error(ErrorKind::Usage,
                  "kernel " + k.name + " has no scalar parameter named '" + name + "'",
                  {.kernel = k.name});
  }
  KernelInputs in;
  in.grid = rt::Grid::for_lanes(k, n);
  in.buffers.reserve(k.params.size()); // never reallocates: the Args point into it
  std::vector<rt::HostBuffer*> f32_inputs;
  const ir::ScalarType target = tie_target(k);
  const std::vector<uint64_t> lengths(k.params.size(), n);
  for (size_t p = 0; p < k.params.size(); ++p) {
    const ir::Param& param = k.params[p];
    if (!param.is_buffer()) {
      auto it = scalars.find(param.name);
      uint64_t bits = 0;
      if (it != scalars.end()) {
        bits = it->second;
      } else if (ir::info(param.type).is_float) {
        rt::HostBuffer one(param.type, 1);
        fill_random(one, seed + 0x9e3779b97f4a7c15ull * (p + 1));
        bits = one.get_bits(0);
      }
      in.args.push_back(rt::Arg::bits(bits));
      continue;
    }
    rt::HostBuffer& b = in.buffers.emplace_back(param.type, n);
    in.args.push_back(rt::Arg::of(b));
    if (param.access == ir::Access::Write)
      continue; // zeroed by the constructor
    const uint64_t s = seed + 0x9e3779b97f4a7c15ull * (p + 1);
    if (fill_for_use(k, static_cast<uint32_t>(p), b, kind, s, lengths))
      continue;
    switch (kind) {
    case Kind::Random:
      fill_random(b, s);
      break;
    case Kind::Ties:
      if (param.type == ir::ScalarType::F32 && f32_inputs.size() < 3)
        f32_inputs.push_back(&b);
      else
        fill_random(b, s);
      break;
    case Kind::Edges:
      fill_edges(b, target);
      break;
    case Kind::Zeros:
      fill_zeros(b);
      break;
    case Kind::Iota:
      fill_iota(b);
      break;
    }
  }
  if (kind == Kind::Ties && !f32_inputs.empty()) {
    MulAdd ops =
        f32_inputs.size() == 3 ? tie_stress(n, target, seed) : product_ties(n, target, seed);
    rt::HostBuffer* parts[3] = {&ops.a, &ops.b, &ops.c};
    for (size_t i = 0; i < f32_inputs.size(); ++i)
      *f32_inputs[i] = std::move(*parts[i]);
  }
  return in;
}

} // namespace halfway::diff::inputs
