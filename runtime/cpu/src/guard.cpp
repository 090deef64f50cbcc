#include "guard.hpp"

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <mutex>
#include <pthread.h>

namespace halfway::rt::cpu_detail {

namespace {

struct ThreadState {
  sigjmp_buf jump;
  const GuardRanges* guards = nullptr; // non-null only while this thread runs generated code
  uintptr_t fault = 0;
};
thread_local ThreadState thread_state;

struct sigaction previous_segv, previous_bus;

void pass_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction& prev = sig == SIGBUS ? previous_bus : previous_segv;
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) {
      prev.sa_sigaction(sig, info, context);
      return;
    }
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // The default action: reinstate it; the faulting instruction runs again and ends the process
  // exactly as it would have without this handler.
  sigaction(sig, &prev, nullptr);
}

void on_fault(int sig, siginfo_t* info, void* context) {
  ThreadState& s = thread_state;
  const GuardRanges* guards = s.guards;
  if (guards) {
    auto address = reinterpret_cast<uintptr_t>(info->si_addr);
    for (const auto& [begin, end] : *guards)
      if (address >= begin && address < end) {
        s.guards = nullptr;
        s.fault = address;
        // The jump buffer does not save the signal mask (that would cost a system call per
        // run); unblock the signal the kernel blocked for this handler instead.
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
        siglongjmp(s.jump, 1);
      }
  }
  pass_on(sig, info, context);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa = {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &previous_segv);
    sigaction(SIGBUS, &sa, &previous_bus);
  });
}

} // namespace

int32_t run_guarded(codegen::llvm::EntryFn entry, const codegen::llvm::KernelArgs* args,
                    uint64_t begin, uint64_t end, void* shared, const GuardRanges& guards,
                    uintptr_t* fault) {
  install_handler();
  ThreadState& s = thread_state;
  if (sigsetjmp(s.jump, 0) != 0) {
    *fault = s.fault;
    return -1;
  }
  s.guards = &guards;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  int32_t result = entry(args, begin, end, shared);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  s.guards = nullptr;
  return result;
}

} // namespace halfway::rt::cpu_detail
