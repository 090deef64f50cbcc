// A launch: check the arguments, save the writable buffers, run the batches of workgroups on the
// workers, pick the error of the lowest failing workgroup, and put the saved buffers back when
// anything failed.
#include "backup.hpp"
#include "exec.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

namespace halfway::interp {

namespace {

unsigned thread_count(const Options& o, uint64_t batches, uint64_t worker_bytes) {
  if (o.deterministic)
    return 1;
  uint64_t t = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  t = std::min(t, kMaxTotalWorkerBytes / std::max<uint64_t>(worker_bytes, 1));
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min(t, batches)));
}

[[noreturn]] void limit(const ir::Kernel& k, const std::string& message) {
  throw Error(ErrorKind::Limit, message + " (device interp)", {.kernel = k.name});
}

// The sizes a launch works with, checked before anything is allocated.
void check_sizes(const ir::Kernel& k, const rt::Grid& grid, const Program& p) {
  uint64_t groups = 0, lanes = 0;
  if (__builtin_mul_overflow(uint64_t{grid.groups[0]} * grid.groups[1], grid.groups[2], &groups) ||
      __builtin_mul_overflow(groups, uint64_t{p.wg_lanes}, &lanes))
    limit(k, "grid of " + std::to_string(grid.groups[0]) + " x " + std::to_string(grid.groups[1]) +
                 " x " + std::to_string(grid.groups[2]) + " workgroups of " +
                 std::to_string(p.wg_lanes) + " lanes has more than 2^64 invocations");
  std::optional<uint64_t> shared = rt::shared_bytes(k);
  if (!shared || *shared > kMaxSharedBytes)
    limit(k, "shared memory of " + (shared ? std::to_string(*shared) : std::string("over 2^64")) +
                 " bytes exceeds the interpreter's " + std::to_string(kMaxSharedBytes));
  std::optional<uint64_t> worker = Exec::bytes_needed(p);
  if (!worker || *worker > kMaxWorkerBytes)
    limit(k, "the interpreter would need " +
                 (worker ? std::to_string(*worker) : std::string("over 2^64")) +
                 " bytes per worker for this kernel (registers and shared memory); the limit is " +
                 std::to_string(kMaxWorkerBytes));
}

} // namespace

