// One differential run: copy the inputs twice, run the reference (with shadow records when single
// rounding holds) and the device, then judge every output element.
#include "elements.hpp"
#include "halfway/diff/compare.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/interp/interp.hpp"
#include "halfway/ir/analysis/accumulation.hpp"
#include "halfway/ir/narrowing.hpp"
#include "halfway/numerics/convert.hpp"
#include "halfway/numerics/formats.hpp"
#include "halfway/policy/policy.hpp"
#include "sites.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace halfway::diff {

namespace {

constexpr size_t kNoRecord = std::numeric_limits<size_t>::max();

// Copies of the argument buffers, one per distinct buffer, so that aliasing survives. With
// `share_inputs`, a buffer that only read-only parameters are bound to is passed as it is: for
// the reference, which the verifier keeps from storing to them (a copy per run of a large input
// cost as much as the rest of a strict diff). The device always gets copies: it is what is under
// test, and a device that writes an input must not change the caller's buffers.
struct Copies {
  std::vector<rt::HostBuffer> buffers;
  std::vector<rt::Arg> args;
  std::map<const rt::HostBuffer*, rt::HostBuffer*> of; // original -> copy

  Copies(const ir::Kernel& k, std::span<const rt::Arg> in, bool share_inputs) {
    std::map<const rt::HostBuffer*, bool> written;
    for (size_t p = 0; p < in.size(); ++p)
      if (in[p].buffer)
        written[in[p].buffer] |= k.params[p].access != ir::Access::Read;
    buffers.reserve(in.size()); // never reallocates: the Args point into it
    for (const rt::Arg& a : in) {
      if (!a.buffer || (share_inputs && !written[a.buffer])) {
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

// Buffers at least this long are judged on several threads.
constexpr uint64_t kParallelElements = uint64_t{1} << 16;

uint64_t comparison_threads(const Options& options) {
  const unsigned n = options.reference_threads ? options.reference_threads
                                               : std::max(1u, std::thread::hardware_concurrency());
  return n;
}

template <class T> void take_max(std::optional<T>& into, const std::optional<T>& v) {
  if (v)
    into = std::max(into.value_or(*v), *v);
}

void take_first(std::vector<Violation>& into, std::vector<Violation>& v, size_t max_shown) {
  for (Violation& x : v)
    if (into.size() < max_shown)
      into.push_back(std::move(x));
}

// Adds the counts of `part` (a later range of the same buffer's elements) to `into`.
void merge(BufferReport& into, BufferReport& part, size_t max_shown) {
  into.exact += part.exact;
  into.within_bound += part.within_bound;
  into.violations += part.violations;
  into.unchecked += part.unchecked;
  into.max_ulps = std::max(into.max_ulps, part.max_ulps);
  into.nan_mismatches += part.nan_mismatches;
  take_first(into.first_violations, part.first_violations, max_shown);
  into.reference_nan += part.reference_nan;
  into.unchanged += part.unchanged;
  into.within_interval += part.within_interval;
  into.undecided += part.undecided;
  take_max(into.max_interval_ratio, part.max_interval_ratio);
  for (size_t k = 0; k < UlpHistogram::kBuckets; ++k)
    into.histogram.counts[k] += part.histogram.counts[k];
  into.histogram.nan_mismatch += part.histogram.nan_mismatch;
  ModelCounts& m = into.models;
  m.elements += part.models.elements;
  for (size_t k = 0; k < interp::kRoundingModels; ++k) {
    m.equal[k] += part.models.equal[k];
    m.first[k] += part.models.first[k];
  }
  m.explained += part.models.explained;
  m.unexplained += part.models.unexplained;
  take_max(m.max_bound_ratio, part.models.max_bound_ratio);
  take_first(m.first_unexplained, part.models.first_unexplained, max_shown);
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

  Copies reference(k, args, true), on_device(k, args, false);
  const std::vector<ir::NarrowingSite> sites = ir::narrowing_sites(k);
  bool barriers = false;
  for (const ir::NarrowingSite& s : sites)
    barriers = barriers || s.needs_barrier();
  interp::Options io;
  io.deterministic = options.deterministic_reference;
  io.threads = options.reference_threads;
  io.controls = report.controls;
  io.narrowing = interp::NarrowingModel::TwoStep;
  const bool accumulates = relaxed && !ir::accumulations(k).empty();
  io.shadow = (single && barriers) || accumulates;
  io.intervals = report.intervals;
  io.profile = device.info().math;
  // The reference run is bounded like the device's launch: the same timeout, the same cancel flag.
  const rt::Cancel cancel = options.launch.make_cancel();
  io.cancel = &cancel;
  // Under single rounding the device runs first, so that the shadow's records are judged where
  // the reference computes them (sites.hpp) instead of being gathered, one per evaluation, for a
  // later pass. An error of the reference still comes first, as when the reference runs first:
  // the device's own error is only thrown once the reference has run (then without a shadow, as
  // nothing will be judged). Otherwise the reference runs first, as it is the one that honours
  // the launch's timeout for certain.
  const bool judged = single && barriers;
  std::optional<rt::LaunchResult> launched;
  std::exception_ptr device_failed;
  if (judged) {
    try {
      launched = device.launch(kernel, grid, on_device.args, options.launch);
    } catch (...) {
      device_failed = std::current_exception();
      io.shadow = false;
    }
  }
  detail::SiteJudge judge(k, sites, judged && !device_failed, args, on_device.args, report.controls,
                          options.exact_models, options.max_shown);
  io.sink = &judge;
  interp::Stats stats = interp::run(kernel, grid, reference.args, io);
  if (device_failed)
    std::rethrow_exception(device_failed);
  if (!launched)
    launched = device.launch(kernel, grid, on_device.args, options.launch);
  if (!(launched->budget == report.budget)) {
    std::string theirs = policy::to_string(launched->budget);
    std::replace(theirs.begin(), theirs.end(), '\n', ';');
    report.notes.push_back("the device generated code under another budget (" + theirs +
                           "): it reads a different policy registry than the checker");
  }

  if (single && !barriers)
    report.notes.push_back("single rounding holds, but every narrowing site is proven innocuous "
                           "(rules 1-2): everything is compared bit for bit");
  for (std::string& note : judge.notes())
    report.notes.push_back(std::move(note));

  const AccumulationDestinations accumulated(args, stats.accumulations);
  if (accumulates)
    report.notes.push_back(
        "relaxed accumulation holds and the kernel has loop-carried accumulations: an element "
        "that differs and was stored from an accumulation local, or from a sum of partial sums "
        "carried through shared memory, is checked against the §5 bound 2*gamma_m*sum|t_k| (+1 "
        "ulp when the store narrows); other elements that differ outside narrowing sites are "
        "counted as unchecked");
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

  // A lane that took a branch or loop the intervals could not decide may, on a device, have taken
  // the other way: stored where the reference's launch stored nothing (`if c { return; }`
  // followed by a store), or stored again over what it stored before the branch (`y[i] = 7; if c
  // { y[i] = 97; }`, campaign 20261205, kernel 1877), at indices the reference never computed. So
  // in a launch with undecided lanes an element that differs is undecided, not a violation,
  // whether the reference's launch stored it or not (the launch is inconclusive already).
  const bool unknown_writes = stats.undecided_lanes > 0;
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
    const uint8_t* site_flags = format ? judge.flags(original) : nullptr;
    const uint32_t* site_stored = site_flags ? judge.stored(original) : nullptr;
    const float* site_ratios = site_flags ? judge.ratios(original) : nullptr;
    const detail::ElementBits want_bits(want), got_bits(got), original_bits(*original);
    const detail::ElementCompare compare(b.type, report.controls);
    std::vector<Verdict> verdicts(options.results ? b.size : 0, Verdict::Exact);
    auto judge_range = [&](uint64_t first, uint64_t last, BufferReport& b) {
      if (site_flags)
        detail::count_same_models(site_flags, first, last, b.models);
      for (uint64_t i = first; i < last; ++i) {
        const uint64_t r = want_bits[i], d = got_bits[i];
        if (r == original_bits[i])
          ++b.unchanged;
        if (format && num::is_nan(*format, r))
          ++b.reference_nan;
        const bool same = compare.same(r, d);
        // What the shadow judged when an unbarriered site stored the element (sites.hpp). A site of
        // another type bounds nothing, and neither does a record whose value a later store (an
        // exact op, or a loose one its interval judges) replaced: bit for bit, or by that interval.
        const uint8_t flags = site_flags ? site_flags[i] : 0;
        const bool stored_by_site = flags & detail::kSiteStored;
        // The record bounds the element when its value is the element's final one: where the
        // judge found the device equal to it (kSiteSame), exactly when the device's element
        // equals the final one; elsewhere when the stored value does.
        const bool site_same = flags & detail::kSiteSame;
        const bool record =
            (flags & detail::kSiteRecord) && (site_same ? same : compare.same(site_stored[i], r));
        // count_same_models counted the elements with kSiteRecord and kSiteSame: it takes back
        // those whose site's result is not the element's final value and counts the others.
        if ((flags & detail::kSiteRecord) && site_same != record)
          detail::add_models(flags, record ? 1 : -1, b.models);
        bool explained = same;
        if (record) {
          const bool matched = flags >= detail::kSiteModels;
          explained = explained || matched;
          if (!same && matched)
            ++b.models.explained;
        }
        if (same) {
          ++b.exact;
          ++b.histogram.counts[0]; // add(0), without a call per element
          continue;
        }
        Bound bound;
        // A site's bound itself is only kept for the elements a report shows (shown() below).
        if (record) {
          bound.kind = Bound::Kind::SingleRounding;
        } else if (accumulates && !stored_by_site) {
          const size_t acc = accumulated.record(original, i);
          if (acc != kNoRecord)
            bound =
                relaxed_accumulation_bound(stats.accumulations[acc], b.type, r, report.controls);
          else
            bound.kind = Bound::Kind::Unchecked;
        }
        // The interval shadow decides elements nothing else bounds.
        bool undecided = false;
        if (bound.kind == Bound::Kind::BitExact && report.intervals && p < stats.intervals.size() &&
            i < stats.intervals[p].size()) {
          const interp::ValueInterval& iv = stats.intervals[p][i];
          if (iv.undecided || unknown_writes) {
            undecided = true;
          } else if (format) {
            bound.kind = Bound::Kind::DevicePrecision;
            bound.lo = num::from_double(*format, iv.lo);
            bound.hi = num::from_double(*format, iv.hi);
          }
        }
        const uint64_t ulps = compare.distance(r, d);
        b.histogram.add(ulps);
        if (ulps == std::numeric_limits<uint64_t>::max())
          ++b.nan_mismatches;
        else
          b.max_ulps = std::max(b.max_ulps, ulps);
        auto shown = [&](const detail::SiteDetail* kept) {
          Violation v{i, inputs_at(k, args, i), r, d, ulps, bound, std::nullopt};
          if (kept) {
            v.models = kept->models;
            if (bound.kind == Bound::Kind::SingleRounding)
              v.bound = kept->bound;
          }
          return v;
        };
        const bool inside = record ? (flags & detail::kSiteInside) != 0
                                   : bound.kind != Bound::Kind::Unchecked &&
                                         accepts(bound, b.type, r, d, report.controls);
        if (bound.kind == Bound::Kind::DevicePrecision)
          if (auto ratio = bound_ratio(bound, *format, r, d, report.controls))
            b.max_interval_ratio = std::max(b.max_interval_ratio.value_or(0), *ratio);
        if (record) {
          if (const float ratio = site_ratios[i]; !std::isnan(ratio))
            b.models.max_bound_ratio =
                std::max(b.models.max_bound_ratio.value_or(0), static_cast<double>(ratio));
          if (!explained && inside) {
            ++b.models.unexplained;
            // The judge kept the lowest indices: it has every one the report shows.
            if (b.models.first_unexplained.size() < options.max_shown)
              if (const detail::SiteDetail* kept = judge.unexplained(original, i))
                b.models.first_unexplained.push_back(shown(kept));
          }
        }
        // With exact models an element at a site passes when a model explains it; otherwise the
        // bound decides.
        bool accepted = record && options.exact_models ? explained : inside;
        // An opt-in's bound (or rounding models) takes the chain's ops as correctly rounded. On a
        // device whose math is looser (the interval shadow runs), an element outside it may still
        // be what the device's documented precision allows (x / 0.0 is undefined on Vulkan): the
        // element's interval decides then. Rounding is monotone, so the interval of the two-step
        // result also holds the single-rounding one.
        // The same for a relaxed accumulation whose terms the device computes within their
        // documented precision: the interval of the strict order, widened on both sides by the
        // accumulation's reordering allowance E (relaxed_accumulation_bound; doubled, since E
        // comes from the reference's terms and the device's terms may differ from them within
        // their intervals), or undecided with it. Without this, opting in to relaxed
        // accumulation turned elements the interval accepts into violations.
        const bool relaxed = bound.kind == Bound::Kind::RelaxedAccumulation;
        if ((record || relaxed) && !accepted && report.intervals && format &&
            p < stats.intervals.size() && i < stats.intervals[p].size()) {
          const interp::ValueInterval& iv = stats.intervals[p][i];
          if (iv.undecided || unknown_writes) {
            undecided = true;
          } else {
            const double widen = relaxed ? 2 * bound.error : 0;
            Bound interval;
            interval.kind = Bound::Kind::DevicePrecision;
            // (The interval's ends are values of the element type; widened ends round outward.)
            interval.lo = num::from_double(
                *format, iv.lo - widen, widen ? num::Rounding::Down : num::Rounding::NearestEven);
            interval.hi = num::from_double(*format, iv.hi + widen,
                                           widen ? num::Rounding::Up : num::Rounding::NearestEven);
            if (accepts(interval, b.type, r, d, report.controls)) {
              bound = interval;
              accepted = true;
            }
          }
        }
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
          if (b.first_violations.size() < options.max_shown) {
            if (!record)
              b.first_violations.push_back(shown(nullptr));
            else if (const detail::SiteDetail* kept = judge.violation(original, i))
              b.first_violations.push_back(shown(kept));
          }
        }
        if (options.results)
          verdicts[i] = verdict;
      }
    };
    // Elements are judged independently: large buffers in chunks on several threads, each
    // counting into its own part, merged in index order (so the lowest violations shown are the
    // same as one pass would keep).
    const uint64_t chunks = b.size < kParallelElements ? 1 : comparison_threads(options);
    std::vector<BufferReport> parts(chunks);
    {
      std::vector<std::thread> threads;
      std::exception_ptr failed;
      std::mutex failed_mutex;
      for (uint64_t c = 0; c < chunks; ++c) {
        auto work = [&, c] {
          try {
            parts[c].type = b.type;
            judge_range(b.size * c / chunks, b.size * (c + 1) / chunks, parts[c]);
          } catch (...) {
            const std::lock_guard lock(failed_mutex);
            failed = std::current_exception();
          }
        };
        if (c + 1 == chunks)
          work();
        else
          threads.emplace_back(work);
      }
      for (std::thread& t : threads)
        t.join();
      if (failed)
        std::rethrow_exception(failed);
    }
    for (BufferReport& part : parts)
      merge(b, part, options.max_shown);
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
