#pragma once
// The executor of one lockstep batch: a whole workgroup (or, for kernels without barriers and
// shared memory, several whole workgroups) whose lanes run every statement and every expression
// node together under an active-lane mask. One Exec belongs to one worker thread and is reused
// for every batch that worker runs.

#include "halfway/support/error.hpp"
#include "lanes.hpp"
#include "program.hpp"
#include "shadow_columns.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <string>

namespace halfway::interp {

// A buffer parameter as the launch sees it: the caller's storage, written in place (backup.hpp).
struct BufferView {
  std::byte* data = nullptr;
  uint64_t length = 0;
};

// Why a launch stopped early (Launch::stop): its Cancel expired, or it ran out of steps.
enum class StopReason : uint8_t { None, Cancelled, Budget };

// Thrown by Exec::poll() once the launch must stop; the worker catches it and returns.
struct Stopped {};

struct Launch {
  const Program* program = nullptr;
  std::vector<BufferView> buffers; // per parameter; unused for scalars
  std::vector<uint64_t> scalars;   // per parameter; unused for buffers
  rt::Grid grid;
  // With Options::intervals: per parameter, the element intervals of written buffers (run.cpp).
  mutable std::vector<ElementIntervals> intervals;
  mutable std::atomic<uint64_t> undecided_lanes{0};
  // Shared by the workers: the steps taken so far (flushed at each poll) and the stop request.
  mutable std::atomic<uint64_t> steps{0};
  mutable std::atomic<StopReason> stop{StopReason::None};

  // Sets the stop request (the first reason wins) and returns true when the launch must stop.
  bool should_stop(uint64_t new_steps) const;
};

class IntervalState;

struct BatchError {
  uint64_t workgroup;
  Error error;
};

// The bookkeeping of one accumulation local on one lane (shadow.hpp, AccumulationRecord).
struct AccLane {
  enum State : uint8_t { Undefined, Valid, Unbounded };
  uint64_t steps = 0, terms = 0;
  uint32_t depth = 0;
  State state = Undefined;
  double sum = 0;
  // Underflow (AccumulationRecord::underflow_weight): `weight` as there; `big` sums, over the
  // monomials, the product of max(1, |leaf|) (what a later product scales an underflow by).
  double weight = 0, big = 0;
};

enum class SharedAccess : uint8_t { Read, Write, Atomic };

class Exec {
public:
  explicit Exec(const Launch& launch);
  ~Exec();
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;

  // Runs workgroups [first, first + count); count <= program.batch_groups. Returns the first error
  // of the lowest failing workgroup, if any failed. Throws Stopped when the launch was cancelled
  // or ran out of steps.
  std::optional<BatchError> run_batch(uint64_t first, uint32_t count);

  // The memory one executor of `p` allocates, or nullopt when it does not fit 64 bits.
  static std::optional<uint64_t> bytes_needed(const Program& p);

  // Counts one step; every kPollSteps steps, polls the launch's cancel and budget and throws
  // Stopped when the launch must stop.
  void tick() {
    if (++ticks_ >= poll_at_)
      poll();
  }
  void poll();

  // ---- for the evaluation functions -------------------------------------------------------
  const Program& program() const { return p_; }
  const Launch& launch() const { return launch_; }
  const Options& options() const { return p_.options; }
  template <class T> T* reg(uint32_t r) {
    return reinterpret_cast<T*>(reinterpret_cast<std::byte*>(regs_.get()) +
                                static_cast<size_t>(r) * stride_);
  }
  // Lanes in this batch, and that count rounded up to 16: loops that ignore the mask (pure ops
  // whose result is discarded on inactive lanes) run to width() so they vectorise cleanly.
  uint32_t lanes() const { return n_; }
  uint32_t width() const { return width_; }
  const LaneMask& mask() const { return *mask_; }
  uint64_t first_workgroup() const { return first_; }
  uint64_t workgroup_of(uint32_t lane) const { return first_ + lane / p_.wg_lanes; }
  uint32_t local_of(uint32_t lane) const { return lane % p_.wg_lanes; }

  // Reports undefined behaviour at `lane`: records the error when it is the first of the lane's
  // workgroup, and stops that workgroup (its lanes leave every mask). `node` is the expression
  // node, if any; the context gets the kernel, node, line, workgroup and lane filled in.
  void fail(uint32_t lane, ErrorKind kind, const std::string& message, ErrorContext context,
            ir::ExprId node = ir::kNone, uint32_t line = 0);

