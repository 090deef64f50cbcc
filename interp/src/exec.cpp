// The executor's set-up per launch and per batch, error reporting and the race report; the
// statements themselves are in control.cpp.
#include "exec.hpp"

#include "accum.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/ir/format.hpp"
#include "halfway/ir/printer.hpp"
#include "halfway/numerics/convert.hpp"
#include "interval.hpp"
#include "slots.hpp"

#include <algorithm>
#include <cstring>

namespace halfway::interp {

Exec::Exec(const Launch& launch) : launch_(launch), p_(*launch.program) {
  uint32_t lanes = p_.batch_groups * p_.wg_lanes;
  capacity_ = (lanes + 15) / 16 * 16;
  stride_ = capacity_ * 8;
  regs_.reset(new uint64_t[static_cast<size_t>(p_.registers) * capacity_]());
  stopped_ = LaneMask(capacity_);
  returned_ = LaneMask(capacity_);
  masks_.set_capacity(capacity_);
  scratch_.assign(capacity_, 0);
  elements_.assign(capacity_, 0);
  wide_.assign(size_t{4} * capacity_, 0);
  if (!p_.sites.empty())
    site_lanes_.assign(size_t{kSiteArrays} * capacity_, 0);
  if (!p_.dots.empty()) {
    dot_index_.assign(size_t{p_.dot_loads} * 3 * 2 * capacity_, 0);
    dot_base_.assign(size_t{p_.dot_loads} * capacity_, 0);
    dot_start_.reserve(capacity_);
    dot_scratch_.assign(capacity_, 0);
  }
  const ir::Kernel& k = *p_.kernel;
  for (const ir::SharedArray& s : k.shared) {
    shared_.emplace_back(static_cast<size_t>(s.size) * ir::bytes(s.type));
    races_.emplace_back(s.size);
  }
  logs_.resize(k.shared.size());
  eager_.assign((size_t{p_.barriers} + 1) * k.shared.size(), 0);
  for (const ir::PrivateArray& a : k.privates)
    privates_.emplace_back(size_t{capacity_} * a.size * ir::bytes(a.type));
  for (uint32_t d = 0; d < 3; ++d)
    local_ids_[d].resize(p_.wg_lanes);
  for (uint32_t l = 0; l < p_.wg_lanes; ++l) {
    local_ids_[0][l] = l % k.workgroup[0];
    local_ids_[1][l] = (l / k.workgroup[0]) % k.workgroup[1];
    local_ids_[2][l] = l / (k.workgroup[0] * k.workgroup[1]);
  }
  setup_fixed();
  if (p_.options.intervals)
    iv_ = std::make_unique<IntervalState>(p_, capacity_);
}

Exec::~Exec() = default;

// Constants, scalar parameters, buffer lengths and grid sizes: the same on every lane of every
// batch, so they are written once.
void Exec::setup_fixed() {
  const ir::Kernel& k = *p_.kernel;
  for (const Node& n : p_.nodes) {
    if (p_.cls[n.id] != NodeClass::Fixed)
      continue;
    const ir::Expr& e = *n.expr;
    uint64_t v = 0;
    switch (e.op) {
    case ir::Op::Const:
      v = e.imm;
      break;
    case ir::Op::ParamGet:
      v = ir::truncate_bits(e.type, launch_.scalars[e.ref]);
      break;
    case ir::Op::BufferLen:
      v = static_cast<uint32_t>(launch_.buffers[e.ref].length);
      break;
    case ir::Op::GroupSize:
      v = k.workgroup[e.imm];
      break;
    case ir::Op::NumGroups:
      v = launch_.grid.groups[e.imm];
      break;
    case ir::Op::LocalGet:
    case ir::Op::GlobalId:
    case ir::Op::LocalId:
    case ir::Op::GroupId:
    case ir::Op::Load:
    case ir::Op::Convert:
    case ir::Op::Bitcast:
    case ir::Op::Pack:
    case ir::Op::Unpack:
    case ir::Op::Add:
    case ir::Op::Sub:
    case ir::Op::Mul:
    case ir::Op::Div:
    case ir::Op::Rem:
    case ir::Op::Neg:
    case ir::Op::Abs:
    case ir::Op::Min:
    case ir::Op::Max:
    case ir::Op::Clamp:
    case ir::Op::Fma:
    case ir::Op::Sqrt:
    case ir::Op::Rsqrt:
    case ir::Op::Exp:
    case ir::Op::Exp2:
    case ir::Op::Log:
    case ir::Op::Log2:
    case ir::Op::Sin:
    case ir::Op::Cos:
    case ir::Op::Tan:
    case ir::Op::Tanh:
    case ir::Op::Pow:
    case ir::Op::Erf:
    case ir::Op::Atan2:
    case ir::Op::Atan:
    case ir::Op::Floor:
    case ir::Op::Ceil:
    case ir::Op::Fract:
    case ir::Op::Copysign:
    case ir::Op::Eq:
    case ir::Op::Ne:
    case ir::Op::Lt:
    case ir::Op::Le:
    case ir::Op::Gt:
    case ir::Op::Ge:
    case ir::Op::And:
    case ir::Op::Or:
    case ir::Op::Xor:
    case ir::Op::Not:
    case ir::Op::Shl:
    case ir::Op::Shr:
    case ir::Op::Select:
      break;
    }
    fill_slots(reg<std::byte>(n.reg), slot_bytes(n.type), capacity_, v);
    // f16 and bf16 constants widened once for the ops computed through f32 (eval_float.cpp).
    if (n.type == ir::ScalarType::F16 || n.type == ir::ScalarType::BF16) {
      if (fixed_wide_.size() < p_.registers)
        fixed_wide_.resize(p_.registers);
      const float wide = static_cast<float>(num::to_double(ir::format_of(n.type), v));
      fixed_wide_[n.reg].assign(capacity_, wide);
    }
  }
}

// global_id, local_id and group_id of every lane of the batch: local coordinates come from a
// table made once, group coordinates are computed once per workgroup.
void Exec::setup_lanes() {
  const auto& wg = p_.kernel->workgroup;
  const auto& groups = launch_.grid.groups;
  const uint32_t lanes = p_.wg_lanes;
  for (uint32_t id : p_.lane_nodes) {
    const Node& n = p_.nodes[id];
    const uint32_t d = static_cast<uint32_t>(n.expr->imm);
    const uint32_t* local = local_ids_[d].data();
    uint32_t* r = reg<uint32_t>(n.reg);
    for (uint32_t first = 0; first < n_; first += lanes) {
      const uint64_t g = workgroup_of(first);
      const uint64_t group[3] = {g % groups[0], (g / groups[0]) % groups[1],
                                 g / (uint64_t{groups[0]} * groups[1])};
      const auto base = static_cast<uint32_t>(group[d] * wg[d]);
      uint32_t* out = r + first;
      switch (n.op) {
      case ir::Op::LocalId:
        std::memcpy(out, local, lanes * sizeof(uint32_t));
        break;
      case ir::Op::GroupId:
        std::fill(out, out + lanes, static_cast<uint32_t>(group[d]));
        break;
      case ir::Op::Const:
      case ir::Op::LocalGet:
      case ir::Op::ParamGet:
      case ir::Op::GlobalId:
      case ir::Op::GroupSize:
      case ir::Op::NumGroups:
      case ir::Op::BufferLen:
      case ir::Op::Load:
      case ir::Op::Convert:
      case ir::Op::Bitcast:
      case ir::Op::Pack:
      case ir::Op::Unpack:
      case ir::Op::Add:
      case ir::Op::Sub:
      case ir::Op::Mul:
      case ir::Op::Div:
      case ir::Op::Rem:
      case ir::Op::Neg:
      case ir::Op::Abs:
      case ir::Op::Min:
      case ir::Op::Max:
      case ir::Op::Clamp:
      case ir::Op::Fma:
      case ir::Op::Sqrt:
      case ir::Op::Rsqrt:
      case ir::Op::Exp:
      case ir::Op::Exp2:
      case ir::Op::Log:
      case ir::Op::Log2:
      case ir::Op::Sin:
      case ir::Op::Cos:
      case ir::Op::Tan:
      case ir::Op::Tanh:
      case ir::Op::Pow:
      case ir::Op::Erf:
      case ir::Op::Atan2:
      case ir::Op::Atan:
      case ir::Op::Floor:
      case ir::Op::Ceil:
      case ir::Op::Fract:
      case ir::Op::Copysign:
      case ir::Op::Eq:
      case ir::Op::Ne:
      case ir::Op::Lt:
      case ir::Op::Le:
      case ir::Op::Gt:
      case ir::Op::Ge:
      case ir::Op::And:
      case ir::Op::Or:
      case ir::Op::Xor:
      case ir::Op::Not:
      case ir::Op::Shl:
      case ir::Op::Shr:
      case ir::Op::Select:
        for (uint32_t l = 0; l < lanes; ++l)
          out[l] = base + local[l];
        break;
      }
    }
  }
}

bool Launch::should_stop(uint64_t new_steps) const {
  const Options& o = program->options;
  const uint64_t total = steps.fetch_add(new_steps, std::memory_order_relaxed) + new_steps;
  StopReason reason = stop.load(std::memory_order_relaxed);
  if (reason != StopReason::None)
    return true;
  if (o.cancel && o.cancel->expired())
    reason = StopReason::Cancelled;
  else if (o.max_steps && total > o.max_steps)
    reason = StopReason::Budget;
  else
    return false;
  StopReason none = StopReason::None;
  stop.compare_exchange_strong(none, reason, std::memory_order_relaxed);
  return true;
}

void Exec::poll() {
  const uint64_t fresh = ticks_ - flushed_;
  flushed_ = ticks_;
  poll_at_ = ticks_ + kPollSteps;
  if (launch_.should_stop(fresh))
    throw Stopped{};
}

std::optional<uint64_t> Exec::bytes_needed(const Program& p) {
  uint64_t lanes = uint64_t{p.batch_groups} * p.wg_lanes;
  uint64_t capacity = (lanes + 15) / 16 * 16;
  uint64_t total = 0;
  auto add = [&](uint64_t a, uint64_t b) {
    uint64_t product = 0;
    return !__builtin_mul_overflow(a, b, &product) &&
           !__builtin_add_overflow(total, product, &total);
  };
  // Registers, the masks (a few per nesting level; counted generously) and per-lane tables.
  if (!add(uint64_t{p.registers} + 64, capacity * 8) || !add(capacity, sizeof(uint32_t)) ||
      !add(capacity, 4 * sizeof(float)) ||
      !add(p.sites.empty() ? 0 : capacity, kSiteArrays * sizeof(double)))
    return std::nullopt;
  // Dot loops: the counter's values, the lanes' elements, and per shared array the deferred read
  // log (at most two values per read it stands for, a record per kMinDeferredReads reads).
  if (!p.dots.empty() && (!add(capacity, (size_t{p.dot_loads} * 7 + 3) * sizeof(uint32_t)) ||
                          !add(p.kernel->shared.size(), kMaxLoggedReads * 2 * sizeof(uint32_t) +
                                                            kMaxLoggedReads / kMinDeferredReads *
                                                                sizeof(SharedLog::Deferred))))
    return std::nullopt;
  for (const ir::SharedArray& s : p.kernel->shared)
    if (!add(s.size, ir::bytes(s.type) + sizeof(RaceCell)) ||
        !add(kMaxLoggedReads, 2 * sizeof(uint32_t)))
      return std::nullopt;
  for (const ir::PrivateArray& a : p.kernel->privates)
    if (!add(capacity * a.size, ir::bytes(a.type)))
      return std::nullopt;
  // The interval shadow: an interval per register per lane and per shared element.
  if (p.options.intervals) {
    if (!add(p.registers, capacity * sizeof(ValueInterval)))
      return std::nullopt;
    for (const ir::SharedArray& s : p.kernel->shared)
      if (!add(s.size, sizeof(ValueInterval)))
        return std::nullopt;
    for (const ir::PrivateArray& a : p.kernel->privates)
      if (!add(capacity * a.size, sizeof(ValueInterval)))
        return std::nullopt;
  }
  return total;
}

std::optional<BatchError> Exec::run_batch(uint64_t first, uint32_t count) {
  tick();
  loops_.clear();
  first_ = first;
  n_ = count * p_.wg_lanes;
  width_ = (n_ + 15) / 16 * 16;
  setup_lanes();
  stopped_.reset_empty(n_);
  stopped_lanes_ = 0;
  returned_.reset_empty(n_);
  error_.reset();
  if (p_.accum) {
    acc_lanes_.assign(size_t{capacity_} * p_.accum->locals.size(), AccLane{});
    acc_shared_.resize(p_.accum->shared.size());
    for (size_t i = 0; i < acc_shared_.size(); ++i)
      acc_shared_[i].assign(p_.kernel->shared[p_.accum->shared[i]].size, AccLane{});
  }
  for (auto& s : shared_)
    std::memset(s.data(), 0, s.size());
  // Private arrays start at zero in every lane (specs/ir.md); a batch starts its lanes.
  for (auto& a : privates_)
    std::memset(a.data(), 0, a.size());
  if (iv_)
    iv_->begin_batch(n_);
  new_interval(0);
  ScopedMask all(masks_);
  all.m.reset(n_);
  block(p_.body, all.m);
  if (iv_) {
    uint64_t undecided = 0;
    for (uint32_t i = 0; i < n_; ++i)
      undecided += iv_->lane_undecided()[i];
    launch_.undecided_lanes.fetch_add(undecided, std::memory_order_relaxed);
  }
  return std::move(error_);
}

void Exec::fail(uint32_t lane, ErrorKind kind, const std::string& message, ErrorContext c,
                ir::ExprId node, uint32_t line) {
  if (stopped_[lane])
    return;
  const uint32_t begin = lane / p_.wg_lanes * p_.wg_lanes;
  for (uint32_t i = begin; i < begin + p_.wg_lanes; ++i)
    stopped_.set(i);
  stopped_lanes_ += p_.wg_lanes;
  const uint64_t wg = workgroup_of(lane);
  if (error_ && error_->workgroup <= wg)
    return;
  const ir::Kernel& k = *p_.kernel;
  c.kernel = k.name;
  if (node != ir::kNone) {
    c.node = node;
    c.node_text = ir::print_expr(k, node);
    if (!line)
      line = k.expr(node).line;
  }
  c.line = line;
  c.workgroup = wg;
  c.lane = local_of(lane);
  error_.emplace(BatchError{wg, Error(kind, message, std::move(c))});
}

void Exec::replay(uint32_t id) {
  SharedLog& log = logs_[id];
  std::vector<RaceCell>& cells = races_[id];
  auto read = [&](uint32_t index, uint32_t lane) {
    RaceCell& c = cells[index];
    if (c.epoch != epoch_)
      c = RaceCell{epoch_};
    c.record(SharedAccess::Read, static_cast<int16_t>(lane));
  };
  size_t i = 0;
  for (size_t s = 0; s < log.deferred_used; ++s) {
    const SharedLog::Deferred& d = log.deferred[s];
    for (; i < d.at; ++i)
      read(log.index[i], log.lane[i]);
    for (size_t j = 0; j < d.offsets.size(); j += d.loads)
      for (uint32_t k = 0; k < d.loads; ++k)
        for (uint32_t l = 0; l < d.lanes; ++l)
          read(d.bases[size_t{k} * d.lanes + l] + d.offsets[j + k], l);
  }
  for (; i < log.size; ++i)
    read(log.index[i], log.lane[i]);
  log.size = 0;
  log.generated = 0;
  log.deferred_used = 0;
  log.dirty = epoch_;
}

void Exec::report_race(const RaceCell& c, uint32_t id, uint64_t index, uint32_t lane,
                       SharedAccess kind, ir::ExprId node, uint32_t line) {
  const auto me = static_cast<int16_t>(lane); // one workgroup per batch
  int16_t conflict = c.writer;
  const char* what = "wrote";
  if (!RaceCell::other(conflict, me)) {
    conflict = RaceCell::other_of(c.readers, me);
    what = "read";
    if (conflict < 0 || kind == SharedAccess::Read) {
      conflict = RaceCell::other_of(c.atomics, me);
      what = "updated atomically";
    }
  }
  static constexpr const char* kVerb[] = {"reads", "writes", "updates atomically"};
  const ir::SharedArray& a = p_.kernel->shared[id];
  fail(lane, ErrorKind::DataRace,
       "lane " + std::to_string(conflict) + " " + what + " shared " + a.name + "[" +
           std::to_string(index) + "] and lane " + std::to_string(me) + " " +
           kVerb[static_cast<int>(kind)] + " it with no barrier in between",
       {.buffer = a.name, .index = index, .length = a.size}, node, line);
}

} // namespace halfway::interp
