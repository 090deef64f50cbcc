#include "halfway/runtime/cpu/device.hpp"

#include "bounds.hpp"
#include "guard.hpp"
#include "halfway/codegen/llvm/host.hpp"
#include "halfway/codegen/llvm/lower.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/runtime/factories.hpp"
#include "halfway/runtime/memo.hpp"
#include "halfway/support/thread_pool.hpp"
#include "jit.hpp"
#include "launch_args.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <list>
#include <mutex>
#include <new>
#include <optional>
#include <spdlog/spdlog.h>
#include <thread>

namespace halfway::rt {

using cpu_detail::GuardRanges;

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Compiled {
  codegen::llvm::EntryFn entry = nullptr;
  std::vector<codegen::llvm::CheckSite> sites;
  uint64_t shared_bytes = 0;
  policy::Budget budget;
  double compile_ms = 0;
};

// Shared-memory scratch of the running thread, 64-byte aligned, grown on demand; null when the
// allocation fails (pool workers must not throw).
void* thread_scratch(uint64_t bytes) noexcept {
  struct Scratch {
    void* p = nullptr;
    uint64_t size = 0;
    ~Scratch() { std::free(p); }
  };
  thread_local Scratch s;
  if (bytes > s.size) {
    std::free(s.p);
    s.size = (bytes + 63) / 64 * 64;
    s.p = std::aligned_alloc(64, s.size);
    if (!s.p)
      s.size = 0;
  }
  return s.p;
}

std::string describe_host(const codegen::llvm::HostTarget& host, unsigned threads) {
  return "LLVM 19 ORC JIT for " + host.cpu + " (" + host.triple + "), " + std::to_string(threads) +
         " threads\n"
         "vector: " +
         std::string(host.avx512 ? "AVX-512" : "AVX2 or narrower") + (host.f16c ? ", F16C" : "") +
         "\n"
         "float controls: IEEE 754, round to nearest even, subnormals preserved (MXCSR 0x1f80)\n"
         "fuses: only where the precision budget allows (contract), never otherwise";
}

// One thread per device that raises each bounded launch's cancel word when its Cancel expires,
// polling every millisecond while any is registered and sleeping otherwise (a thread per launch
// cost more to start than a short launch takes).
class Watchdog {
public:
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }

  // Watches `cancel` until the returned token is destroyed.
  struct Token {
    Watchdog* dog;
    std::list<std::pair<const Cancel*, std::atomic<uint32_t>*>>::iterator it;
    ~Token() {
      std::lock_guard lock(dog->mutex_);
      dog->watched_.erase(it);
    }
  };
  std::unique_ptr<Token> watch(const Cancel& cancel, std::atomic<uint32_t>& word) {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable())
      thread_ = std::thread([this] { loop(); });
    watched_.emplace_front(&cancel, &word);
    wake_.notify_all();
    return std::unique_ptr<Token>(new Token{this, watched_.begin()});
  }

private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!quit_) {
      if (watched_.empty()) {
        wake_.wait(lock);
        continue;
      }
      for (auto& [cancel, word] : watched_)
        if (cancel->expired())
          word->store(1, std::memory_order_relaxed);
      wake_.wait_for(lock, std::chrono::milliseconds(1));
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::list<std::pair<const Cancel*, std::atomic<uint32_t>*>> watched_;
  bool quit_ = false;
  std::thread thread_;
};

} // namespace

struct CpuDevice::Impl {
  policy::Registry* registry;
  CpuDeviceOptions options;
  DeviceInfo info;
  support::ThreadPool pool;
  std::once_flag jit_once;
  std::unique_ptr<cpu_detail::Jit> jit;
  LaunchMemo<Compiled> memo;
  std::atomic<uint64_t> next_entry{0};
  std::atomic<uint64_t> epoch{0}; // clear_memo(): part of every key, so old entries never match
  std::atomic<uint64_t> guard_faults{0}, snapshots{0}, proven_in_bounds{0}; // stats()
  std::once_flag watchdog_once;
  std::unique_ptr<Watchdog> watchdog_;
  Watchdog& watchdog() {
    std::call_once(watchdog_once, [&] { watchdog_ = std::make_unique<Watchdog>(); });
    return *watchdog_;
  }

  Impl(policy::Registry* r, CpuDeviceOptions o)
      : registry(r ? r : &policy::global_registry()), options(o), pool(o.threads) {
    info.name = "cpu";
    info.description = describe_host(codegen::llvm::HostTarget::host(), pool.size());
    info.may_fuse = true;
    // Shared memory is the running thread's scratch, one allocation zeroed per workgroup: 64 MiB
    // keeps a per-workgroup memset reasonable and an allocation on every pool thread affordable.
    info.max_shared_bytes = uint64_t{64} << 20;
  }

