#include "jit.hpp"

#include "halfway/codegen/llvm/host.hpp"
#include "halfway/codegen/llvm/optimize.hpp"
#include "halfway/codegen/llvm/runtime_symbols.hpp"
#include "halfway/support/error.hpp"

#include <chrono>
#include <ctime>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>

namespace halfway::rt::cpu_detail {

namespace {

[[noreturn]] void fail(const std::string& what, llvm::Error error) {
  throw Error(ErrorKind::Device, what + ": " + llvm::toString(std::move(error)));
}

template <class T> T take(llvm::Expected<T> value, const std::string& what) {
  if (!value)
    fail(what, value.takeError());
  return std::move(*value);
}

double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

Jit::Jit() {
  const codegen::llvm::HostTarget& host = codegen::llvm::HostTarget::host();
  auto builder =
      take(llvm::orc::JITTargetMachineBuilder::detectHost(), "LLVM cannot target this host");
  builder.setCPU(host.cpu);
  builder.setFeatures(host.features);
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  jit_ = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(builder)).create(),
              "cannot create the LLVM JIT");

  llvm::orc::SymbolMap symbols;
  for (const codegen::llvm::RuntimeSymbol& s : codegen::llvm::runtime_symbols())
    symbols[jit_->mangleAndIntern(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                                              llvm::JITSymbolFlags::Exported |
                                                  llvm::JITSymbolFlags::Callable};
  llvm::orc::JITDylib& main = jit_->getMainJITDylib();
  if (auto e = main.define(llvm::orc::absoluteSymbols(std::move(symbols))))
    fail("cannot define the runtime symbols", std::move(e));
  // memset, memcpy and the like, which LLVM may call.
  main.addGenerator(take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                             jit_->getDataLayout().getGlobalPrefix()),
                         "cannot search this process for symbols"));
}

Jit::~Jit() = default;

codegen::llvm::EntryFn Jit::compile(codegen::llvm::LoweredKernel& lowered, CompileTimes& times) {
  std::lock_guard lock(mutex_);
  auto start = std::chrono::steady_clock::now();
  double cpu = thread_cpu_ms();
  codegen::llvm::optimize_module(*lowered.module, codegen::llvm::HostTarget::host());
  times.optimize_ms = ms_since(start);
  times.optimize_cpu_ms = thread_cpu_ms() - cpu;
  cpu = thread_cpu_ms();

  start = std::chrono::steady_clock::now();
  llvm::orc::ThreadSafeModule module(std::move(lowered.module),
                                     llvm::orc::ThreadSafeContext(std::move(lowered.context)));
  if (auto e = jit_->addIRModule(std::move(module)))
    fail("cannot add a kernel to the JIT", std::move(e));
  auto address = take(jit_->lookup(lowered.entry), "cannot compile kernel code");
  times.codegen_ms = ms_since(start);
  times.codegen_cpu_ms = thread_cpu_ms() - cpu;
  return address.toPtr<codegen::llvm::EntryFn>();
}

} // namespace halfway::rt::cpu_detail
