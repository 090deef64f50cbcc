#include "halfway/codegen/llvm/options.hpp"

#include "halfway/codegen/llvm/fault.hpp"

#include <atomic>

namespace halfway::codegen::llvm {

uint64_t LlvmOptions::variant() const {
  return (check_arith ? 1u : 0u) | (single_rounding == SingleRoundingMode::Exact ? 2u : 0u) |
         (noalias_buffers ? 4u : 0u) | (grid_fits_u32 ? 8u : 0u) |
         (uint64_t{narrowing_vector_width} << 8) | (uint64_t(memory) << 4) |
         (cancellable ? 64u : 0u) | (uint64_t(testing::injected_fault()) << 16);
}

namespace testing {
namespace {
std::atomic<Fault> g_fault{Fault::None};
}
void inject_fault(Fault fault) {
  g_fault.store(fault, std::memory_order_relaxed);
}
Fault injected_fault() {
  return g_fault.load(std::memory_order_relaxed);
}
} // namespace testing

} // namespace halfway::codegen::llvm