  cpu_detail::Jit& the_jit() {
    std::call_once(jit_once, [&] { jit = std::make_unique<cpu_detail::Jit>(); });
    return *jit;
  }

  std::shared_ptr<Compiled> compile(const ir::VerifiedKernel& kernel,
                                    const codegen::llvm::LlvmOptions& options) {
    auto start = Clock::now();
    auto out = std::make_shared<Compiled>();
    out->budget = registry->budget(kernel.name());
    std::string entry = "halfway_kernel_" + std::to_string(next_entry++);
    codegen::llvm::LoweredKernel lowered = codegen::llvm::lower_kernel(
        kernel, out->budget, options, codegen::llvm::HostTarget::host(), entry);
    auto lowered_at = Clock::now();
    cpu_detail::CompileTimes times;
    out->entry = the_jit().compile(lowered, times);
    out->sites = std::move(lowered.sites);
    out->shared_bytes = lowered.shared_bytes;
    out->compile_ms = ms_between(start, Clock::now());
    spdlog::debug("cpu: compiled kernel '{}' in {:.2f} ms (lower {:.2f}, optimise {:.2f}, "
                  "codegen {:.2f}; CPU time optimise {:.2f}, codegen {:.2f}); variant {:#x}; {}",
                  kernel.name(), out->compile_ms, ms_between(start, lowered_at), times.optimize_ms,
                  times.codegen_ms, times.optimize_cpu_ms, times.codegen_cpu_ms, options.variant(),
                  policy::to_string(out->budget));
    return out;
  }
};

CpuDevice::CpuDevice(policy::Registry* registry, CpuDeviceOptions options)
    : impl_(std::make_unique<Impl>(registry, options)) {}
CpuDevice::~CpuDevice() = default;

const DeviceInfo& CpuDevice::info() const {
  return impl_->info;
}
size_t CpuDevice::memo_size() const {
  return impl_->memo.size();
}
void CpuDevice::clear_memo() {
  ++impl_->epoch;
}
CpuDevice::Stats CpuDevice::stats() const {
  return {impl_->guard_faults.load(), impl_->snapshots.load(), impl_->proven_in_bounds.load()};
}

namespace {

// The error as the interpreter words it (interp/src/memory.cpp and eval_int.cpp).
Error launch_error(const ir::Kernel& k, const Compiled& c, const codegen::llvm::ErrorRecord& r) {
  if (r.site >= c.sites.size())
    return Error(ErrorKind::Internal, "the CPU device recorded an unknown failure",
                 {.kernel = k.name});
  const codegen::llvm::CheckSite& site = c.sites[r.site];
  ErrorContext ctx;
  ctx.kernel = k.name;
  if (site.node != ir::kNone) {
    ctx.node = site.node;
    ctx.node_text = site.node_text;
  }
  ctx.line = site.line;
  ctx.workgroup = r.group;
  ctx.lane = r.lane;
  auto index = static_cast<int64_t>(r.index);
  bool negative = site.index_signed && index < 0;
  std::string message;
  switch (site.kind) {
  case ErrorKind::OutOfBounds:
    ctx.buffer = site.buffer;
    ctx.length = r.length;
    {
      const std::string dim =
          site.dimension < 0 ? "" : " in dimension " + std::to_string(site.dimension);
      if (negative) {
        message = site.what + " at negative index -" + std::to_string(0 - r.index) + dim +
                  " (length " + std::to_string(r.length) + ")";
      } else {
        ctx.index = r.index;
        message = site.what + " out of bounds" + dim + ": index " + std::to_string(r.index) +
                  ", length " + std::to_string(r.length);
      }
    }
    break;
  case ErrorKind::DivideByZero:
    message = site.what + " by zero";
    break;
  case ErrorKind::ShiftOverflow:
    message = site.what + " by " + (negative ? std::to_string(index) : std::to_string(r.index)) +
              ", not below the width " + std::to_string(r.length);
    break;
  default:
    message = "kernel failed";
    break;
  }
  return Error(site.kind, message, ctx);
}

} // namespace

namespace {

// The buffer whose guard holds `address`, for the message when a rerun does not reproduce a
// fault.
std::string faulting_buffer(const ir::Kernel& k, std::span<const Arg> args, uintptr_t address) {
  for (size_t i = 0; i < args.size(); ++i)
    if (k.params[i].is_buffer() && args[i].buffer->guarded()) {
      auto begin =
          reinterpret_cast<uintptr_t>(args[i].buffer->data()) + args[i].buffer->size_bytes();
      auto end = reinterpret_cast<uintptr_t>(args[i].buffer->guard_end());
      if (address >= begin && address < end)
        return k.params[i].name;
    }
  return "?";
}

enum class Outcome { Ok, Failed, Faulted, Cancelled, NoScratch };

} // namespace

