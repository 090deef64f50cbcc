// One differential run: copy the inputs twice, run the reference (with shadow records when single
// rounding holds) and the device, then judge every output element.
#include "halfway/diff/compare.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/formats.hpp"
#include "halfway/policy/policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

namespace halfway::diff {

namespace {

constexpr size_t kNoRecord = std::numeric_limits<size_t>::max();

// Copies of the argument buffers, one per distinct buffer, so that aliasing survives.
struct Copies {
  std::vector<rt::HostBuffer> buffers;
  std::vector<rt::Arg> args;
  std::map<const rt::HostBuffer*, rt::HostBuffer*> of; // original -> copy

  explicit Copies(std::span<const rt::Arg> in) {
    buffers.reserve(in.size()); // never reallocates: the Args point into it
    for (const rt::Arg& a : in) {
      if (!a.buffer) {
        args.push_back(a);
        continue;
      }
      auto it = of.find(a.buffer);
      if (it == of.end()) {
        buffers.push_back(a.buffer->clone());
        it = of.emplace(a.buffer, &buffers.back()).first;
      }
      args.push_back(rt::Arg::of(*it->second));
    }
  }
};

// For each output buffer element, the last shadow record of an unbarriered narrowing site that
// stored to it.
class Destinations {
public:
  Destinations(std::span<const rt::Arg> args, const std::vector<interp::ShadowRecord>& records,
               const std::unordered_map<ir::ExprId, const ir::NarrowingSite*>& barrier_sites,
               std::vector<std::string>& notes) {
    std::map<ir::ExprId, uint64_t> nowhere;
    // Records come in runs of one site and one buffer: remember the last lookups.
    ir::ExprId last_site = ir::kNone;
    bool barriered = false;
    uint32_t last_memory = ir::kNone;
    std::vector<size_t>* slots = nullptr;
    for (size_t r = 0; r < records.size(); ++r) {
      const interp::ShadowRecord& rec = records[r];
      if (rec.site != last_site) {
        last_site = rec.site;
        barriered = barrier_sites.count(rec.site) != 0;
      }
      if (!barriered)
        continue;
      if (!rec.destination || rec.destination->space != ir::Space::Buffer ||
          rec.destination->memory >= args.size() || !args[rec.destination->memory].buffer) {
        ++nowhere[rec.site];
        continue;
      }
      if (rec.destination->memory != last_memory) {
        last_memory = rec.destination->memory;
        const rt::HostBuffer* b = args[last_memory].buffer;
        slots = &last_[b];
        if (slots->empty())
          slots->assign(b->size(), kNoRecord);
      }
      if (rec.destination->index < slots->size())
        (*slots)[rec.destination->index] = r;
    }
    for (auto& [id, count] : nowhere)
      notes.push_back("narrowing site '" + std::string(barrier_sites.at(id)->where) + "' (" +
                      std::to_string(count) +
                      " evaluations) does not store its value directly: what it feeds is compared "
                      "bit for bit, so single rounding there shows up as violations");
  }

  // Per element of `b`, the record index or kNoRecord; null when no record stored to `b`.
  const std::vector<size_t>* records(const rt::HostBuffer* b) const {
    auto it = last_.find(b);
    return it == last_.end() ? nullptr : &it->second;
  }

private:
  std::unordered_map<const rt::HostBuffer*, std::vector<size_t>> last_;
};

// An end of a single-rounding bound as a value (NaN ends as the infinity of their sign).
double bound_end(num::Format f, uint64_t bits) {
  const double v = num::to_double(f, bits);
  if (std::isnan(v))
    return num::sign_bit(f, bits) ? -std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::infinity();
  return v;
}

// |d - r| over the distance from r to the bound's end on d's side (ModelCounts::max_bound_ratio);
// none when either is not a number.
std::optional<double> bound_ratio(const Bound& b, num::Format f, uint64_t reference,
                                  uint64_t device, const num::FloatControls& controls) {
  const double r = num::to_double(f, num::apply_flush(f, reference, controls));
  const double d = num::to_double(f, num::apply_flush(f, device, controls));
  if (!std::isfinite(r) || !std::isfinite(d))
    return std::nullopt;
  const double end = d > r ? bound_end(f, b.hi) : bound_end(f, b.lo);
  const double width = std::fabs(end - r), diff = std::fabs(d - r);
  if (diff == 0)
    return 0.0;
  return width == 0 ? std::numeric_limits<double>::infinity() : diff / width;
}

// For each output buffer element, the last accumulation record whose destination is it (its
// bounded flag says whether it bounds the element's final value).
class AccumulationDestinations {
public:
  AccumulationDestinations(std::span<const rt::Arg> args,
                           const std::vector<interp::AccumulationRecord>& records) {
    for (size_t r = 0; r < records.size(); ++r) {
      const interp::Destination& d = records[r].destination;
      if (d.space != ir::Space::Buffer || d.memory >= args.size() || !args[d.memory].buffer)
        continue;
      const rt::HostBuffer* b = args[d.memory].buffer;
      auto& slots = last_[b];
      if (slots.empty())
        slots.assign(b->size(), kNoRecord);
      if (d.index < slots.size())
        slots[d.index] = r;
    }
  }

