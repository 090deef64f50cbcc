// A launch: check the arguments, save the writable buffers, run the batches of workgroups on the
// workers, pick the error of the lowest failing workgroup, and put the saved buffers back when
// anything failed.
#include "backup.hpp"
#include "exec.hpp"
#include "halfway/interp/interp.hpp"
#include "workers.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <mutex>
#include <thread>

namespace halfway::interp {

namespace {

unsigned thread_count(const Options& o, uint64_t batches) {
  if (o.deterministic)
    return 1;
  uint64_t t = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min(t, batches)));
}

} // namespace

Stats run(const ir::VerifiedKernel& kernel, const rt::Grid& grid, std::span<const rt::Arg> args,
          const Options& options) {
  const auto start = std::chrono::steady_clock::now();
  const ir::Kernel& k = kernel.kernel();
  rt::check_args(k, grid, args);
  const Program program = compile(kernel, options);
  const uint64_t groups = grid.total_groups();
  const uint64_t per_batch = program.batch_groups;
  const uint64_t batches = (groups + per_batch - 1) / per_batch;
  const unsigned threads = thread_count(options, batches);

  Backup backup;
  backup.save(k, args, threads);
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

  // Batches are taken in increasing order; once a workgroup failed, batches that start after it
  // cannot change which error is reported and are skipped.
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> failed_at{std::numeric_limits<uint64_t>::max()};
  std::mutex mutex;
  std::optional<BatchError> error;
  std::vector<std::vector<ShadowRecord>> records(options.shadow ? batches : 0);
  std::vector<std::vector<AccumulationRecord>> accumulations(options.shadow ? batches : 0);
  auto work = [&](unsigned) {
    Exec exec(launch);
    for (;;) {
      const uint64_t b = next.fetch_add(1);
      if (b >= batches)
        return;
      const uint64_t first = b * per_batch;
      if (first > failed_at.load())
        return;
      const auto count = static_cast<uint32_t>(std::min(per_batch, groups - first));
      std::optional<BatchError> e = exec.run_batch(first, count);
      if (options.shadow)
        records[b] = std::move(exec.shadow());
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
    run_workers(threads, work);
  } catch (...) {
    backup.restore(threads);
    throw;
  }
  if (error) {
    backup.restore(threads);
    throw error->error;
  }

  Stats stats;
  stats.workgroups = groups;
  stats.invocations = groups * program.wg_lanes;
  stats.threads = threads;
  for (auto& r : records)
    stats.shadow.insert(stats.shadow.end(), std::make_move_iterator(r.begin()),
                        std::make_move_iterator(r.end()));
  for (auto& r : accumulations)
    stats.accumulations.insert(stats.accumulations.end(), std::make_move_iterator(r.begin()),
                               std::make_move_iterator(r.end()));
  stats.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

} // namespace halfway::interp
