#include "emitter.hpp"
#include "halfway/codegen/spirv/drivers.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/numerics/convert.hpp"

#include <chrono>
#include <cstring>

namespace halfway::codegen::spirv {

Target Target::generic() {
  Target t;
  t.device = "generic Vulkan 1.1";
  return t;
}

Target Target::lavapipe() {
  Target t;
  t.device = "llvmpipe";
  t.driver_id = 13; // VK_DRIVER_ID_MESA_LLVMPIPE
  t.loop_limit = driver_loop_limit(t.driver_id);
  for (Width* w : {&t.f16, &t.f32, &t.f64}) {
    w->rounding_mode_rte = true;
    w->denorm_preserve = false;
    w->signed_zero_inf_nan_preserve = true;
  }
  return t;
}

bool Target::uses_opaque_identity() const {
  return opaque_identity.value_or(driver_needs_opaque_identity(driver_id));
}

Shader generate(const ir::VerifiedKernel& kernel, const policy::Budget& budget,
                const Target& target, const Options& options) {
  auto start = std::chrono::steady_clock::now();
  Shader shader = Emitter(kernel, budget, target, options).run();
  shader.codegen_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (options.validate) {
    std::string problems = validate(shader.words);
    if (!problems.empty()) {
      ErrorContext c;
      c.kernel = kernel.name();
      throw Error(ErrorKind::Internal, "SPIR-V backend produced an invalid module: " + problems, c);
    }
  }
  return shader;
}

Dispatch plan_dispatch(const std::array<uint32_t, 3>& logical,
                       const std::array<uint32_t, 3>& max_groups, const std::string& kernel) {
  Dispatch d;
  if (logical[0] <= max_groups[0] && logical[1] <= max_groups[1] && logical[2] <= max_groups[2]) {
    d.physical = logical;
    return d;
  }
  ErrorContext c;
  c.kernel = kernel;
  auto text = [&] {
    return "a grid of " + std::to_string(logical[0]) + " x " + std::to_string(logical[1]) + " x " +
           std::to_string(logical[2]) + " workgroups";
  };
  if (logical[2] != 1 || logical[1] > max_groups[2] ||
      logical[0] > uint64_t{max_groups[0]} * max_groups[1])
    throw Error(ErrorKind::Unsupported,
                text() + " exceeds the device's limits of " + std::to_string(max_groups[0]) +
                    " x " + std::to_string(max_groups[1]) + " x " + std::to_string(max_groups[2]) +
                    " (only x may exceed its limit, when z is 1)",
                c);
  const uint32_t rows = (logical[0] + max_groups[0] - 1) / max_groups[0];
  const uint32_t per_row = (logical[0] + rows - 1) / rows;
  d.physical = {per_row, rows, logical[1]};
  d.fold_x = per_row;
  return d;
}

uint64_t push_scalar_bits(ir::ScalarType type, uint64_t bits) {
  switch (type) {
  case ir::ScalarType::F16:
    return num::f16_to_f32(static_cast<uint16_t>(bits));
  case ir::ScalarType::BF16:
    return num::bf16_to_f32(static_cast<uint16_t>(bits));
  case ir::ScalarType::I8:
  case ir::ScalarType::I16:
    return static_cast<uint32_t>(ir::sign_extend(bits, ir::info(type).bits));
  default:
    return ir::truncate_bits(type, bits);
  }
}

void write_push_constants(const Shader& shader, const ir::Kernel& kernel,
                          std::span<const uint64_t> scalars, std::span<const uint64_t> lengths,
                          const std::array<uint32_t, 3>& groups, const Dispatch& dispatch,
                          std::span<std::byte> out) {
  if (out.size() < shader.push_bytes) {
    ErrorContext c;
    c.kernel = shader.kernel;
    throw Error(ErrorKind::Internal, "push-constant buffer too small", c);
  }
  std::memset(out.data(), 0, shader.push_bytes);
  for (const PushEntry& p : shader.push) {
    uint64_t value = 0;
    switch (p.slot) {
    case PushSlot::GroupsX:
      value = groups[0];
      break;
    case PushSlot::GroupsY:
      value = groups[1];
      break;
    case PushSlot::GroupsZ:
      value = groups[2];
      break;
    case PushSlot::FoldX:
      value = dispatch.fold_x;
      break;
    case PushSlot::Folded:
      value = dispatch.fold_x != 0 ? 1 : 0;
      break;
    case PushSlot::Zero:
      value = 0;
      break;
    case PushSlot::BufferLength:
      value = lengths[p.param];
      break;
    case PushSlot::Scalar:
      value = push_scalar_bits(kernel.params[p.param].type, scalars[p.param]);
      break;
    }
    std::memcpy(out.data() + p.offset, &value, p.size); // little-endian
  }
}

} // namespace halfway::codegen::spirv