  size_t record(const rt::HostBuffer* b, uint64_t index) const {
    auto it = last_.find(b);
    return it == last_.end() ? kNoRecord : it->second[index];
  }

private:
  std::unordered_map<const rt::HostBuffer*, std::vector<size_t>> last_;
};

std::vector<InputValue> inputs_at(const ir::Kernel& k, std::span<const rt::Arg> args,
                                  uint64_t index) {
  std::vector<InputValue> out;
  for (size_t p = 0; p < args.size(); ++p) {
    const ir::Param& param = k.params[p];
    if (!param.is_buffer()) {
      out.push_back({param.name, param.type, args[p].scalar, true});
    } else if (param.access != ir::Access::Write && index < args[p].buffer->size()) {
      out.push_back({param.name, param.type, args[p].buffer->get_bits(index), false});
    }
  }
  return out;
}

void judge_conclusive(const BufferReport& b, const Options& options,
                      std::vector<Inconclusive>& out) {
  auto add = [&](std::string reason) { out.push_back({b.name, std::move(reason)}); };
  if (b.size == 0)
    add("the buffer has no elements: nothing was compared");
  else if (b.reference_nan == b.size)
    add("every element of the reference is NaN, and a NaN matches any NaN");
  else if (b.unchanged == b.size)
    add("the reference left every element as it was before the launch, so equal results prove "
        "nothing (was the grid too small, or a guard never true?)");
  if (b.undecided > options.max_undecided)
    add(std::to_string(b.undecided) +
        " elements differ and their intervals could not be decided (undecided), over the limit "
        "of " +
        std::to_string(options.max_undecided));
  if (b.unchecked > options.max_unchecked)
    add(std::to_string(b.unchecked) +
        " elements differ and nothing bounds them (unchecked), over "
        "the limit of " +
        std::to_string(options.max_unchecked));
}

// Whether the kernel computes a float with an op whose device precision is neither exact nor
// correctly rounded: only then can a device of another math profile differ from the reference.
bool uses_imprecise_math(const ir::Kernel& k) {
  for (const ir::Expr& e : k.exprs) {
    const ir::PrecisionRule rule = ir::info(e.op).device.rule;
    if (ir::is_float(e.type) && rule != ir::PrecisionRule::Exact &&
        rule != ir::PrecisionRule::CorrectlyRounded)
      return true;
  }
  return false;
}

} // namespace

std::vector<interp::RoundingModel> ModelCounts::fits() const {
  std::vector<interp::RoundingModel> out;
  if (elements == 0)
    return out;
  for (interp::RoundingModel m : interp::kAllRoundingModels)
    if (equal[static_cast<size_t>(m)] == elements)
      out.push_back(m);
  return out;
}

uint64_t Report::violations() const {
  uint64_t n = 0;
  for (const BufferReport& b : buffers)
    n += b.violations;
  return n;
}

Report run(const ir::VerifiedKernel& kernel, rt::Device& device, const rt::Grid& grid,
           std::span<const rt::Arg> args, const Options& options) {
  const ir::Kernel& k = kernel.kernel();
  rt::check_args(k, grid, args);
  const policy::Registry& registry =
      options.registry ? *options.registry : policy::global_registry();

  Report report;
  report.kernel = kernel.name();
  report.device = device.name();
  report.groups = grid.groups;
  report.budget = registry.budget(kernel.name());
  report.controls = device.info().controls;
  report.math_precision = std::string(ir::name(device.info().math));
  report.intervals =
      device.info().math != ir::MathProfile::CorrectlyRounded && uses_imprecise_math(k);
  const bool single = report.budget.single_rounding.has_value();
  const bool relaxed = report.budget.relaxed_accumulation.has_value();

  Copies reference(args), on_device(args);
  interp::Options io;
  io.deterministic = options.deterministic_reference;
  io.threads = options.reference_threads;
  io.controls = report.controls;
  io.narrowing = interp::NarrowingModel::TwoStep;
  const bool accumulates = relaxed && !ir::accumulations(k).empty();
  io.shadow = single || accumulates;
  io.intervals = report.intervals;
  io.profile = device.info().math;
  // The reference run is bounded like the device's launch: the same timeout, the same cancel flag.
  const rt::Cancel cancel = options.launch.make_cancel();
  io.cancel = &cancel;
  interp::Stats stats = interp::run(kernel, grid, reference.args, io);
  rt::LaunchResult launched = device.launch(kernel, grid, on_device.args, options.launch);
  if (!(launched.budget == report.budget)) {
    std::string theirs = policy::to_string(launched.budget);
    std::replace(theirs.begin(), theirs.end(), '\n', ';');
    report.notes.push_back("the device generated code under another budget (" + theirs +
                           "): it reads a different policy registry than the checker");
  }

  const std::vector<ir::NarrowingSite> sites = ir::narrowing_sites(k);
  std::unordered_map<ir::ExprId, const ir::NarrowingSite*> barrier_sites;
  for (const ir::NarrowingSite& s : sites)
    if (s.needs_barrier())
      barrier_sites.emplace(s.convert, &s);
  if (single && barrier_sites.empty())
    report.notes.push_back("single rounding holds, but every narrowing site is proven innocuous "
                           "(rules 1-2): everything is compared bit for bit");
  // Shadow records also exist when only relaxed accumulation asked for them: without single
  // rounding they bound nothing.
  const Destinations destinations(args, single ? stats.shadow : std::vector<interp::ShadowRecord>{},
                                  barrier_sites, report.notes);

  const AccumulationDestinations accumulated(args, stats.accumulations);
  if (accumulates)
    report.notes.push_back(
        "relaxed accumulation holds and the kernel has loop-carried accumulations: an element "
        "that differs and was stored from an accumulation local is checked against the §5 bound "
        "2*gamma_m*sum|t_k| (+1 ulp when the store narrows); other elements that differ outside "
        "narrowing sites are counted as unchecked");
  else if (relaxed)
    report.notes.push_back("relaxed accumulation holds, but the kernel has no loop-carried "
                           "accumulation: it changes nothing here");

  report.undecided_lanes = stats.undecided_lanes;
  if (report.intervals)
    report.notes.push_back(
        "the device's math profile is '" + report.math_precision +
        "' and the kernel uses ops it does not round correctly: an element that differs is "
        "checked against the interval its ops' documented precision propagates to "
        "(specs/device-precision.md)");
  if (stats.undecided_lanes > options.max_undecided)
    report.inconclusive.push_back(
        {"(every output)", std::to_string(stats.undecided_lanes) +
                               " lanes took a branch or loop whose condition the intervals could "
                               "not decide, over the limit of " +
                               std::to_string(options.max_undecided)});

  std::map<const rt::HostBuffer*, bool> done;
  for (size_t p = 0; p < args.size(); ++p) {
    const ir::Param& param = k.params[p];
    if (!param.is_buffer() || param.access == ir::Access::Read)
      continue;
    const rt::HostBuffer* original = args[p].buffer;
    if (done[original])
      continue;
    done[original] = true;
    const rt::HostBuffer& want = *reference.of.at(original);
    const rt::HostBuffer& got = *on_device.of.at(original);
    const std::optional<num::Format> format = float_format(param.type);

    BufferReport b;
    b.name = param.name;
    b.param = static_cast<uint32_t>(p);
    b.type = param.type;
    b.size = want.size();
    const std::vector<size_t>* site_records =
        single && format ? destinations.records(original) : nullptr;
    std::vector<Verdict> verdicts(options.results ? b.size : 0, Verdict::Exact);
    for (uint64_t i = 0; i < b.size; ++i) {
      const uint64_t r = want.get_bits(i), d = got.get_bits(i);
      if (r == original->get_bits(i))
        ++b.unchanged;
      if (format && num::is_nan(*format, r))
        ++b.reference_nan;
      const bool same = same_bits(b.type, r, d, report.controls);
      // The element's shadow record, when an unbarriered site of the element's type stored it.
      // A site of another type (stored through a reinterpretation) bounds nothing: bit for bit.
      const interp::ShadowRecord* record = nullptr;
      const ir::NarrowingSite* site = nullptr;
      const bool stored_by_site = site_records && (*site_records)[i] != kNoRecord;
      if (stored_by_site) {
        record = &stats.shadow[(*site_records)[i]];
        site = barrier_sites.at(record->site);
        // A later store that is no site's (an exact op, a loose one judged by its interval) may
        // have overwritten the element: a record whose value is not the element's final value
        // bounds nothing.
        if (site->to != b.type || !same_bits(b.type, record->result_bits, r, report.controls))
          record = nullptr;
      }
      bool explained = same;
      if (record) {
        ++b.models.elements;
        bool matched = false;
        for (size_t m = 0; m < interp::kRoundingModels; ++m)
          if (same_bits(b.type, record->models[m], d, report.controls)) {
            ++b.models.equal[m];
            if (!matched)
              ++b.models.first[m];
            matched = true;
          }
        explained = explained || matched;
        if (!same && matched)
          ++b.models.explained;
      }
      if (same) {
        ++b.exact;
        b.histogram.add(0);
        continue;
      }
      Bound bound;
      if (record) {
        bound = single_rounding_bound(k, *site, *record, r, report.controls);
      } else if (accumulates && !stored_by_site) {
        const size_t acc = accumulated.record(original, i);
        if (acc != kNoRecord)
          bound = relaxed_accumulation_bound(stats.accumulations[acc], b.type, r, report.controls);
        else
          bound.kind = Bound::Kind::Unchecked;
      }
      // The interval shadow decides elements nothing else bounds.
      bool undecided = false;
      if (bound.kind == Bound::Kind::BitExact && report.intervals && p < stats.intervals.size() &&
          i < stats.intervals[p].size()) {
        const interp::ValueInterval& iv = stats.intervals[p][i];
        if (iv.undecided) {
          undecided = true;
        } else if (format) {
          bound.kind = Bound::Kind::DevicePrecision;
          bound.lo = num::from_double(*format, iv.lo);
          bound.hi = num::from_double(*format, iv.hi);
        }
      }
      const uint64_t ulps = distance(b.type, r, d, report.controls);
      b.histogram.add(ulps);
      if (ulps == std::numeric_limits<uint64_t>::max())
        ++b.nan_mismatches;
      else
        b.max_ulps = std::max(b.max_ulps, ulps);
      auto shown = [&] {
        Violation v{i, inputs_at(k, args, i), r, d, ulps, bound, std::nullopt};
        if (record)
          v.models = record->models;
        return v;
      };
      const bool inside =
          bound.kind != Bound::Kind::Unchecked && accepts(bound, b.type, r, d, report.controls);
      if (bound.kind == Bound::Kind::DevicePrecision)
        if (auto ratio = bound_ratio(bound, *format, r, d, report.controls))
          b.max_interval_ratio = std::max(b.max_interval_ratio.value_or(0), *ratio);
      if (record) {
        if (auto ratio = bound_ratio(bound, *format, r, d, report.controls))
          b.models.max_bound_ratio = std::max(b.models.max_bound_ratio.value_or(0), *ratio);
        if (!explained && inside) {
          ++b.models.unexplained;
          if (b.models.first_unexplained.size() < options.max_shown)
            b.models.first_unexplained.push_back(shown());
        }
      }
      // With exact models an element at a site passes when a model explains it; otherwise the
      // bound decides.
      const bool accepted = record && options.exact_models ? explained : inside;
      Verdict verdict = Verdict::Violation;
      if (undecided) {
        ++b.undecided;
        verdict = Verdict::Undecided;
      } else if (bound.kind == Bound::Kind::Unchecked) {
        ++b.unchecked;
        verdict = Verdict::Unchecked;
      } else if (accepted && bound.kind == Bound::Kind::DevicePrecision) {
        ++b.within_interval;
        verdict = Verdict::WithinInterval;
      } else if (accepted) {
        ++b.within_bound;
        verdict = Verdict::WithinBound;
      } else {
        ++b.violations;
        if (b.first_violations.size() < options.max_shown)
          b.first_violations.push_back(shown());
      }
      if (options.results)
        verdicts[i] = verdict;
    }
    if (options.results)
      options.results->push_back({b.name, b.param, want.clone(), got.clone(), std::move(verdicts)});
    judge_conclusive(b, options, report.inconclusive);
    report.buffers.push_back(std::move(b));
  }
  report.inconclusive_accepted = options.accept_inconclusive;
  report.exact_models = options.exact_models;
  return report;
}

} // namespace halfway::diff