Stats run(const ir::VerifiedKernel& kernel, const rt::Grid& grid, std::span<const rt::Arg> args,
          const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  const ir::Kernel& k = kernel.kernel();
  rt::check_args(k, grid, args);
  const Program program = compile(kernel, options);
  check_sizes(k, grid, program);
  if (options.cancel && options.cancel->expired())
    throw options.cancel->error(k.name, "interp");
  const uint64_t groups = grid.total_groups();
  const uint64_t per_batch = program.batch_groups;
  const uint64_t batches = (groups + per_batch - 1) / per_batch;
  const unsigned threads = thread_count(options, batches, *Exec::bytes_needed(program));

  support::ThreadPool pool(threads);
  Backup backup;
  backup.save(k, args, pool, threads);
  Launch launch;
  launch.program = &program;
  launch.grid = grid;
  launch.buffers.resize(args.size());
  launch.scalars.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (k.params[i].is_buffer())
      launch.buffers[i] = {args[i].buffer->data(), args[i].buffer->size()};
    else
      launch.scalars[i] = args[i].scalar;
  }
  // Written buffers start as the points of their contents (zeroed intervals for integers), filled
  // on the launch's threads: 2^24 elements are 400 MB of intervals.
  if (options.intervals) {
    launch.intervals.resize(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      const ir::Param& param = k.params[i];
      if (!param.is_buffer() || param.access == ir::Access::Read)
        continue;
      const rt::HostBuffer& b = *args[i].buffer;
      ElementIntervals& out = launch.intervals[i] = ElementIntervals(b.size());
      if (!ir::is_float(param.type))
        continue;
      const num::Format f = ir::format_of(param.type);
      pool.run(b.size(), uint64_t{1} << 16, threads, [&](uint64_t first, uint64_t last) {
        if (f == num::Format::F32) { // the common case, without a call per element
          const std::byte* data = b.data();
          for (uint64_t e = first; e < last; ++e) {
            uint32_t bits;
            std::memcpy(&bits, data + e * sizeof bits, sizeof bits);
            // Integer code, not a float conversion, which a caller's DAZ would flush.
            const double d = num::to_double(num::Format::F32, bits);
            out[e] = {d, d, false};
          }
        } else {
          for (uint64_t e = first; e < last; ++e) {
            const double v = num::to_double(f, b.get_bits(e));
            out[e] = {v, v, false};
          }
        }
        return true;
      });
    }
  }

  // Batches are taken in increasing order; once a workgroup failed, batches that start after it
  // cannot change which error is reported and are skipped.
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> failed_at{std::numeric_limits<uint64_t>::max()};
  std::mutex mutex;
  std::optional<BatchError> error;
  std::vector<std::vector<ShadowRecord>> records(options.shadow ? batches : 0);
  std::vector<std::vector<AccumulationRecord>> accumulations(options.shadow ? batches : 0);
  std::atomic<uint64_t> fused{0};
  auto work = [&] {
    if (next.load() >= batches) // (a thread that comes back for a second share finds none left)
      return;
    Exec exec(launch);
    // Counted on every way out of the worker, Stopped included.
    struct Count {
      const Exec& x;
      std::atomic<uint64_t>& to;
      ~Count() { to += x.fused_loops(); }
    } count{exec, fused};
    for (;;) {
      const uint64_t b = next.fetch_add(1);
      if (b >= batches)
        return;
      const uint64_t first = b * per_batch;
      if (first > failed_at.load())
        return;
      const auto count = static_cast<uint32_t>(std::min(per_batch, groups - first));
      std::optional<BatchError> e;
      try {
        e = exec.run_batch(first, count);
      } catch (const Stopped&) {
        return;
      }
      if (options.shadow && !e) { // a failed batch's records are cut short, and the launch throws
        const std::vector<ShadowLanes> lanes = exec.shadow().views(first, program.wg_lanes);
        if (options.sink) {
          options.sink->take(lanes);
        } else {
          size_t total = 0;
          for (const ShadowLanes& l : lanes)
            total += l.count;
          records[b].reserve(total);
          for (const ShadowLanes& l : lanes)
            for (size_t k = 0; k < l.count; ++k)
              records[b].push_back(l.record(k));
        }
      }
      exec.shadow().clear();
      if (options.shadow)
        accumulations[b] = std::move(exec.accumulations());
      exec.accumulations().clear();
      if (!e)
        continue;
      std::lock_guard lock(mutex);
      if (!error || e->workgroup < error->workgroup) {
        failed_at = e->workgroup;
        error.emplace(std::move(*e));
      }
    }
  };
  try {
    pool.run(threads, 1, threads, [&](uint64_t, uint64_t) {
      work();
      return true;
    });
  } catch (...) {
    backup.restore();
    throw;
  }
  if (const StopReason stop = launch.stop.load(); stop != StopReason::None) {
    backup.restore();
    if (stop == StopReason::Cancelled)
      throw options.cancel->error(k.name, "interp");
    limit(k, "the launch ran more than its budget of " + std::to_string(options.max_steps) +
                 " lockstep steps");
  }
  if (error) {
    backup.restore();
    throw error->error;
  }

  Stats stats;
  stats.workgroups = groups;
  stats.invocations = groups * program.wg_lanes;
  stats.threads = threads;
  // Sized once (records run to gigabytes on large grids), each batch freed once copied.
  size_t total = 0;
  for (const auto& r : records)
    total += r.size();
  stats.shadow.reserve(total);
  for (auto& r : records) {
    stats.shadow.insert(stats.shadow.end(), r.begin(), r.end());
    std::vector<ShadowRecord>().swap(r);
  }
  for (auto& r : accumulations)
    stats.accumulations.insert(stats.accumulations.end(), std::make_move_iterator(r.begin()),
                               std::make_move_iterator(r.end()));
  stats.intervals = std::move(launch.intervals);
  stats.undecided_lanes = launch.undecided_lanes.load();
  stats.fused_loops = fused.load();
  stats.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

} // namespace halfway::interp
