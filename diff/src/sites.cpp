#include "sites.hpp"

#include "fast_bound.hpp"
#include "halfway/diff/compare.hpp"

#include <cmath>
#include <cstdlib>
#include <new>

namespace halfway::diff::detail {

namespace {

// A ratio rounded up into a float, so that the figure is never smaller than the double one.
float ratio_up(double r) {
  auto f = static_cast<float>(r);
  if (static_cast<double>(f) < r)
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

} // namespace

void SiteJudge::Shown::offer(uint64_t index, const SiteDetail& detail) {
  if (cap_ == 0 || index > cutoff_.load(std::memory_order_relaxed))
    return;
  std::lock_guard lock(mutex_);
  items_.insert_or_assign(index, detail);
  if (items_.size() > cap_)
    items_.erase(std::prev(items_.end()));
  if (items_.size() == cap_)
    cutoff_.store(items_.rbegin()->first, std::memory_order_relaxed);
}

const SiteDetail* SiteJudge::Shown::find(uint64_t index) const {
  auto it = items_.find(index);
  return it == items_.end() ? nullptr : &it->second;
}

SiteJudge::SiteJudge(const ir::Kernel& kernel, const std::vector<ir::NarrowingSite>& sites,
                     bool single, std::span<const rt::Arg> args, std::span<const rt::Arg> device,
                     const num::FloatControls& controls, bool exact_models, size_t max_shown)
    : kernel_(kernel), controls_(controls), exact_models_(exact_models),
      barrier_(kernel.exprs.size(), nullptr), fast_site_(kernel.exprs.size(), 0),
      by_param_(args.size(), nullptr), is_buffer_(args.size(), false),
      nowhere_(std::make_unique<std::atomic<uint64_t>[]>(kernel.exprs.size())) {
  bool any = false;
  if (single)
    for (const ir::NarrowingSite& s : sites)
      if (s.needs_barrier()) {
        barrier_[s.convert] = &s;
        const ir::RoundingMode m = kernel.expr(s.convert).rounding;
        fast_site_[s.convert] = s.from == ir::ScalarType::F32 &&
                                m != ir::RoundingMode::TowardZero && m != ir::RoundingMode::Up &&
                                m != ir::RoundingMode::Down;
        any = true;
      }
  for (size_t p = 0; p < args.size(); ++p) {
    const ir::Param& param = kernel.params[p];
    if (!param.is_buffer() || !args[p].buffer)
      continue;
    is_buffer_[p] = true;
    if (!any || param.access == ir::Access::Read || !float_format(param.type))
      continue;
    std::unique_ptr<Output>& out = outputs_[args[p].buffer];
    if (!out) {
      out = std::make_unique<Output>();
      out->type = param.type;
      out->format = *float_format(param.type);
      out->nan_only = !num::flushes(out->format, controls) && controls.preserve_signed_zero_inf_nan;
      out->fast =
          out->nan_only && (out->format == num::Format::F16 || out->format == num::Format::BF16 ||
                            out->format == num::Format::F32);
      const num::FormatInfo& info = num::info(out->format);
      out->magnitude_mask = info.sign_mask - 1; // the sign is the top bit
      out->nan_above = info.has_inf ? info.exp_mask : info.max_finite;
      out->size = args[p].buffer->size();
      out->device.emplace(*device[p].buffer);
      // Zeroed pages from calloc: the workers fault them in where they judge, in parallel. The
      // ratio and stored value of an element are only read once its flags say a record wrote
      // them, so they start uninitialised.
      out->flags.reset(static_cast<uint8_t*>(std::calloc(out->size, 1)));
      if (!out->flags && out->size)
        throw std::bad_alloc();
      out->ratio = std::make_unique_for_overwrite<float[]>(out->size);
      out->stored = std::make_unique_for_overwrite<uint32_t[]>(out->size);
      out->violations = std::make_unique<Shown>(max_shown);
      out->unexplained = std::make_unique<Shown>(max_shown);
    }
    by_param_[p] = out.get();
  }
}

// The elements the fast verdict cannot decide, and those a report may show (which need the
// bound itself): the lane's record, the generic bound, and the offers. Out of line, so that the
// judge's loop does not set up a record and a bound for every element.
__attribute__((noinline)) void SiteJudge::bound_and_offer(const interp::ShadowLanes& e, size_t k,
                                                          const ir::NarrowingSite& site,
                                                          Output& out, uint64_t ref, uint64_t d,
                                                          bool explained, uint8_t& flags,
                                                          float& ratio, bool decided) {
  const uint64_t i = e.index[k];
  const interp::ShadowRecord r = e.record(k);
  const Bound bound = single_rounding_bound(kernel_, site, r, ref, controls_);
  if (!decided) {
    if (accepts(bound, out.type, ref, d, controls_))
      flags |= kSiteInside;
    if (auto x = bound_ratio(bound, out.format, ref, d, controls_))
      ratio = ratio_up(*x);
  }
  const bool inside = flags & kSiteInside;
  if (exact_models_ ? !explained : !inside)
    out.violations->offer(i, {bound, r.models});
  if (!explained && inside)
    out.unexplained->offer(i, {bound, r.models});
}

void SiteJudge::judge(const interp::ShadowLanes& e, const ir::NarrowingSite& site, Output& out) {
  // A site of another type (stored through a reinterpretation) bounds nothing: bit for bit.
  if (site.to != out.type) {
    for (size_t k = 0; k < e.count; ++k)
      if (const uint64_t i = e.index[k]; i < out.size)
        std::atomic_ref<uint8_t>(out.flags[i]).store(kSiteStored, std::memory_order_relaxed);
    return;
  }
  // A float of at most 32 bits (the widest narrowing target).
  switch (num::info(out.format).total_bits) {
  case 8:
    return judge_as<uint8_t>(e, site, out);
  case 16:
    return judge_as<uint16_t>(e, site, out);
  default:
    return judge_as<uint32_t>(e, site, out);
  }
}

template <class Element>
void SiteJudge::judge_as(const interp::ShadowLanes& e, const ir::NarrowingSite& site, Output& out) {
  using interp::RoundingModel;
  static_assert(interp::kRoundingModels == 4);
  const uint32_t *m0 = e.models[0], *m1 = e.models[1], *m2 = e.models[2], *m3 = e.models[3];
  const uint32_t* result =
      e.models[static_cast<size_t>(e.single ? RoundingModel::Single : RoundingModel::TwoStep)];
  const bool fast = out.fast && fast_site_[e.site];
  const uint32_t magnitude_mask = static_cast<uint32_t>(out.magnitude_mask);
  const uint32_t nan_above = static_cast<uint32_t>(out.nan_above);
  const bool nan_only = out.nan_only;
  for (size_t k = 0; k < e.count; ++k) {
    const uint64_t i = e.index[k];
    if (i >= out.size)
      continue;
    uint8_t flags = kSiteStored | kSiteRecord;
    const uint32_t d = out.device->read<Element>(i), ref = result[k];
    // Equal patterns are the same result under every rule of compare.hpp. Where nothing is
    // flushed and zeros, infinities and NaNs are preserved, the only other same result is two
    // NaNs: decided without a branch, since which models equal the device is a coin toss on
    // tie-stressing inputs.
    auto is_nan = [&](uint32_t v) { return (v & magnitude_mask) > nan_above; };
    const bool d_nan = is_nan(d);
    auto equals_device = [&](uint32_t v) -> bool {
      if (nan_only)
        return (v == d) | (d_nan & is_nan(v));
      return v == d || num::same_result(out.format, v, d, controls_);
    };
    flags |= static_cast<uint8_t>((equals_device(m0[k]) ? kSiteModels : 0) |
                                  (equals_device(m1[k]) ? kSiteModels << 1 : 0) |
                                  (equals_device(m2[k]) ? kSiteModels << 2 : 0) |
                                  (equals_device(m3[k]) ? kSiteModels << 3 : 0));
    // Relaxed stores: distinct elements never share a byte, and an element two workgroups store
    // is a race in the kernel itself (either evaluation may win, as either value may).
    if (equals_device(ref)) {
      // Neither the ratio nor the stored value is read for such an element (flags()).
      std::atomic_ref<uint8_t>(out.flags[i]).store(flags | kSiteSame, std::memory_order_relaxed);
      continue;
    }
    float ratio = std::numeric_limits<float>::quiet_NaN();
    const std::optional<FastVerdict> verdict =
        fast ? fast_verdict(out.format, e.exact_hi[k], e.exact_lo[k],
                            skipped_error(kernel_, site, e.product_sum[k], e.exact_hi[k]), ref, d)
             : std::nullopt;
    const bool explained = flags >= kSiteModels;
    if (verdict) {
      ratio = ratio_up(verdict->ratio);
      if (verdict->inside)
        flags |= kSiteInside;
      const bool violation = exact_models_ ? !explained : !verdict->inside;
      if ((violation && out.violations->wants(i)) ||
          (!explained && verdict->inside && out.unexplained->wants(i)))
        bound_and_offer(e, k, site, out, ref, d, explained, flags, ratio, true);
    } else {
      bound_and_offer(e, k, site, out, ref, d, explained, flags, ratio, false);
    }
    std::atomic_ref<float>(out.ratio[i]).store(ratio, std::memory_order_relaxed);
    std::atomic_ref<uint32_t>(out.stored[i]).store(ref, std::memory_order_relaxed);
    std::atomic_ref<uint8_t>(out.flags[i]).store(flags, std::memory_order_relaxed);
  }
}

void SiteJudge::take(std::span<const interp::ShadowLanes> evaluations) {
  for (const interp::ShadowLanes& e : evaluations) {
    const ir::NarrowingSite* site = e.site < barrier_.size() ? barrier_[e.site] : nullptr;
    if (!site || e.count == 0)
      continue;
    if (!e.stored || e.space != ir::Space::Buffer || e.memory >= is_buffer_.size() ||
        !is_buffer_[e.memory]) {
      nowhere_[e.site].fetch_add(e.count, std::memory_order_relaxed);
      continue;
    }
    if (Output* out = by_param_[e.memory])
      judge(e, *site, *out);
  }
}

const SiteJudge::Output* SiteJudge::output(const rt::HostBuffer* b) const {
  auto it = outputs_.find(b);
  return it == outputs_.end() ? nullptr : it->second.get();
}

const uint8_t* SiteJudge::flags(const rt::HostBuffer* b) const {
  const Output* out = output(b);
  return out ? out->flags.get() : nullptr;
}

const float* SiteJudge::ratios(const rt::HostBuffer* b) const {
  const Output* out = output(b);
  return out ? out->ratio.get() : nullptr;
}

const uint32_t* SiteJudge::stored(const rt::HostBuffer* b) const {
  const Output* out = output(b);
  return out ? out->stored.get() : nullptr;
}

const SiteDetail* SiteJudge::violation(const rt::HostBuffer* b, uint64_t index) const {
  return output(b)->violations->find(index);
}

const SiteDetail* SiteJudge::unexplained(const rt::HostBuffer* b, uint64_t index) const {
  return output(b)->unexplained->find(index);
}

std::vector<std::string> SiteJudge::notes() const {
  std::vector<std::string> out;
  for (size_t id = 0; id < barrier_.size(); ++id) {
    const uint64_t count = nowhere_[id].load();
    if (barrier_[id] && count)
      out.push_back("narrowing site '" + std::string(barrier_[id]->where) + "' (" +
                    std::to_string(count) +
                    " evaluations) does not store its value directly: what it feeds is compared "
                    "bit for bit, so single rounding there shows up as violations");
  }
  return out;
}

} // namespace halfway::diff::detail
