#include "halfway/codegen/llvm/abi.hpp"

namespace halfway::codegen::llvm {

std::vector<AbiParam> groups_abi(const ir::Kernel& k) {
  std::vector<AbiParam> out;
  for (uint32_t i = 0; i < k.params.size(); ++i) {
    if (k.params[i].is_buffer()) {
      out.push_back({AbiSlot::BufferData, i});
      out.push_back({AbiSlot::BufferLength, i});
    } else {
      out.push_back({AbiSlot::Scalar, i});
    }
  }
  for (uint32_t d = 0; d < 3; ++d)
    out.push_back({AbiSlot::NumGroups, d});
  for (AbiSlot s :
       {AbiSlot::Error, AbiSlot::Cancel, AbiSlot::Shared, AbiSlot::GroupBegin, AbiSlot::GroupEnd})
    out.push_back({s, 0});
  return out;
}

uint64_t kernel_args_offset(AbiSlot slot) {
  switch (slot) {
  case AbiSlot::BufferData:
    return offsetof(KernelArgs, buffers);
  case AbiSlot::BufferLength:
    return offsetof(KernelArgs, lengths);
  case AbiSlot::Scalar:
    return offsetof(KernelArgs, scalars);
  case AbiSlot::NumGroups:
    return offsetof(KernelArgs, num_groups);
  case AbiSlot::Error:
    return offsetof(KernelArgs, error);
  case AbiSlot::Cancel:
    return offsetof(KernelArgs, cancel);
  case AbiSlot::Shared:
  case AbiSlot::GroupBegin:
  case AbiSlot::GroupEnd:
    break;
  }
  throw Error(ErrorKind::Internal, "kernel_args_offset: the slot is an argument of the entry");
}

} // namespace halfway::codegen::llvm