  // Shared arrays of the current workgroup, and the race check every access goes through.
  std::byte* shared(uint32_t id) { return shared_[id].data(); }
  // Private array `id`, element-major: element e of batch lane l is slot e * capacity() + l, so
  // that lanes accessing one element (an index that is a loop counter) touch consecutive slots.
  std::byte* private_array(uint32_t id) { return privates_[id].data(); }
  // Lanes the registers and private arrays have room for: a full batch, rounded up to 16.
  uint32_t capacity() const { return capacity_; }
  // Returns false (after fail()) when the access races with another lane's since the last barrier.
  // Kernels with shared memory run one workgroup per batch, so the lane is the local index.
  //
  // Reads are checked lazily. A read can only race with another lane's write or atomic in the same
  // barrier interval, so while an array has had no write or atomic since the last barrier
  // ("clean"), its reads cannot fail and are only appended to a log. The first write or atomic of
  // the interval replays the log into the race cells, in the order the reads happened, which
  // leaves the cells exactly as checking every read at once would have; from then on, until the
  // next barrier, every access of that array is checked at once. A barrier drops the logs. Phases
  // that only read shared memory (a matmul's inner loop over its tiles) thus cost a store per
  // read instead of a look-up and update of a cell. Intervals that read and write (a tree
  // reduction's steps) would pay for the log and its replay, so an interval starts checking an
  // array at once when the previous interval started by the same barrier wrote it (`eager_`).
  bool shared_access(uint32_t id, uint64_t index, uint32_t lane, SharedAccess kind, ir::ExprId node,
                     uint32_t line) {
    SharedLog& log = logs_[id];
    if (log.dirty != epoch_) {
      if (kind == SharedAccess::Read) {
        log_read(log, id, static_cast<uint32_t>(index), lane);
        return true;
      }
      replay(id);
    }
    RaceCell& c = races_[id][index];
    const auto me = static_cast<int16_t>(lane);
    if (c.epoch != epoch_) {
      c = RaceCell{epoch_};
      c.record(kind, me);
      return true;
    }
    if (c.allows(kind, me)) {
      c.record(kind, me);
      return true;
    }
    report_race(c, id, index, lane, kind, node, line);
    return false;
  }

  // The reads by every lane of `linear` (lane i reads element linear[i]) when all lanes are
  // active, as shared_access would check them one by one; returns false when one of them raced.
  bool shared_reads(uint32_t id, const uint32_t* linear, ir::ExprId node) {
    SharedLog& log = logs_[id];
    const uint32_t n = n_;
    if (log.dirty != epoch_ && log.size + log.generated + n <= kMaxLoggedReads) {
      log.allocate();
      uint32_t* __restrict index = log.index.get() + log.size;
      uint32_t* __restrict lane = log.lane.get() + log.size;
      for (uint32_t i = 0; i < n; ++i) {
        index[i] = linear[i];
        lane[i] = i;
      }
      log.size += n;
      return true;
    }
    bool ok = true;
    for (uint32_t i = 0; i < n_; ++i)
      ok &= shared_access(id, linear[i], i, SharedAccess::Read, node, 0);
    return ok;
  }

  // The writes by every lane of `linear` (lane i writes element linear[i]) when all lanes are
  // active, checked in lane order as shared_access would check them one by one; store(i) makes
  // lane i's write where it does not race. The first write makes the array dirty (replaying its
  // read log), so each lane's check is its cell's alone, inline: a tiled matmul's tile stores
  // spent a sixth of the interpreter's time in a call of shared_access per lane.
  template <class Store>
  void shared_writes(uint32_t id, const uint32_t* linear, uint32_t line, Store&& store) {
    if (logs_[id].dirty != epoch_)
      replay(id);
    RaceCell* cells = races_[id].data();
    for (uint32_t i = 0; i < n_; ++i) {
      RaceCell& c = cells[linear[i]];
      const auto me = static_cast<int16_t>(i);
      if (c.epoch != epoch_) {
        c = RaceCell{epoch_};
      } else if (!c.allows(SharedAccess::Write, me)) {
        report_race(c, id, linear[i], i, SharedAccess::Write, ir::kNone, line);
        continue;
      }
      c.record(SharedAccess::Write, me);
      store(i);
    }
  }

  // One 32-bit element per lane of the batch, for the element numbers of an array access.
  uint32_t* elements() { return elements_.data(); }
  // Four f32 arrays of width() lanes (k < 4), for ops of narrower float formats computed in f32.
  float* wide(uint32_t k) { return wide_.data() + size_t{k} * capacity_; }
  // For an f16 or bf16 constant or scalar parameter register, its value widened to f32 on every
  // lane (set up once per launch); null for any other register.
  const float* fixed_wide(uint32_t r) const {
    return r < fixed_wide_.size() && !fixed_wide_[r].empty() ? fixed_wide_[r].data() : nullptr;
  }
  // kSiteArrays f64 arrays of width() lanes (k < kSiteArrays): the exact values of a narrowing
  // site's leaves, gathered for the batch (exact.cpp); allocated when the program has such sites.
  static constexpr uint32_t kSiteArrays = 4;
  double* site_lanes(uint32_t k) { return site_lanes_.data() + size_t{k} * capacity_; }

