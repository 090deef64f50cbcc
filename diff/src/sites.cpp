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

void SiteJudge::judge(const interp::ShadowLanes& e, const ir::NarrowingSite& site, Output& out) {
  // A site of another type (stored through a reinterpretation) bounds nothing: bit for bit.
  if (site.to != out.type) {
    for (size_t k = 0; k < e.count; ++k)
      if (const uint64_t i = e.index[k]; i < out.size)
        std::atomic_ref<uint8_t>(out.flags[i]).store(kSiteStored, std::memory_order_relaxed);
    return;
  }
  using interp::RoundingModel;
  static_assert(interp::kRoundingModels == 4);
  const uint32_t *m0 = e.models[0], *m1 = e.models[1], *m2 = e.models[2], *m3 = e.models[3];
  const uint32_t* result =
      e.models[static_cast<size_t>(e.single ? RoundingModel::Single : RoundingModel::TwoStep)];
  const bool fast = out.fast && fast_site_[e.site];
  for (size_t k = 0; k < e.count; ++k) {
    const uint64_t i = e.index[k];
    if (i >= out.size)
      continue;
    uint8_t flags = kSiteStored | kSiteRecord;
    const uint64_t d = (*out.device)[i], ref = result[k];
    // Equal patterns are the same result under every rule of compare.hpp. Where nothing is
    // flushed and zeros, infinities and NaNs are preserved, the only other same result is two
    // NaNs: decided without a branch, since which models equal the device is a coin toss on
    // tie-stressing inputs.
    auto is_nan = [&](uint64_t v) { return (v & out.magnitude_mask) > out.nan_above; };
    const bool d_nan = is_nan(d);
    auto equals_device = [&](uint64_t v) -> bool {
      if (out.nan_only)
        return (v == d) | (d_nan & is_nan(v));
      return v == d || num::same_result(out.format, v, d, controls_);
    };
    flags |= static_cast<uint8_t>((equals_device(m0[k]) ? kSiteModels : 0) |
                                  (equals_device(m1[k]) ? kSiteModels << 1 : 0) |
                                  (equals_device(m2[k]) ? kSiteModels << 2 : 0) |
                                  (equals_device(m3[k]) ? kSiteModels << 3 : 0));
    float ratio = std::numeric_limits<float>::quiet_NaN();
    if (equals_device(ref)) {
      flags |= kSiteSame;
    } else {
      // The generic bound needs the whole record: built only where the fast path cannot decide.
      std::optional<interp::ShadowRecord> r;
      auto record = [&]() -> const interp::ShadowRecord& {
        if (!r)
          r = e.record(k);
        return *r;
      };
      std::optional<Bound> bound;
      bool inside = false;
      const std::optional<FastVerdict> verdict =
          fast ? fast_verdict(out.format, e.exact_hi[k], e.exact_lo[k],
                              skipped_error(kernel_, site, e.product_sum[k], e.exact_hi[k]), ref, d)
               : std::nullopt;
      if (verdict) {
        inside = verdict->inside;
        ratio = ratio_up(verdict->ratio);
      } else {
        bound = single_rounding_bound(kernel_, site, record(), ref, controls_);
        inside = accepts(*bound, out.type, ref, d, controls_);
        if (auto x = bound_ratio(*bound, out.format, ref, d, controls_))
          ratio = ratio_up(*x);
      }
      const bool explained = flags >= kSiteModels;
      if (inside)
        flags |= kSiteInside;
      // What a report shows needs the bound itself: built for the few elements kept.
      auto offer = [&](Shown& shown) {
        if (!shown.wants(i))
          return;
        if (!bound)
          bound = single_rounding_bound(kernel_, site, record(), ref, controls_);
        shown.offer(i, {*bound, record().models});
      };
      if (exact_models_ ? !explained : !inside)
        offer(*out.violations);
      if (!explained && inside)
        offer(*out.unexplained);
    }
    // Relaxed: distinct elements never share a byte, and an element two workgroups store is a
    // race in the kernel itself (either record may win, as either value may).
    std::atomic_ref<float>(out.ratio[i]).store(ratio, std::memory_order_relaxed);
    std::atomic_ref<uint32_t>(out.stored[i])
        .store(static_cast<uint32_t>(ref), std::memory_order_relaxed);
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
