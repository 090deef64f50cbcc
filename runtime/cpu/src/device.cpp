#include "halfway/runtime/cpu/device.hpp"

#include "halfway/codegen/llvm/host.hpp"
#include "halfway/codegen/llvm/lower.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/runtime/cpu/thread_pool.hpp"
#include "halfway/runtime/factories.hpp"
#include "halfway/runtime/memo.hpp"
#include "jit.hpp"
#include "launch_args.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <spdlog/spdlog.h>
#include <thread>

namespace halfway::rt {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Compiled {
  codegen::EntryFn entry = nullptr;
  std::vector<codegen::CheckSite> sites;
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

std::string describe_host(const codegen::HostTarget& host, unsigned threads) {
  return "LLVM 19 ORC JIT for " + host.cpu + " (" + host.triple + "), " + std::to_string(threads) +
         " threads\n"
         "vector: " +
         std::string(host.avx512 ? "AVX-512" : "AVX2 or narrower") + (host.f16c ? ", F16C" : "") +
         "\n"
         "float controls: IEEE 754, round to nearest even, subnormals preserved (MXCSR 0x1f80)\n"
         "fuses: only where the precision budget allows (contract), never otherwise";
}

} // namespace

struct CpuDevice::Impl {
  policy::Registry* registry;
  CpuDeviceOptions options;
  DeviceInfo info;
  ThreadPool pool;
  std::once_flag jit_once;
  std::unique_ptr<cpu_detail::Jit> jit;
  LaunchMemo<Compiled> memo;
  std::atomic<uint64_t> next_entry{0};
  std::atomic<uint64_t> epoch{0}; // clear_memo(): part of every key, so old entries never match

  Impl(policy::Registry* r, CpuDeviceOptions o)
      : registry(r ? r : &policy::global_registry()), options(o), pool(o.threads) {
    info.name = "cpu";
    info.description = describe_host(codegen::HostTarget::host(), pool.size());
    info.may_fuse = true;
  }

  cpu_detail::Jit& the_jit() {
    std::call_once(jit_once, [&] { jit = std::make_unique<cpu_detail::Jit>(); });
    return *jit;
  }

  std::shared_ptr<Compiled> compile(const ir::VerifiedKernel& kernel,
                                    const codegen::LlvmOptions& options) {
    auto start = Clock::now();
    auto out = std::make_shared<Compiled>();
    out->budget = registry->budget(kernel.name());
    std::string entry = "halfway_kernel_" + std::to_string(next_entry++);
    codegen::LoweredKernel lowered =
        codegen::lower_kernel(kernel, out->budget, options, codegen::HostTarget::host(), entry);
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

namespace {

// The error as the interpreter words it (interp/src/memory.cpp and eval_int.cpp).
Error launch_error(const ir::Kernel& k, const Compiled& c, const codegen::ErrorRecord& r) {
  if (r.site >= c.sites.size())
    return Error(ErrorKind::Internal, "the CPU device recorded an unknown failure",
                 {.kernel = k.name});
  const codegen::CheckSite& site = c.sites[r.site];
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
    if (negative) {
      message = site.what + " at negative index -" + std::to_string(0 - r.index) + " (length " +
                std::to_string(r.length) + ")";
    } else {
      ctx.index = r.index;
      message = site.what + " out of bounds: index " + std::to_string(r.index) + ", length " +
                std::to_string(r.length);
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

LaunchResult CpuDevice::launch(const ir::VerifiedKernel& kernel, const Grid& grid,
                               std::span<const Arg> args, const LaunchOptions& options) {
  auto start = Clock::now();
  const ir::Kernel& k = kernel.kernel();
  check_args(k, grid, args);
  cpu_detail::LaunchArgs launch_args(k, grid, args, options.check_bounds);

  codegen::LlvmOptions code;
  code.check_bounds = options.check_bounds;
  code.single_rounding = impl_->options.single_rounding;
  code.noalias_buffers = launch_args.buffers_distinct();
  code.grid_fits_u32 = grid.total_groups() * k.workgroup_lanes() <= (uint64_t{1} << 32);
  MemoKey key{kernel.hash(), impl_->info.name, impl_->registry->budget_key(k.name),
              code.variant() | (impl_->epoch.load(std::memory_order_relaxed) << 32)};
  bool hit = false;
  std::shared_ptr<Compiled> compiled = impl_->memo.get(
      key, [&] { return impl_->compile(kernel, code); }, &hit);

  uint64_t groups = grid.total_groups();
  unsigned threads = options.deterministic ? 1 : options.threads;
  auto run_start = Clock::now();
  std::atomic<bool> no_scratch{false};
  auto run_range = [&](uint64_t begin, uint64_t end) {
    void* scratch = thread_scratch(compiled->shared_bytes);
    if (compiled->shared_bytes && !scratch) {
      no_scratch = true;
      return false;
    }
    return compiled->entry(&launch_args.get(), begin, end, scratch) == 0;
  };
  bool ok;
  if (threads == 1 || groups == 1 || impl_->pool.size() == 1) {
    DefaultFloatEnvironment env;
    ok = run_range(0, groups);
  } else {
    unsigned n = threads == 0 ? impl_->pool.size() : threads;
    uint64_t chunk = std::max<uint64_t>(1, groups / (uint64_t{n} * 8));
    ok = impl_->pool.run(groups, chunk, threads, run_range);
    if (!ok && !no_scratch) {
      // Report the failure the interpreter reports: the first in workgroup order.
      launch_args.reset();
      DefaultFloatEnvironment env;
      ok = run_range(0, groups);
    }
  }
  auto run_end = Clock::now();
  if (no_scratch)
    throw Error(ErrorKind::Device,
                "out of memory for " + std::to_string(compiled->shared_bytes) +
                    " bytes of shared memory scratch",
                {.kernel = k.name});
  if (!ok)
    throw launch_error(k, *compiled, launch_args.error());
  launch_args.commit();

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