  ShadowColumns& shadow() { return shadow_; }
  // Scratch for the shadow's dense path (exact.cpp): the lanes it leaves to the scalar code.
  std::vector<uint32_t>& special_lanes() { return special_lanes_; }
  std::vector<AccumulationRecord>& accumulations() { return acc_records_; }
  AccLane* acc_lanes() { return acc_lanes_.data(); } // lane * tracked locals + slot
  // The partial sum each element of tracked shared array `slot` (AccPlan::shared) holds; reset
  // (Undefined) with the shared memory at each batch, one workgroup's.
  std::vector<AccLane>& acc_shared(uint32_t slot) { return acc_shared_[slot]; }
  std::vector<AccLane>& acc_scratch() { return acc_scratch_; }
  bool stopped(uint32_t lane) const { return stopped_lanes_ && stopped_[lane]; }
  // Dot loops this executor ran fused (Stats::fused_loops).
  uint64_t fused_loops() const { return fused_; }
  // With Options::intervals, the interval shadow (interval.hpp); null otherwise.
  IntervalState* intervals() { return iv_.get(); }

private:
  struct LoopFrame {
    LaneMask* continued;
  };
  // The accesses to one shared element since the last barrier (lanes are local indices).
  struct RaceCell {
    uint32_t epoch = 0;
    int16_t writer = -1;
    int16_t readers[2] = {-1, -1}; // the first two distinct readers
    int16_t atomics[2] = {-1, -1}; // the first two distinct lanes using atomics

    static bool other(int16_t who, int16_t me) { return who >= 0 && who != me; }
    static int16_t other_of(const int16_t (&two)[2], int16_t me) {
      return other(two[0], me) ? two[0] : other(two[1], me) ? two[1] : -1;
    }
    bool allows(SharedAccess kind, int16_t me) const {
      if (other(writer, me))
        return false;
      if (kind != SharedAccess::Read && other_of(readers, me) >= 0)
        return false;
      return kind == SharedAccess::Atomic || other_of(atomics, me) < 0;
    }
    void record(SharedAccess kind, int16_t me) {
      auto add = [me](int16_t(&two)[2]) {
        if (two[0] < 0)
          two[0] = me;
        else if (two[0] != me && two[1] < 0)
          two[1] = me;
      };
      if (kind == SharedAccess::Write)
        writer = me;
      else if (kind == SharedAccess::Read)
        add(readers);
      else
        add(atomics);
    }
  };
  // The reads of one shared array in the current barrier interval while it is clean (see
  // shared_access), and the interval in which it became dirty.
  struct SharedLog {
    uint32_t dirty = 0; // the last epoch_ in which the array was written
    size_t size = 0;    // explicit entries (index, lane)
    // Reads a fused dot loop (dot.cpp) logged without writing them out, `at` explicit entries
    // in: per iteration j and load i of the loop on this array, lane l read element
    // bases[i * lanes + l] + offsets[j * loads + i]. Replay generates them in that order, which
    // is the general path's.
    struct Deferred {
      size_t at = 0;
      uint32_t lanes = 0, loads = 0;
      std::vector<uint32_t> bases, offsets;
    };
    std::vector<Deferred> deferred; // the first `deferred_used` are this interval's
    size_t deferred_used = 0;
    size_t generated = 0; // reads the deferred entries stand for
    // The element and the lane of each read; kMaxLoggedReads each, allocated at the first read.
    std::unique_ptr<uint32_t[]> index, lane;
    void allocate() {
      if (!index) {
        index.reset(new uint32_t[kMaxLoggedReads]);
        lane.reset(new uint32_t[kMaxLoggedReads]);
      }
    }
  };
  // Past this many logged reads (512 KiB) an array is replayed and checked eagerly for the rest of
  // the interval, so that a long read-only loop does not grow the log without bound.
  static constexpr size_t kMaxLoggedReads = size_t{1} << 16;

public:
  // The most iterations a fused dot loop may have (its counter values are computed first).
  static constexpr uint32_t kMaxDotIterations = 1u << 14;
  static constexpr size_t kMinDeferredReads = 64;

private:
  void log_read(SharedLog& log, uint32_t id, uint32_t index, uint32_t lane) {
    if (log.size + log.generated >= kMaxLoggedReads)
      return replay(id);
    log.allocate();
    log.index[log.size] = index;
    log.lane[log.size] = lane;
    ++log.size;
  }
  // Records the logged reads of array `id` in its race cells (reads of a clean array cannot race)
  // and makes it dirty until the next barrier.
  void replay(uint32_t id);
  // A barrier (number `site`, 0 at the batch's start): accesses before it no longer race with
  // those after it.
  void new_interval(uint32_t site) {
    const size_t arrays = logs_.size();
    for (size_t a = 0; a < arrays; ++a)
      eager_[interval_site_ * arrays + a] = logs_[a].dirty == epoch_;
    ++epoch_;
    interval_site_ = site;
    for (size_t a = 0; a < arrays; ++a) {
      logs_[a].size = 0;
      logs_[a].generated = 0;
      logs_[a].deferred_used = 0;
      if (eager_[site * arrays + a])
        logs_[a].dirty = epoch_;
    }
  }
  void report_race(const RaceCell& c, uint32_t id, uint64_t index, uint32_t lane, SharedAccess kind,
                   ir::ExprId node, uint32_t line);