LaunchResult CpuDevice::launch(const ir::VerifiedKernel& kernel, const Grid& grid,
                               std::span<const Arg> args, const LaunchOptions& options) {
  auto start = Clock::now();
  const ir::Kernel& k = kernel.kernel();
  check_args(k, grid, args);
  check_limits(k, grid, args, impl_->info);
  Cancel cancel = options.make_cancel();
  bool cancellable = options.timeout.count() > 0 || options.cancel;
  if (cancellable && cancel.expired())
    throw cancel.error(k.name, impl_->info.name);

  // Guards catch every out-of-bounds 32-bit index when each buffer is guarded and a negative
  // signed index, zero-extended, is past its end (at most 2^31 elements).
  bool guarded = true;
  GuardRanges guards;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!k.params[i].is_buffer())
      continue;
    const HostBuffer& b = *args[i].buffer;
    if (!b.guarded() || b.size() > (uint64_t{1} << 31))
      guarded = false;
    else
      guards.push_back({reinterpret_cast<uintptr_t>(b.data()) + b.size_bytes(),
                        reinterpret_cast<uintptr_t>(b.guard_end())});
  }

  std::atomic<uint32_t> stop{0};
  cpu_detail::LaunchArgs launch_args(k, grid, args, &stop);
  codegen::llvm::LlvmOptions code;
  code.check_arith = options.check_bounds;
  code.memory = options.check_bounds || !guarded || impl_->options.memory == MemoryMode::Explicit
                    ? codegen::llvm::MemoryChecks::Explicit
                    : codegen::llvm::MemoryChecks::Guarded;
  code.cancellable = cancellable;
  code.single_rounding = impl_->options.single_rounding;
  code.noalias_buffers = launch_args.buffers_distinct();
  code.grid_fits_u32 = grid.total_groups() * k.workgroup_lanes() <= (uint64_t{1} << 32);
  if (impl_->options.memory == MemoryMode::UncheckedBaseline && !options.check_bounds)
    code.memory = codegen::llvm::MemoryChecks::None;
  bool hit = false;
  auto get_code = [&](const codegen::llvm::LlvmOptions& o, bool* memo_hit) {
    MemoKey key{kernel.hash(), impl_->info.name, impl_->registry->budget_key(k.name),
                o.variant() | (impl_->epoch.load(std::memory_order_relaxed) << 32)};
    return impl_->memo.get(
        key, [&] { return impl_->compile(kernel, o); }, memo_hit);
  };
  std::shared_ptr<Compiled> compiled = get_code(code, &hit);

  // The written buffers are saved unless no failure is possible: no timeout or cancel flag, no
  // arithmetic checks, and a proof that every access is in bounds (bounds.hpp), remembered for
  // the kernel and these shapes, so that repeated launches do not analyse again. The unchecked
  // baseline neither saves nor proves, as the code before the checks did not.
  std::optional<cpu_detail::Snapshot> snapshot;
  bool may_fail = false;
  if (code.memory != codegen::llvm::MemoryChecks::None) {
    may_fail = cancellable || options.check_bounds ||
               !cpu_detail::provably_in_bounds_cached(kernel, grid, args);
    if (!may_fail)
      impl_->proven_in_bounds.fetch_add(1, std::memory_order_relaxed);
  }
  if (may_fail) {
    ++impl_->snapshots;
    try {
      snapshot.emplace(k, args, impl_->pool, options.deterministic ? 1 : options.threads);
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::Device, "out of host memory saving the written buffers",
                  {.kernel = k.name});
    }
  }
  std::unique_ptr<Watchdog::Token> watched;
  if (cancellable)
    watched = impl_->watchdog().watch(cancel, stop);

  uint64_t groups = grid.total_groups();
  std::atomic<bool> no_scratch{false}, faulted{false}, cancelled{false};
  std::atomic<uintptr_t> fault_address{0};
  // Runs `c` over all workgroups; `parallel` on the pool.
  auto run = [&](const Compiled& c, bool parallel) {
    no_scratch = faulted = cancelled = false;
    auto run_range = [&](uint64_t begin, uint64_t end) {
      if (stop.load(std::memory_order_relaxed)) {
        cancelled = true;
        return false;
      }
      void* scratch = thread_scratch(c.shared_bytes);
      if (c.shared_bytes && !scratch) {
        no_scratch = true;
        return false;
      }
      uintptr_t fault = 0;
      int32_t r =
          cpu_detail::run_guarded(c.entry, &launch_args.get(), begin, end, scratch, guards, &fault);
      if (r == -1) {
        faulted = true;
        fault_address = fault;
      } else if (r == 2) {
        cancelled = true;
      }
      return r == 0;
    };
    unsigned threads = options.deterministic ? 1 : options.threads;
    bool ok;
    if (!parallel || threads == 1 || groups == 1 || impl_->pool.size() == 1) {
      support::DefaultFloatEnvironment env;
      ok = run_range(0, groups);
    } else {
      unsigned n = threads == 0 ? impl_->pool.size() : threads;
      uint64_t chunk = std::max<uint64_t>(1, groups / (uint64_t{n} * 8));
      ok = impl_->pool.run(groups, chunk, threads, run_range);
    }
    if (ok)
      return Outcome::Ok;
    if (cancelled)
      return Outcome::Cancelled;
    if (no_scratch)
      return Outcome::NoScratch;
    return faulted ? Outcome::Faulted : Outcome::Failed;
  };

  auto run_start = Clock::now();
  Outcome outcome = run(*compiled, true);
  auto run_end = Clock::now();
  if (outcome != Outcome::Ok) {
    // Every failure: the caller's buffers as they were, then the error. Without a snapshot
    // (bounds.hpp proved that no access can fail) a failure is a bug of that proof.
    if (!snapshot)
      throw Error(ErrorKind::Internal,
                  "a launch proved free of out-of-bounds accesses failed; buffers may be "
                  "partly written",
                  {.kernel = k.name});
    snapshot->restore();
    auto fail = [&](Outcome o) {
      if (o == Outcome::Cancelled)
        throw cancel.error(k.name, impl_->info.name);
      if (o == Outcome::NoScratch)
        throw Error(ErrorKind::Device,
                    "out of memory for " + std::to_string(compiled->shared_bytes) +
                        " bytes of shared memory scratch",
                    {.kernel = k.name});
    };
    fail(outcome);
    if (outcome == Outcome::Faulted) {
      ++impl_->guard_faults;
      spdlog::debug("cpu: kernel '{}' faulted in the guard of buffer {}; rerunning with explicit "
                    "checks",
                    k.name, faulting_buffer(k, args, fault_address.load()));
    }
    // A recorded failure of a parallel run, or any failure of guarded code: rerun on one thread
    // with explicit, recording checks to report the interpreter's error (the lowest workgroup's).
    std::shared_ptr<Compiled> checked = compiled;
    if (code.memory != codegen::llvm::MemoryChecks::Explicit) {
      codegen::llvm::LlvmOptions explicit_code = code;
      explicit_code.memory = codegen::llvm::MemoryChecks::Explicit;
      bool unused = false;
      checked = get_code(explicit_code, &unused);
    }
    launch_args.reset();
    Outcome again = run(*checked, false);
    // A guard fault whose checked rerun succeeds: guarded code addresses a buffer index `x + c`
    // as zext(x) + c (codegen/llvm lower_memory.cpp), which lands in the guard where x + c wraps
    // past 2^32 to a valid index. The rerun computed the interpreter's wrapping index: its
    // results are the launch's.
    if (again == Outcome::Ok && outcome == Outcome::Faulted) {
      spdlog::debug("cpu: kernel '{}': the checked rerun after a guard fault succeeded (a "
                    "wrapping index); its results stand",
                    k.name);
    } else {
      snapshot->restore();
      fail(again);
      if (again == Outcome::Failed)
        throw launch_error(k, *checked, launch_args.error());
      std::string where = outcome == Outcome::Faulted
                              ? "an access faulted in the guard of buffer " +
                                    faulting_buffer(k, args, fault_address.load())
                              : "a bounds check failed";
      throw Error(ErrorKind::Internal, where + ", but the checked rerun of the launch did not fail",
                  {.kernel = k.name});
    }
  }

  LaunchResult result;
  result.device_ms = ms_between(run_start, run_end);
  result.compile_ms = hit ? 0 : compiled->compile_ms;
  result.memo_hit = hit;
  result.budget = compiled->budget;
  result.wall_ms = ms_between(start, Clock::now());
  return result;
}

std::unique_ptr<Device> make_cpu_device(policy::Registry* registry, CpuDeviceOptions options) {
  return std::make_unique<CpuDevice>(registry, options);
}

std::unique_ptr<Device> make_cpu_device(policy::Registry* registry) {
  return make_cpu_device(registry, CpuDeviceOptions{});
}

} // namespace halfway::rt
