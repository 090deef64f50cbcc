// Exhaustive sweeps: which input buffer holds every code of its float type, and the codes.
#include "halfway/diff/inputs.hpp"
#include "halfway/support/error.hpp"

namespace halfway::diff::inputs {

namespace {

bool sweepable(ir::ScalarType t) {
  return t == ir::ScalarType::F16 || t == ir::ScalarType::BF16 || t == ir::ScalarType::E4M3 ||
         t == ir::ScalarType::E5M2;
}

// The sweep of parameter p, if it is a candidate.
std::optional<Sweep> candidate(const ir::Kernel& k, uint32_t p) {
  const ir::Param& param = k.params[p];
  if (!param.is_buffer() || param.access == ir::Access::Write)
    return std::nullopt;
  if (sweepable(param.type))
    return Sweep{p, param.type, 1};
  if (param.type == ir::ScalarType::U32) {
    const BufferUse use = buffer_use(k, p);
    if (use.packed && sweepable(*use.packed))
      return Sweep{p, *use.packed, 32 / ir::info(*use.packed).bits};
  }
  return std::nullopt;
}

[[noreturn]] void usage(const ir::Kernel& k, const std::string& message) {
  throw Error(ErrorKind::Usage, message, {.kernel = k.name});
}

} // namespace

Sweep plan_sweep(const ir::Kernel& k, std::string_view name) {
  std::vector<Sweep> found;
  std::string names;
  for (uint32_t p = 0; p < k.params.size(); ++p)
    if (auto s = candidate(k, p)) {
      found.push_back(*s);
      names += (names.empty() ? "" : ", ") + k.params[p].name;
    }
  const std::string what = "an input buffer of f16, bf16, e4m3 or e5m2 (or of u32 words the "
                           "kernel unpacks as one of them)";
  if (!name.empty()) {
    const uint32_t p = k.find_param(name);
    if (p == ir::kNone)
      usage(k, "--inputs sweep:" + std::string(name) + ": the kernel has no parameter named '" +
                   std::string(name) + "'");
    if (auto s = candidate(k, p))
      return *s;
    const ir::Param& param = k.params[p];
    std::string is =
        !param.is_buffer() ? "a scalar"
        : param.access == ir::Access::Write
            ? "a write-only buffer"
            : "a buffer of " + std::string(ir::name(param.type)) +
                  (param.type == ir::ScalarType::U32 ? " the kernel does not unpack" : "");
    usage(k, "--inputs sweep:" + std::string(name) + ": " + std::string(name) + " is " + is +
                 "; a sweep needs " + what +
                 (names.empty() ? ", and the kernel has none" : " (here: " + names + ")"));
  }
  if (found.empty())
    usage(k, "--inputs sweep: the kernel has no " + what.substr(3) + " to sweep");
  if (found.size() > 1)
    usage(k, "--inputs sweep: several buffers can be swept (" + names +
                 "); name one with --inputs sweep:BUFFER");
  return found.front();
}

void fill_sweep(rt::HostBuffer& b, const Sweep& s) {
  const uint64_t codes = s.codes();
  const uint32_t width = ir::info(s.element).bits;
  for (uint64_t i = 0; i < b.size(); ++i) {
    uint64_t word = 0;
    for (uint32_t j = 0; j < s.lanes; ++j)
      word |= ((i + j * (codes / s.lanes)) % codes) << (j * width);
    b.set_bits(i, word);
  }
}

} // namespace halfway::diff::inputs