  void setup_fixed();
  void setup_lanes();
  void block(const std::vector<CStmt>& stmts, LaneMask& m);
  void stmt(const CStmt& s, LaneMask& m);
  void eval(const std::vector<uint32_t>& nodes, const LaneMask& m);
  void assign(uint32_t local, uint32_t from_reg, const LaneMask& m);
  void if_stmt(const CStmt& s, LaneMask& m);
  void while_stmt(const CStmt& s, LaneMask& m);
  void for_stmt(const CStmt& s, LaneMask& m);
  // Runs a dot loop (program.hpp, DotLoop) fused, after its counter was set; false, having
  // changed nothing, when its preconditions do not hold and the general path must run it.
  bool dot_loop(const CStmt& s, const LaneMask& m);
  void dot_indices(const CStmt& cs, const DotLoop& d, const LaneMask& m, uint32_t* out);
  void barrier(const CStmt& s, LaneMask& m);
  void drop_stopped(LaneMask& m) {
    if (stopped_lanes_)
      m.and_not(stopped_);
  }

  const Launch& launch_;
  const Program& p_;
  uint32_t capacity_ = 0, stride_ = 0, n_ = 0, width_ = 0;
  uint64_t first_ = 0;
  std::unique_ptr<uint64_t[]> regs_; // registers * capacity 64-bit slots
  const LaneMask* mask_ = nullptr;
  LaneMask stopped_, returned_;
  uint32_t stopped_lanes_ = 0;
  MaskStack masks_;
  std::vector<LoopFrame> loops_;
  std::vector<std::vector<std::byte>> shared_;
  std::vector<std::vector<std::byte>> privates_; // capacity_ copies of each, zeroed per batch
  std::vector<std::vector<RaceCell>> races_;
  std::vector<SharedLog> logs_; // per shared array
  // Per barrier site (0: the batch's start) and shared array: whether the last interval that site
  // started wrote the array, so that the next one checks it at once (see shared_access).
  std::vector<uint8_t> eager_;
  uint32_t interval_site_ = 0;
  uint32_t epoch_ = 1;                             // above every SharedLog::dirty at the start (0)
  std::array<std::vector<uint32_t>, 3> local_ids_; // local_id(d) of each local lane index
  std::vector<uint8_t> scratch_;                   // one byte per lane, for loop conditions
  std::vector<uint32_t> elements_;                 // elements()
  std::vector<float> wide_;                        // wide()
  std::vector<std::vector<float>> fixed_wide_;     // fixed_wide(), by register
  std::vector<double> site_lanes_;                 // site_lanes()
  // dot_loop's scratch, allocated only for programs with dot loops: per load and dimension each
  // lane's index at the first two iterations (dot_index_), per load each lane's element at the
  // first iteration (dot_base_) and the change per iteration (dot_delta_), each lane's counter at
  // the first iteration (dot_start_), and per lane a load's change of element (dot_scratch_).
  std::vector<uint32_t> dot_index_, dot_base_, dot_start_, dot_scratch_, dot_delta_;
  std::vector<uint32_t> dot_scratch_loads_;
  uint64_t fused_ = 0;
  std::optional<BatchError> error_;
  ShadowColumns shadow_;
  std::vector<uint32_t> special_lanes_;
  std::vector<AccLane> acc_lanes_;
  std::vector<std::vector<AccLane>> acc_shared_;
  std::vector<AccumulationRecord> acc_records_;
  std::vector<AccLane> acc_scratch_;
  uint64_t ticks_ = 0, flushed_ = 0, poll_at_ = kPollSteps;
  std::unique_ptr<IntervalState> iv_;
};

// Statement actions that touch memory (memory.cpp).
void exec_store(Exec& x, const CStmt& s, const LaneMask& m);
void exec_atomic(Exec& x, const CStmt& s, const LaneMask& m);

} // namespace halfway::interp
