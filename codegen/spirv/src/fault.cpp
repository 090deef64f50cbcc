#include "halfway/codegen/spirv/fault.hpp"

#include <atomic>

namespace halfway::codegen::spirv::testing {

namespace {
std::atomic<Fault> g_fault{Fault::None};
} // namespace

void inject_fault(Fault fault) {
  g_fault.store(fault, std::memory_order_relaxed);
}

Fault injected_fault() {
  return g_fault.load(std::memory_order_relaxed);
}

} // namespace halfway::codegen::spirv::testing
